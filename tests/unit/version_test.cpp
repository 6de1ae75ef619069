#include "base/layer/wheel_version.hpp"

#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {
Profile builtin_parsed() { return parse_profile(builtin_profile_text(), "built-in profile"); }

class WheelVersion : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"TRITON_VERSION", "TRITON_WHEEL_VERSION_SUFFIX", "IS_MANYLINUX"}) {
      unsetenv(name);
    }
  }
  void TearDown() override { SetUp(); }
  TempDir dir;
};
}  // namespace

TEST(Pep440, AcceptsWhatPackagingAccepts) {
  for (const char* v : {"3.6.0", "3.6.0-dev", "3.6.0.dev1", "3.6.0rc1", "1!2.0", "3.6.0.post1",
                        "3.6.0+git1234abcd", "3.6.0+git1234abcd-x", "3.6.0-1", "v3.6"}) {
    EXPECT_TRUE(is_pep440_version(v)) << v;
  }
  for (const char* v : {"", "3.6.0foo", "3.6.0+x+gitabc", "3.6.0+", "three", "3.6.0-x"}) {
    EXPECT_FALSE(is_pep440_version(v)) << v;
  }
}

TEST(ComposeVersion, UpstreamRuleForTwoPlusParts) {
  EXPECT_EQ(compose_version("3.6.0", "", std::nullopt), "3.6.0");
  EXPECT_EQ(compose_version("3.6.0", ".post1", std::string("1234abcd")), "3.6.0.post1+git1234abcd");
  EXPECT_EQ(compose_version("3.6.0", "+x", std::string("1234abcd")), "3.6.0+git1234abcd-x");
  EXPECT_EQ(compose_version("3.6.0", "+x", std::nullopt), "3.6.0+x");
}

TEST_F(WheelVersion, ReadsVersionFileOrFallback) {
  const Profile profile = builtin_parsed();
  EXPECT_EQ(wheel_version(profile, dir.path()), "3.6.0-dev");
  write_file(dir.path() / "version.txt", "  3.6.1\n");
  EXPECT_EQ(wheel_version(profile, dir.path()), "3.6.1");
  setenv("TRITON_VERSION", "3.7.0", 1);
  EXPECT_EQ(wheel_version(profile, dir.path()), "3.7.0");
}

TEST_F(WheelVersion, GitHashMatchesGitRevParse) {
  write_file(dir.path() / "tree" / "version.txt", "3.6.0\n");
  make_git_repo(dir.path() / "tree", dir.path());
  const std::string short_id =
      must_run({"git", "rev-parse", "--short=8", "HEAD"}, dir.path() / "tree", git_env(dir.path()));
  EXPECT_EQ(wheel_version(builtin_parsed(), dir.path() / "tree"),
            "3.6.0+git" + short_id.substr(0, short_id.find('\n')));
  setenv("IS_MANYLINUX", "ON", 1);
  EXPECT_EQ(wheel_version(builtin_parsed(), dir.path() / "tree"), "3.6.0");
}

TEST_F(WheelVersion, InvalidVersionNamesTheVariable) {
  write_file(dir.path() / "version.txt", "3.6.0\n");
  setenv("TRITON_WHEEL_VERSION_SUFFIX", "foo", 1);
  try {
    wheel_version(builtin_parsed(), dir.path());
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("TRITON_WHEEL_VERSION_SUFFIX ('foo')"),
              std::string::npos)
        << error.what();
  }
  unsetenv("TRITON_WHEEL_VERSION_SUFFIX");
  write_file(dir.path() / "version.txt", "three\n");
  try {
    wheel_version(builtin_parsed(), dir.path());
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("version.txt"), std::string::npos) << error.what();
  }
}
