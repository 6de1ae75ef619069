#include "base/util/tcp_probe.hpp"

#include "base/util/unique_fd.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace ascend_setup {

namespace {

// The probes' shared state: each host's outcome ("" up, else why not;
// nullopt while its probe runs).
struct ProbeState {
  std::mutex mutex;
  std::condition_variable done;
  std::vector<std::optional<std::string>> results;
  size_t pending = 0;
};

// Connects to one address until `deadline`: "" when it answered, else why not.
std::string connect_once(const addrinfo& address, std::chrono::steady_clock::time_point deadline) {
  const UniqueFd socket(::socket(
      address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address.ai_protocol));
  const int fd = socket.get();
  if (!socket) {
    return std::strerror(errno);
  }
  std::string why;
  if (::connect(fd, address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      why = std::strerror(errno);
    } else {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd poll_fd{fd, POLLOUT, 0};
      const int ready = ::poll(&poll_fd, 1, static_cast<int>(std::max<long>(0, left.count())));
      int error = 0;
      socklen_t length = sizeof(error);
      if (ready == 0) {
        why = "no answer within the probe's time";
      } else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
        why = std::strerror(errno);
      } else if (error != 0) {
        why = std::strerror(error);
      }
    }
  }
  return why;
}

std::string probe_one(const TcpEndpoint& host, std::chrono::steady_clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(host.port);
  if (const int status = ::getaddrinfo(host.host.c_str(), port.c_str(), &hints, &found);
      status != 0) {
    return ::gai_strerror(status);
  }
  std::string why = "no address";
  for (const addrinfo* address = found; address != nullptr; address = address->ai_next) {
    why = connect_once(*address, deadline);
    if (why.empty()) {
      break;
    }
  }
  ::freeaddrinfo(found);
  return why;
}

}  // namespace

std::vector<std::string> probe_tcp_endpoints(const std::vector<TcpEndpoint>& endpoints,
                                             std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The state is shared: a thread outliving the wait writes into it safely.
  auto state = std::make_shared<ProbeState>();
  state->results.resize(endpoints.size());
  for (size_t i = 0; i < endpoints.size(); ++i) {
    ++state->pending;
    std::thread([state, i, endpoint = endpoints[i], deadline] {
      std::string outcome = probe_one(endpoint, deadline);
      const std::lock_guard lock(state->mutex);
      state->results[i] = std::move(outcome);
      --state->pending;
      state->done.notify_all();
    }).detach();
  }
  std::unique_lock lock(state->mutex);
  state->done.wait_until(lock, deadline + std::chrono::milliseconds(50),
                         [&] { return state->pending == 0; });
  std::vector<std::string> why;
  for (const auto& result : state->results) {
    why.push_back(result.value_or("no answer within the probe's time"));
  }
  return why;
}

}  // namespace ascend_setup
