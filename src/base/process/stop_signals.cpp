#include "base/process/stop_signals.hpp"

#include "base/process/descendants.hpp"
#include "base/util/error.hpp"

#include <pthread.h>
#include <semaphore.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ascend_setup {

namespace {

constexpr std::array stop_signals = {SIGINT, SIGTERM, SIGHUP};
constexpr auto grace = std::chrono::seconds(3);

// Sent by the stopper thread to the threads in a blocking call that a stop
// must end (StopWakesThisThread); its handler does nothing, and without
// SA_RESTART the call returns EINTR.
constexpr int wake_signal = SIGURG;
constexpr auto wake_interval = std::chrono::milliseconds(100);
constexpr int wake_rounds = 6000;  // 10 minutes at most

volatile std::sig_atomic_t received = 0;
std::mutex woken_mutex;
std::vector<pthread_t> woken_threads;  // guarded by woken_mutex
std::atomic<void (*)()> stop_hook{nullptr};
// Lock-free, so that the handler may read it: 0 marks a free slot.
std::array<std::atomic<int>, 512> child_groups{};
// The handler posts it (async-signal-safe); the stopper thread waits on it.
sem_t stopper_wakeup;
std::once_flag stopper_started;

// Ends every descendant, however it was started (os.system, a double fork):
// the main thread may be blocked waiting for one of them, so this cannot wait
// for the run to unwind. It reaps nothing: Python's subprocess waits for its
// own children.
void stopper() {
  for (;;) {
    while (::sem_wait(&stopper_wakeup) != 0) {
    }
    stop_descendants(grace, /*reap=*/false);
    // A thread that entered its blocking call after the stop signal came
    // (the signal's EINTR went to an earlier call) is woken until it leaves,
    // and so is one that registers after this loop began: the loop does not
    // end when none is registered, or a thread registering a moment later
    // would block for good.
    for (int round = 0; round < wake_rounds; ++round) {
      if (::sem_trywait(&stopper_wakeup) == 0) {
        stop_descendants(grace, /*reap=*/false);  // another stop signal came
      }
      {
        const std::lock_guard lock(woken_mutex);
        for (const pthread_t thread : woken_threads) {
          ::pthread_kill(thread, wake_signal);
        }
      }
      std::this_thread::sleep_for(wake_interval);
    }
  }
}

void on_wake_signal(int) {}

void on_stop_signal(int number) {
  const int saved_errno = errno;
  if (received == 0) {
    received = number;
  }
  for (auto& slot : child_groups) {
    const int group = slot.load();
    if (group > 0) {
      ::kill(-group, SIGTERM);
    }
  }
  if (auto hook = stop_hook.load()) {
    hook();
  }
  ::sem_post(&stopper_wakeup);
  errno = saved_errno;
}

bool group_exists(int group) { return ::kill(-group, 0) == 0 || errno == EPERM; }

}  // namespace

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int number : stop_signals) {
    sigaddset(&set, number);
  }
  return set;
}

StopSignalsBlocked::StopSignalsBlocked() {
  const sigset_t set = stop_signal_set();
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

StopSignalsBlocked::~StopSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void install_stop_signal_handlers() {
  // Blocked while the handlers change (the launcher execs with them blocked,
  // so one that came before is pending now), then unblocked: a pending one
  // reaches the handler at once.
  const sigset_t set = stop_signal_set();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::call_once(stopper_started, [] {
    become_subreaper();
    ::sem_init(&stopper_wakeup, 0, 0);
    // Started with the stop signals blocked: they go to the main thread.
    std::thread(stopper).detach();
  });
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR
  for (int number : stop_signals) {
    struct sigaction current {};
    if (::sigaction(number, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
      continue;
    }
    ::sigaction(number, &action, nullptr);
  }
  struct sigaction wake {};
  wake.sa_handler = on_wake_signal;
  sigemptyset(&wake.sa_mask);
  wake.sa_flags = 0;  // no SA_RESTART either
  ::sigaction(wake_signal, &wake, nullptr);
  // A child stopped while we write to its stdin (git apply's patch text)
  // must not kill this run with SIGPIPE (exit 141, the scratch directory
  // left): the write fails with EPIPE and the stop decides the exit code, as
  // once Python starts (it ignores SIGPIPE too). Children get it back
  // (process.cpp, subprocess's restore_signals).
  ::signal(SIGPIPE, SIG_IGN);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void block_stop_signals() {
  const sigset_t set = stop_signal_set();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int pending_stop_signal() {
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  for (int number : stop_signals) {
    if (sigismember(&pending, number) == 1) {
      return number;
    }
  }
  return 0;
}

int stop_signal() { return received; }

int stopped_exit_code() { return 128 + (received != 0 ? received : SIGINT); }

void throw_if_stopped() {
  if (received != 0) {
    const char* name = sigabbrev_np(received);
    throw Error::stopped(std::string("interrupted by SIG") + (name ? name : "?"),
                         stopped_exit_code());
  }
}

StopWakesThisThread::StopWakesThisThread() : thread_(::pthread_self()) {
  sigset_t wake;
  sigemptyset(&wake);
  sigaddset(&wake, wake_signal);
  ::pthread_sigmask(SIG_UNBLOCK, &wake, &previous_);
  const std::lock_guard lock(woken_mutex);
  woken_threads.push_back(thread_);
}

StopWakesThisThread::~StopWakesThisThread() {
  {
    const std::lock_guard lock(woken_mutex);
    const auto found = std::find(woken_threads.begin(), woken_threads.end(), thread_);
    if (found != woken_threads.end()) {
      woken_threads.erase(found);
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void set_stop_hook(void (*hook)()) {
  stop_hook.store(hook);
  // A stop that came before the hook still reaches it.
  if (hook != nullptr && received != 0) {
    hook();
  }
}

void register_child_group(int pgid) {
  // Groups that ended free their slot first; a stop that came before the
  // registration still reaches the new group.
  for (auto& slot : child_groups) {
    int group = slot.load();
    if (group > 0 && !group_exists(group)) {
      slot.compare_exchange_strong(group, 0);
    }
  }
  for (auto& slot : child_groups) {
    int expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) {
      break;
    }
  }
  if (received != 0) {
    ::kill(-pgid, SIGTERM);
  }
}

void forget_child_group(int pgid) {
  for (auto& slot : child_groups) {
    int expected = pgid;
    slot.compare_exchange_strong(expected, 0);
  }
}

void stop_children() {
  auto remaining = [] {
    bool any = false;
    for (auto& slot : child_groups) {
      const int group = slot.load();
      if (group <= 0) {
        continue;
      }
      while (::waitpid(group, nullptr, WNOHANG) > 0) {
      }
      if (group_exists(group)) {
        any = true;
      } else {
        slot.store(0);
      }
    }
    return any;
  };
  for (auto& slot : child_groups) {
    if (const int group = slot.load(); group > 0) {
      ::kill(-group, SIGTERM);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (remaining() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& slot : child_groups) {
    if (const int group = slot.exchange(0); group > 0) {
      ::kill(-group, SIGKILL);
      while (::waitpid(group, nullptr, WNOHANG) > 0) {
      }
    }
  }
  // Then whatever else descends from this process (started outside Popen,
  // or re-parented to it); nothing waits for them any more: reaped here.
  stop_descendants(grace, /*reap=*/true);
}

}  // namespace ascend_setup
