#include "base/util/tcp_probe.hpp"

#include "base/util/unique_fd.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace ascend_setup {

namespace {

constexpr const char* kNoAnswer = "no answer within the probe's time";

// A lookup's outcome: its addresses (freed with freeaddrinfo), or why none.
struct Lookup {
  std::size_t endpoint = 0;
  addrinfo* found = nullptr;
  std::string why;
};

// What the lookup threads share with the probe, kept alive by the threads
// after the probe returned: the names still to look up, the lookups done
// and not yet taken, and an eventfd counting them (the probe polls it).
struct LookupQueue {
  NameLookup lookup;
  std::vector<std::pair<std::size_t, TcpEndpoint>> names;
  std::mutex mutex;
  std::size_t next = 0;
  std::vector<Lookup> done;
  bool abandoned = false;  // the probe returned: a late lookup frees its own
  UniqueFd wakeup{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};

  ~LookupQueue() {
    for (const Lookup& lookup : done) {
      if (lookup.found != nullptr) {
        ::freeaddrinfo(lookup.found);
      }
    }
  }
};

addrinfo stream_hints(int flags) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  return hints;
}

void look_up_names(const std::shared_ptr<LookupQueue>& queue) {
  for (;;) {
    std::pair<std::size_t, TcpEndpoint> name;
    {
      const std::lock_guard lock(queue->mutex);
      if (queue->next == queue->names.size()) {
        return;
      }
      name = queue->names[queue->next++];
    }
    Lookup outcome{name.first, nullptr, {}};
    const addrinfo hints = stream_hints(0);
    const std::string port = std::to_string(name.second.port);
    if (const int status =
            queue->lookup(name.second.host.c_str(), port.c_str(), &hints, &outcome.found);
        status != 0) {
      outcome = {name.first, nullptr, ::gai_strerror(status)};
    }
    {
      const std::lock_guard lock(queue->mutex);
      if (queue->abandoned) {
        if (outcome.found != nullptr) {
          ::freeaddrinfo(outcome.found);
        }
        continue;
      }
      queue->done.push_back(outcome);
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(queue->wakeup.get(), &one, sizeof one);
  }
}

// One endpoint's connects: each of its addresses in turn until one answers.
struct Attempt {
  addrinfo* addresses = nullptr;  // owned
  const addrinfo* next = nullptr;
  UniqueFd socket;                 // the connect in flight
  std::optional<std::string> why;  // set once finished ("" answered)
  std::string last_failure = "no address";

  ~Attempt() {
    if (addresses != nullptr) {
      ::freeaddrinfo(addresses);
    }
  }

  // Starts connects from `next` on until one is in flight or answered, or
  // none is left.
  void connect_next() {
    socket.reset();
    for (; next != nullptr; next = next->ai_next) {
      const addrinfo& address = *next;
      socket.reset(::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            address.ai_protocol));
      if (!socket) {
        last_failure = std::strerror(errno);
        continue;
      }
      if (::connect(socket.get(), address.ai_addr, address.ai_addrlen) == 0) {
        why = "";
        socket.reset();
        return;
      }
      if (errno == EINPROGRESS) {
        next = next->ai_next;
        return;
      }
      last_failure = std::strerror(errno);
      socket.reset();
    }
    why = last_failure;
  }

  void addresses_found(addrinfo* found) {
    addresses = found;
    next = found;
    connect_next();
  }

  // The socket in flight is ready: answered, or refused (then the next address).
  void connect_done() {
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(socket.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
      error = errno;
    }
    if (error == 0) {
      why = "";
      socket.reset();
      return;
    }
    last_failure = std::strerror(error);
    connect_next();
  }
};

}  // namespace

std::vector<std::string> probe_tcp_endpoints(const std::vector<TcpEndpoint>& endpoints,
                                             std::chrono::milliseconds timeout,
                                             const NameLookup& lookup) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<Attempt> attempts(endpoints.size());
  auto queue = std::make_shared<LookupQueue>();
  queue->lookup = lookup;
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    // An address literal is parsed here; a name waits for a lookup thread.
    const addrinfo hints = stream_hints(AI_NUMERICHOST);
    const std::string port = std::to_string(endpoints[i].port);
    addrinfo* found = nullptr;
    const int status = ::getaddrinfo(endpoints[i].host.c_str(), port.c_str(), &hints, &found);
    if (status == 0) {
      attempts[i].addresses_found(found);
    } else if (status == EAI_NONAME) {
      queue->names.emplace_back(i, endpoints[i]);
    } else {
      attempts[i].why = ::gai_strerror(status);
    }
  }
  const std::size_t threads = std::min(kTcpProbeLookupThreads, queue->names.size());
  for (std::size_t i = 0; i < threads; ++i) {
    std::thread(look_up_names, queue).detach();
  }

  for (;;) {
    std::vector<pollfd> polled{{queue->wakeup.get(), POLLIN, 0}};
    std::vector<std::size_t> polled_attempts;
    bool pending_lookups = false;
    for (std::size_t i = 0; i < attempts.size(); ++i) {
      if (attempts[i].socket) {
        polled.push_back({attempts[i].socket.get(), POLLOUT, 0});
        polled_attempts.push_back(i);
      } else if (!attempts[i].why) {
        pending_lookups = true;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if ((polled_attempts.empty() && !pending_lookups) || left.count() <= 0) {
      break;
    }
    if (::poll(polled.data(), polled.size(), static_cast<int>(left.count())) < 0) {
      continue;  // EINTR: the deadline decides
    }
    for (std::size_t k = 0; k < polled_attempts.size(); ++k) {
      if (polled[k + 1].revents != 0) {
        attempts[polled_attempts[k]].connect_done();
      }
    }
    if (polled[0].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t drained = ::read(queue->wakeup.get(), &count, sizeof count);
      std::vector<Lookup> done;
      {
        const std::lock_guard lock(queue->mutex);
        done.swap(queue->done);
      }
      for (const Lookup& outcome : done) {
        if (outcome.found != nullptr) {
          attempts[outcome.endpoint].addresses_found(outcome.found);
        } else {
          attempts[outcome.endpoint].why = outcome.why;
        }
      }
    }
  }
  {
    const std::lock_guard lock(queue->mutex);
    queue->abandoned = true;
  }
  std::vector<std::string> why;
  for (const Attempt& attempt : attempts) {
    why.push_back(attempt.why.value_or(kNoAnswer));
  }
  return why;
}

}  // namespace ascend_setup
