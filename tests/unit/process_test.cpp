// run_process against real children.
#include "base/process/process.hpp"

#include "base/process/stop_signals.hpp"

#include "base/util/error.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

using namespace ascend_setup;

// This test binary's own poll() interposes libc's for run_process (linked in
// statically): when poll_fails_with is set, it fails with that errno.
namespace {
int poll_fails_with = 0;
}
extern "C" int poll(pollfd* fds, nfds_t count, int timeout) {
  if (poll_fails_with != 0) {
    errno = poll_fails_with;
    return -1;
  }
  using Poll = int (*)(pollfd*, nfds_t, int);
  static const Poll real = reinterpret_cast<Poll>(dlsym(RTLD_NEXT, "poll"));
  return real(fds, count, timeout);
}

// A poll failure other than EINTR while the child still writes: the pipes are
// closed before the wait (the child gets EPIPE instead of blocking on a full
// pipe forever) and the run reports the failure. Run in a forked child with
// an alarm, so that the hang the old code had fails the test instead of
// stalling it.
TEST(Process, AFailedPollClosesThePipesWaitsForTheChildAndSaysWhy) {
  const pid_t tester = ::fork();
  ASSERT_GE(tester, 0);
  if (tester == 0) {
    ::alarm(20);
    poll_fails_with = ENOMEM;
    try {
      run_process({{"sh", "-c", "head -c 1000000 /dev/zero; exit 4"}, std::nullopt, {}, ""});
      ::_exit(11);  // no error reported
    } catch (const Error& error) {
      const std::string message = error.what();
      ::_exit(message.find("cannot read the output of sh") != std::string::npos ? 0 : 12);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(tester, &status, 0), tester);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status)
                                 << " (14: SIGALRM, the wait never ended)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "11: no error, 12: another message";
}

// A child that is gone (stopped, or done) before it read its stdin: the write
// fails with EPIPE and the run goes on, instead of dying of SIGPIPE (exit 141,
// the patch engine's scratch directory left behind) as it did when a stop
// signal ended `git apply` while the patch text was being written to it.
TEST(Process, AChildThatClosesItsStdinEndsTheWriteNotTheRun) {
  install_stop_signal_handlers();  // what both the host's main and this do first
  // More than a pipe holds, so the write is still going when the child closes it.
  const ProcessResult result = run_process(
      {{"sh", "-c", "exec 0<&-; sleep 0.1; exit 3"}, std::nullopt, {}, std::string(4 << 20, 'x')});
  EXPECT_EQ(result.exit_code, 3);
}

// The child gets SIGPIPE's default back: `yes | head -1` ends as in a shell
// (with SIGPIPE ignored, yes would report "Broken pipe" on stderr).
TEST(Process, ChildrenGetTheDefaultSigpipe) {
  install_stop_signal_handlers();
  const ProcessResult result = run_process({{"sh", "-c", "yes | head -1"}, std::nullopt, {}, ""});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, "y\n");
  EXPECT_EQ(result.err, "");
}

// A long build's output is seen as it runs: both of the child's streams go to
// this process's stderr (here a file in its place), nothing is collected.
TEST(Process, StreamToStderrSendsBothStreamsToOurStderr) {
  char path[] = "/tmp/ascend-setup-stream-XXXXXX";
  const int file = ::mkstemp(path);
  ASSERT_GE(file, 0);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(file, STDERR_FILENO);
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo to-stdout; echo to-stderr >&2"};
  spec.stream_to_stderr = true;
  const ProcessResult result = run_process(spec);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  char buffer[256] = {};
  const ssize_t n = ::pread(file, buffer, sizeof buffer - 1, 0);
  ::close(file);
  ::unlink(path);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "to-stdout\nto-stderr\n");
}

namespace {

sigset_t thread_mask() {
  sigset_t mask;
  sigemptyset(&mask);
  ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return mask;
}

}  // namespace

// The one set of stop signals: a helper thread started while they are
// blocked (the libgit2 start ahead) has them blocked, so they reach the main
// thread; the starting thread gets its own mask back.
TEST(StopSignals, AThreadStartedWhileTheyAreBlockedNeverReceivesThem) {
  const sigset_t before = thread_mask();
  sigset_t in_thread;
  sigemptyset(&in_thread);
  {
    const ascend_setup::StopSignalsBlocked blocked;
    std::thread([&in_thread] { in_thread = thread_mask(); }).join();
  }
  const sigset_t after = thread_mask();
  for (const int number : {SIGINT, SIGTERM, SIGHUP}) {
    EXPECT_EQ(sigismember(&in_thread, number), 1) << number;
    EXPECT_EQ(sigismember(&after, number), sigismember(&before, number)) << number;
  }
  const sigset_t stops = ascend_setup::stop_signal_set();
  for (int number = 1; number < NSIG; ++number) {
    const bool stop = number == SIGINT || number == SIGTERM || number == SIGHUP;
    EXPECT_EQ(sigismember(&stops, number), stop ? 1 : 0) << number;
  }
}
