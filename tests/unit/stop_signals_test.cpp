// The stop signals' wake of threads in a blocking call (StopWakesThisThread),
// in a child process with an alarm, so that a call left blocked fails the
// test instead of stalling it.
#include "base/process/stop_signals.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <thread>

#include <gtest/gtest.h>

using namespace ascend_setup;

namespace {

// In a process of its own (gtest's "threadsafe" death test runs this test
// again from the start): the handlers and the stopper thread must be this
// process's, not copies of an earlier test's that fork() left threadless.
// The alarm bounds a read left blocked, far above the wake's 100 ms.
// Every other signal starts blocked, as a parent may leave them (the mask is
// inherited across exec): the product unblocks what its wake needs.
[[noreturn]] void read_entered_after_the_stop() {
  ::alarm(120);
  sigset_t all;
  sigfillset(&all);
  sigdelset(&all, SIGALRM);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  install_stop_signal_handlers();
  int fds[2];
  if (::pipe(fds) != 0) {
    ::_exit(3);
  }
  // A signal sent to the process may be handled on another of its threads,
  // after kill() returned: wait for the handler's record (the alarm bounds it).
  if (::kill(::getpid(), SIGINT) != 0) {
    ::_exit(4);
  }
  while (stop_signal() != SIGINT) {
    std::this_thread::yield();
  }
  int outcome = 5;
  std::thread reader([&] {
    const StopWakesThisThread wakes;
    char byte = 0;
    const ssize_t got = ::read(fds[0], &byte, 1);  // nobody writes: only a wake ends it
    outcome = got < 0 && errno == EINTR ? 0 : 6;
  });
  reader.join();
  ::_exit(outcome);
}

}  // namespace

// The stop came before the call (as when it lands between two reads of a
// transfer): the call is still ended, with EINTR. Without the wake the child
// dies of its alarm.
TEST(StopSignals, ACallEnteredAfterTheStopIsWokenWithEintr) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(read_entered_after_the_stop(), ::testing::ExitedWithCode(0), "");
}
