// Seed 4.3's dev/release rules, with the branch read by libgit2 from real
// git checkouts.
#include "ascend_setup/build_mode.hpp"
#include "ascend_setup/environment.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

class BuildModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unset_env("TRITON_DEV_MODE");
    unset_env("TRITON_RELEASE_MODE");
    tree = dir.path() / "tree";
    write_file(tree / "setup.py", "print('x')\n");
    switches.dev_mode = "TRITON_DEV_MODE";
    switches.release_mode = "TRITON_RELEASE_MODE";
  }
  void TearDown() override {
    unset_env("TRITON_DEV_MODE");
    unset_env("TRITON_RELEASE_MODE");
  }
  BuildMode mode(std::optional<BuildMode> forced = std::nullopt) {
    return choose_build_mode(forced, switches, tree).mode;
  }
  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    must_run(argv, tree, git_env(dir.path()));
  }

  TempDir dir;
  fs::path tree;
  Profile::Switches switches;
};

TEST_F(BuildModeTest, NotAGitCheckoutIsRelease) {
  EXPECT_EQ(mode(), BuildMode::release);
  EXPECT_EQ(choose_build_mode(std::nullopt, switches, tree).reason, "not a git checkout");
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
  EXPECT_EQ(choose_build_mode(std::nullopt, switches, tree).reason, "detached HEAD");
}

TEST_F(BuildModeTest, SwitchesWinOverTheCheckoutAndDevWinsOverRelease) {
  make_git_repo(tree, dir.path());
  set_env("TRITON_RELEASE_MODE", "On");
  EXPECT_EQ(mode(), BuildMode::release);
  set_env("TRITON_DEV_MODE", "TRUE");
  EXPECT_EQ(mode(), BuildMode::dev);
  set_env("TRITON_DEV_MODE", "yes");  // not one of the seed's words
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

}  // namespace
