// The stop signals' wake of threads in a blocking call (StopWakesThisThread),
// in a forked child with an alarm, so that a call left blocked fails the test
// instead of stalling it.
#include "base/process/stop_signals.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <thread>

#include <gtest/gtest.h>

using namespace ascend_setup;

// The stop came before the call (as when it lands between two reads of a
// transfer): the call is still ended, with EINTR, and the thread sees the stop.
TEST(StopSignals, ACallEnteredAfterTheStopIsWokenWithEintr) {
  const pid_t tester = ::fork();
  ASSERT_GE(tester, 0);
  if (tester == 0) {
    ::alarm(120);  // a bound for a call left blocked, far above the wake's 100 ms
    install_stop_signal_handlers();
    int fds[2];
    if (::pipe(fds) != 0) {
      ::_exit(3);
    }
    ::kill(::getpid(), SIGINT);  // handled before kill() returns
    if (stop_signal() != SIGINT) {
      ::_exit(4);
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
  int status = 0;
  ASSERT_EQ(::waitpid(tester, &status, 0), tester);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status)
                                 << " (SIGALRM: the read was never woken)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
