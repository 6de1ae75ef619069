// The dev/release rules: options and switches, then the profile's rule:
// setup_ascend.py's manylinux rule (the 3.6.0 default) or the
// branch rule, with the branch read by libgit2 from real checkouts.
#include "base/layer/build_mode.hpp"
#include "base/layer/checkout_record.hpp"
#include "base/layer/environment.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

const char* const kModeVariables[] = {"TRITON_DEV_MODE", "TRITON_RELEASE_MODE", "IS_MANYLINUX",
                                      "TRITON_WHEEL_VERSION_SUFFIX"};

class BuildModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kModeVariables) {
      unset_env(name);
    }
    tree = dir.path() / "tree";
    write_file(tree / "setup.py", "print('x')\n");
    profile.mode_rule = Profile::ModeRule::branch;
  }
  void TearDown() override {
    for (const char* name : kModeVariables) {
      unset_env(name);
    }
  }
  BuildMode mode(std::optional<BuildMode> forced = std::nullopt) {
    return choose_build_mode(forced, profile, tree).mode;
  }
  std::string reason() { return choose_build_mode(std::nullopt, profile, tree).reason; }
  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    must_run(argv, tree, git_env(dir.path()));
  }

  TempDir dir;
  fs::path tree;
  Profile profile = parse_profile(builtin_profile_text(), "built-in profile");
};

TEST_F(BuildModeTest, NotAGitCheckoutIsRelease) {
  EXPECT_EQ(mode(), BuildMode::release);
  EXPECT_EQ(reason(), "not a git checkout");
}

TEST_F(BuildModeTest, BranchDecides) {
  make_git_repo(tree, dir.path());
  EXPECT_EQ(mode(), BuildMode::dev);  // main
  git({"checkout", "-q", "-b", "release-3.6.0"});
  EXPECT_EQ(mode(), BuildMode::release);
  git({"checkout", "-q", "-b", "releases/x"});
  EXPECT_EQ(mode(), BuildMode::release);
  git({"checkout", "-q", "-b", "feature/release"});
  EXPECT_EQ(mode(), BuildMode::dev);
}

TEST_F(BuildModeTest, DetachedHeadIsDev) {
  make_git_repo(tree, dir.path());
  git({"checkout", "-q", "-b", "release-3.6.0"});
  git({"checkout", "-q", "--detach"});
  EXPECT_EQ(mode(), BuildMode::dev);
  EXPECT_EQ(reason(), "detached HEAD");
}

TEST_F(BuildModeTest, SwitchesWinOverTheCheckoutAndDevWinsOverRelease) {
  make_git_repo(tree, dir.path());
  set_env("TRITON_RELEASE_MODE", "On");
  EXPECT_EQ(mode(), BuildMode::release);
  set_env("TRITON_DEV_MODE", "TRUE");
  EXPECT_EQ(mode(), BuildMode::dev);
  set_env("TRITON_DEV_MODE", "yes");  // not one of the switch's words
  EXPECT_EQ(mode(), BuildMode::release);
  unset_env("TRITON_RELEASE_MODE");
  fs::remove_all(tree / ".git");
  set_env("TRITON_DEV_MODE", "1");
  EXPECT_EQ(mode(), BuildMode::dev);
}

TEST_F(BuildModeTest, HostOptionWinsOverEverything) {
  set_env("TRITON_DEV_MODE", "1");
  EXPECT_EQ(mode(BuildMode::release), BuildMode::release);
  unset_env("TRITON_DEV_MODE");
  EXPECT_EQ(mode(BuildMode::dev), BuildMode::dev);  // not a checkout, still dev
}

TEST_F(BuildModeTest, BuiltInProfileUsesTheMergedManylinuxRule) {
  const Profile builtin = parse_profile(builtin_profile_text(), "built-in profile");
  EXPECT_EQ(builtin.mode_rule, Profile::ModeRule::manylinux);
}

// setup_ascend.py: release only for IS_MANYLINUX on + no suffix + a version
// without "dev"; the branch plays no part (release* branches are dev too).
TEST_F(BuildModeTest, ManylinuxRuleMatrix) {
  profile.mode_rule = Profile::ModeRule::manylinux;
  make_git_repo(tree, dir.path());
  git({"checkout", "-q", "-b", "release/3.6.x"});
  write_file(tree / "version.txt", "3.6.0\n");
  struct Case {
    const char* manylinux;  // nullptr: unset
    const char* suffix;
    const char* version;  // nullptr: no version.txt (the profile's fallback, a dev version)
    BuildMode expected;
    const char* reason;
  };
  const Case cases[] = {
      {nullptr, nullptr, "3.6.0", BuildMode::dev, "IS_MANYLINUX off"},
      {"0", nullptr, "3.6.0", BuildMode::dev, "IS_MANYLINUX off"},
      {"1", nullptr, "3.6.0", BuildMode::release, "IS_MANYLINUX on, no suffix, version 3.6.0"},
      {"y", "", "3.6.0", BuildMode::release, "IS_MANYLINUX on, no suffix, version 3.6.0"},
      {"TRUE", "rc1", "3.6.0", BuildMode::dev, "TRITON_WHEEL_VERSION_SUFFIX is 'rc1'"},
      {"ON", nullptr, "3.6.0.dev1", BuildMode::dev, "version 3.6.0.dev1 is a dev version"},
      {"ON", nullptr, nullptr, BuildMode::dev, "version 3.6.0-dev is a dev version"},
  };
  for (const Case& c : cases) {
    c.manylinux ? set_env("IS_MANYLINUX", c.manylinux) : unset_env("IS_MANYLINUX");
    c.suffix ? set_env("TRITON_WHEEL_VERSION_SUFFIX", c.suffix)
             : unset_env("TRITON_WHEEL_VERSION_SUFFIX");
    if (c.version) {
      write_file(tree / "version.txt", std::string(c.version) + "\n");
    } else {
      fs::remove(tree / "version.txt");
    }
    const ModeChoice choice = choose_build_mode(std::nullopt, profile, tree);
    EXPECT_EQ(choice.mode, c.expected) << choice.reason;
    EXPECT_EQ(choice.reason, c.reason);
  }
}

TEST_F(BuildModeTest, ManylinuxRuleOnADetachedHeadAndOutsideACheckout) {
  profile.mode_rule = Profile::ModeRule::manylinux;
  write_file(tree / "version.txt", "3.6.0");
  set_env("IS_MANYLINUX", "1");
  EXPECT_EQ(mode(), BuildMode::release);  // a source archive
  make_git_repo(tree, dir.path());
  git({"checkout", "-q", "--detach"});
  EXPECT_EQ(mode(), BuildMode::release);  // CI's detached HEAD
  unset_env("IS_MANYLINUX");
  EXPECT_EQ(mode(), BuildMode::dev);
}

TEST_F(BuildModeTest, SwitchesAndOptionsWinOverTheManylinuxRule) {
  profile.mode_rule = Profile::ModeRule::manylinux;
  write_file(tree / "version.txt", "3.6.0");
  set_env("IS_MANYLINUX", "1");
  set_env("TRITON_DEV_MODE", "on");
  EXPECT_EQ(mode(), BuildMode::dev);
  EXPECT_EQ(reason(), "TRITON_DEV_MODE is set");
  unset_env("TRITON_DEV_MODE");
  unset_env("IS_MANYLINUX");
  set_env("TRITON_RELEASE_MODE", "1");
  EXPECT_EQ(mode(), BuildMode::release);
  EXPECT_EQ(mode(BuildMode::dev), BuildMode::dev);
}

}  // namespace

// An unpacked sdist of a checkout: no .git, the branch recorded by the sdist.
TEST(CheckoutRecord, AnSdistsRecordStandsInForTheCheckout) {
  TempDir dir;
  const fs::path checkout = dir.path() / "checkout";
  write_file(checkout / "setup.py", "print('x')\n");
  const std::string head = make_git_repo(checkout, dir.path());
  must_run({"git", "checkout", "-q", "-b", "release-x"}, checkout, git_env(dir.path()));
  const auto facts = checkout_facts(checkout, 8);
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->head_short_id, head.substr(0, 8));
  EXPECT_EQ(facts->branch, "release-x");

  const fs::path sdist = dir.path() / "sdist";
  write_file(sdist / "setup.py", "print('x')\n");
  EXPECT_FALSE(checkout_facts(sdist, 8));
  Profile profile = parse_profile(builtin_profile_text(), "built-in profile");
  profile.mode_rule = Profile::ModeRule::branch;
  EXPECT_EQ(choose_build_mode(std::nullopt, profile, sdist).reason, "not a git checkout");

  write_checkout_record(sdist, *facts);
  const auto recorded = checkout_facts(sdist, 8);
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->head_short_id, facts->head_short_id);
  EXPECT_EQ(recorded->branch, facts->branch);
  const ModeChoice choice = choose_build_mode(std::nullopt, profile, sdist);
  EXPECT_EQ(choice.mode, BuildMode::release);
  EXPECT_EQ(choice.reason, "branch release-x");

  write_checkout_record(sdist, {head.substr(0, 8), std::nullopt});  // detached HEAD
  EXPECT_EQ(choose_build_mode(std::nullopt, profile, sdist).mode, BuildMode::dev);

  write_file(sdist / checkout_record_name, "tag v1\n");
  EXPECT_THROW(checkout_facts(sdist, 8), Error);
}
