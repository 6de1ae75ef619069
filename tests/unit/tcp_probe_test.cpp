// The bounded probe of TCP services against real sockets on loopback, and
// its name lookups against a stand-in that holds them.
#include "base/util/tcp_probe.hpp"

#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>

using namespace ascend_setup;
using namespace test_support;

namespace {

constexpr const char* kNoAnswer = "no answer within the probe's time";

// Lookups that wait until the test releases them, then fail.
struct HeldLookups {
  std::mutex mutex;
  std::condition_variable released_changed;
  bool released = false;
  int started = 0;

  static NameLookup of(const std::shared_ptr<HeldLookups>& held) {
    return [held](const char*, const char*, const addrinfo*, addrinfo** found) {
      std::unique_lock lock(held->mutex);
      ++held->started;
      held->released_changed.wait(lock, [&] { return held->released; });
      *found = nullptr;
      return EAI_AGAIN;
    };
  }
  void release() {
    const std::lock_guard lock(mutex);
    released = true;
    released_changed.notify_all();
  }
};

std::size_t threads_of_this_process() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

TEST(TcpProbe, AListenerAnswersAClosedPortRefusesAndANameIsLookedUp) {
  const TcpListener listener;
  const int closed = free_port();
  const auto why = probe_tcp_endpoints(
      {{"127.0.0.1", listener.port()}, {"127.0.0.1", closed}, {"localhost", listener.port()}},
      std::chrono::seconds(30));
  EXPECT_EQ(why, (std::vector<std::string>{"", "Connection refused", ""}));
}

// A lookup that never ends holds up no other endpoint, and ends the probe
// at its deadline.
TEST(TcpProbe, AHangingLookupHoldsUpNoOtherEndpoint) {
  const TcpListener listener;
  auto held = std::make_shared<HeldLookups>();
  const auto why = probe_tcp_endpoints({{"stuck.invalid", 1}, {"127.0.0.1", listener.port()}},
                                       std::chrono::milliseconds(300), HeldLookups::of(held));
  EXPECT_EQ(why, (std::vector<std::string>{kNoAnswer, ""}));
  held->release();
}

// A long host list (a CI's distcc cluster) starts a bounded number of
// lookup threads, not one per host: counted while every lookup is held, so
// no thread can have ended.
TEST(TcpProbe, ALongHostListStartsABoundedNumberOfLookupThreads) {
  auto held = std::make_shared<HeldLookups>();
  std::vector<TcpEndpoint> hosts;
  for (int i = 0; i < 40; ++i) {
    hosts.push_back({"host-" + std::to_string(i) + ".invalid", 3632});
  }
  const long before = static_cast<long>(threads_of_this_process());
  const auto why =
      probe_tcp_endpoints(hosts, std::chrono::milliseconds(200), HeldLookups::of(held));
  const long grown = static_cast<long>(threads_of_this_process()) - before;
  // Each of the bounded threads took one name and waits in its lookup.
  EXPECT_TRUE(wait_until([&] {
    const std::lock_guard lock(held->mutex);
    return held->started == static_cast<int>(kTcpProbeLookupThreads);
  }));
  held->release();
  EXPECT_EQ(why, std::vector<std::string>(hosts.size(), kNoAnswer));
  EXPECT_LE(grown, static_cast<long>(kTcpProbeLookupThreads));
}

}  // namespace
