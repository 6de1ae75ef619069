// /proc/<pid>/stat read on text: the state and the parent, comm holding
// blanks and ')'.
#include "base/process/descendants.hpp"

#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>
#include <fstream>
#include <sstream>

using namespace ascend_setup;
namespace fs = std::filesystem;

TEST(ProcStat, StateAndParentAfterTheLastParenthesis) {
  const auto state = parse_proc_stat("4242 (a) b (c) S 17 4242 4242 0 -1 4194560\n");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->state, 'S');
  EXPECT_EQ(state->parent, 17);
  EXPECT_EQ(parse_proc_stat("1 (init) Z 0 1 1\n")->state, 'Z');
}

TEST(ProcStat, ThisProcessIsReadAsTheKernelWritesIt) {
  std::ifstream in("/proc/self/stat");
  std::stringstream text;
  text << in.rdbuf();
  const auto state = parse_proc_stat(text.str());
  ASSERT_TRUE(state);
  EXPECT_EQ(state->parent, ::getppid());
  EXPECT_EQ(state->state, 'R');
}

TEST(ProcStat, OtherTextIsNoProcessNeverAWrongParent) {
  // strtol gave LONG_MAX, cast to pid_t -1, for an overlong parent.
  for (const char* bad : {"", "1 (x)", "1 (x) S", "1 (x) S ", "1 (x)S 1", "1 x S 1",
                          "1 (x) S 99999999999999999999 1", "1 (x) S -5 1", "1 (x) S 12abc 1"}) {
    EXPECT_EQ(parse_proc_stat(bad), std::nullopt) << bad;
  }
}

// Another process's descendants (the tests' distccd and its compilers): a
// shell's background child, not the shell itself nor this process's others.
TEST(Descendants, OfAnotherProcessAreItsOwnOnly) {
  test_support::TempDir dir;
  const fs::path started = dir.path() / "started";
  // The pid written by echo, a builtin: one write, and no other child.
  test_support::BackgroundProcess shell(
      {"/bin/sh", "-c", "sleep 600 & echo $! > \"$0\"; wait", started.string()});
  ASSERT_TRUE(test_support::wait_until(
      [&] { return test_support::contains(test_support::read_file(started), "\n"); }, 60));
  const pid_t sleeper = std::stoi(test_support::read_file(started));
  EXPECT_EQ(ascend_setup::living_descendants(shell.pid()), std::vector<pid_t>{sleeper});
  const auto ours = ascend_setup::living_descendants();
  EXPECT_NE(std::find(ours.begin(), ours.end(), sleeper), ours.end());
  EXPECT_NE(std::find(ours.begin(), ours.end(), shell.pid()), ours.end());
}
