#include "ascend_setup/environment.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;

TEST(Environment, DefaultsNeverOverrideWhatTheUserSet) {
  set_env("ASCEND_TEST_SET", "mine");
  set_env("ASCEND_TEST_EMPTY", "");
  unset_env("ASCEND_TEST_UNSET");
  const auto set = apply_env_defaults(
      {{"ASCEND_TEST_SET", "default"}, {"ASCEND_TEST_EMPTY", "x"}, {"ASCEND_TEST_UNSET", "d"}});
  EXPECT_EQ(get_env("ASCEND_TEST_SET"), "mine");
  EXPECT_EQ(get_env("ASCEND_TEST_EMPTY"), "");
  EXPECT_EQ(get_env("ASCEND_TEST_UNSET"), "d");
  EXPECT_EQ(set, std::vector<std::string>{"ASCEND_TEST_UNSET"});
}

TEST(Environment, FlagFollowsUpstreamCheckEnvFlag) {
  for (const char* yes : {"ON", "on", "1", "yes", "TRUE", "y", "Y"}) {
    set_env("ASCEND_TEST_FLAG", yes);
    EXPECT_TRUE(env_flag("ASCEND_TEST_FLAG")) << yes;
  }
  for (const char* no : {"OFF", "0", "no", "false", "", "2"}) {
    set_env("ASCEND_TEST_FLAG", no);
    EXPECT_FALSE(env_flag("ASCEND_TEST_FLAG")) << no;
  }
  unset_env("ASCEND_TEST_FLAG");
  EXPECT_FALSE(env_flag("ASCEND_TEST_FLAG", "OFF"));
  EXPECT_TRUE(env_flag("ASCEND_TEST_FLAG", "ON"));
}

TEST(Environment, SwitchAcceptsOneOnTrue) {
  for (const char* yes : {"1", "on", "ON", "true", "True"}) {
    set_env("ASCEND_TEST_SWITCH", yes);
    EXPECT_TRUE(env_switch("ASCEND_TEST_SWITCH")) << yes;
  }
  for (const char* no : {"yes", "y", "0", ""}) {
    set_env("ASCEND_TEST_SWITCH", no);
    EXPECT_FALSE(env_switch("ASCEND_TEST_SWITCH")) << no;
  }
  unset_env("ASCEND_TEST_SWITCH");
  EXPECT_FALSE(env_switch("ASCEND_TEST_SWITCH"));
}
