// run_process against real children.
#include "base/util/process.hpp"

#include "base/stop/stop_signals.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;

// A child that is gone (stopped, or done) before it read its stdin: the write
// fails with EPIPE and the run goes on, instead of dying of SIGPIPE (exit 141,
// the patch engine's scratch directory left behind) as it did when a stop
// signal ended `git apply` while the patch text was being written to it.
TEST(Process, AChildThatClosesItsStdinEndsTheWriteNotTheRun) {
  install_stop_signal_handlers();  // what both the host's main and this do first
  // More than a pipe holds, so the write is still going when the child closes it.
  const ProcessResult result =
      run_process({{"sh", "-c", "exec 0<&-; sleep 0.1; exit 3"}, std::nullopt, {},
                   std::string(4 << 20, 'x')});
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
