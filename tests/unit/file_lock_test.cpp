// The lock file's holder line read on text.
#include "base/tree/file_lock.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;

TEST(LockHolder, PidAndHost) {
  const LockHolder holder = parse_lock_holder("4242 build-host\n");
  EXPECT_EQ(holder.pid, 4242);
  EXPECT_EQ(holder.host, "build-host");
  EXPECT_EQ(parse_lock_holder("4242\n").host, "");
  EXPECT_EQ(parse_lock_holder("4242\n").pid, 4242);
  EXPECT_EQ(parse_lock_holder("").pid, 0);
}

TEST(LockHolder, APidThatIsNotOneIsNone) {
  // strtol saturated to LONG_MAX, which kill() saw as pid -1: every process.
  EXPECT_EQ(parse_lock_holder("99999999999999999999 host\n").pid, 0);
  EXPECT_EQ(parse_lock_holder("-1 host\n").pid, 0);
  EXPECT_EQ(parse_lock_holder("12abc host\n").pid, 0);
  EXPECT_EQ(parse_lock_holder("0 host\n").pid, 0);
  EXPECT_EQ(parse_lock_holder("12abc host\n").host, "host");
}
