// Whether TCP services answer: one connect to each endpoint, all at once (a
// thread each, so that a slow name lookup holds up no other), the whole probe
// bounded by one timeout. Used for the distcc hosts and the compile cache's
// server before a build, so that a host that is down costs one bounded wait
// instead of a timeout per compile.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ascend_setup {

struct TcpEndpoint {
  std::string host;  // a name or an address (IPv6 without brackets)
  int port = 0;
};

// For each endpoint, "" when a connect to it succeeded within `timeout` (its
// name lookup included), else why not ("Connection refused", "no answer
// within the probe's time", a lookup error). A thread still in getaddrinfo at
// the deadline is left to finish on its own, its endpoint counted as down.
std::vector<std::string> probe_tcp_endpoints(const std::vector<TcpEndpoint>& endpoints,
                                             std::chrono::milliseconds timeout);

}  // namespace ascend_setup
