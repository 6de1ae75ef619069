// Whether TCP services answer: one connect to each endpoint, all at once,
// the whole probe bounded by one timeout. Used for the distcc hosts and the
// compile cache's server before a build, so that a host that is down costs
// one bounded wait instead of a timeout per compile. The connects are
// non-blocking, all in one poll() of the calling thread; the name lookups
// (getaddrinfo blocks) run on at most kTcpProbeLookupThreads threads, so that
// a slow lookup holds up no other and a long host list starts no thread per
// host. An address literal needs no lookup.
#pragma once

#include <netdb.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ascend_setup {

struct TcpEndpoint {
  std::string host;  // a name or an address (IPv6 without brackets)
  int port = 0;
};

inline constexpr std::size_t kTcpProbeLookupThreads = 8;

// A name lookup as getaddrinfo() does it (the probe's; a test's stand-in).
using NameLookup =
    std::function<int(const char* host, const char* port, const addrinfo* hints, addrinfo** found)>;

// For each endpoint, "" when a connect to it succeeded within `timeout` (its
// name lookup included), else why not ("Connection refused", "no answer
// within the probe's time", a lookup error). A lookup still running at the
// deadline is left to finish on its own thread, its endpoint counted as down.
std::vector<std::string> probe_tcp_endpoints(const std::vector<TcpEndpoint>& endpoints,
                                             std::chrono::milliseconds timeout,
                                             const NameLookup& lookup = ::getaddrinfo);

}  // namespace ascend_setup
