// SourceRepo against real git repositories made with the git command line.
#include "base/git/source_repo.hpp"

#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

class SourceRepoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = dir.path() / "tree";
    write_file(tree / "a.txt", "a\n");
    make_git_repo(tree, dir.path());
  }
  std::string git(const std::vector<std::string>& args, const fs::path& cwd) {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    return first_line(must_run(argv, cwd, git_env(dir.path())));
  }
  TempDir dir;
  fs::path tree;
};
}  // namespace

TEST_F(SourceRepoTest, NotACheckout) {
  write_file(dir.path() / "plain" / "x", "");
  EXPECT_FALSE(SourceRepo::open(dir.path() / "plain"));
  // A directory inside a checkout is not the checkout's root: no search upwards.
  write_file(tree / "sub" / "x", "");
  EXPECT_FALSE(SourceRepo::open(tree / "sub"));
}

TEST_F(SourceRepoTest, HeadAndBranch) {
  auto repo = SourceRepo::open(tree);
  ASSERT_TRUE(repo);
  EXPECT_EQ(repo->head_short_id(8), git({"rev-parse", "--short=8", "HEAD"}, tree));
  EXPECT_EQ(repo->branch(), "main");
}

TEST_F(SourceRepoTest, DetachedHead) {
  git({"checkout", "-q", "--detach"}, tree);
  auto repo = SourceRepo::open(tree);
  EXPECT_EQ(repo->branch(), std::nullopt);
  EXPECT_EQ(repo->head_short_id(8), git({"rev-parse", "--short=8", "HEAD"}, tree));
}

TEST_F(SourceRepoTest, WorktreeHasAGitFile) {
  git({"worktree", "add", "-q", "-b", "release/3.6", (dir.path() / "wt").string()}, tree);
  ASSERT_TRUE(fs::is_regular_file(dir.path() / "wt" / ".git"));
  auto repo = SourceRepo::open(dir.path() / "wt");
  ASSERT_TRUE(repo);
  EXPECT_EQ(repo->branch(), "release/3.6");
  EXPECT_EQ(repo->head_short_id(8), git({"rev-parse", "--short=8", "HEAD"}, dir.path() / "wt"));
}

TEST_F(SourceRepoTest, ShallowClone) {
  write_file(tree / "b.txt", "b\n");
  git({"add", "-A"}, tree);
  git({"commit", "-q", "-m", "second"}, tree);
  git({"clone", "-q", "--depth", "1", "file://" + tree.string(), (dir.path() / "shallow").string()},
      dir.path());
  ASSERT_TRUE(fs::exists(dir.path() / "shallow" / ".git" / "shallow"));
  auto repo = SourceRepo::open(dir.path() / "shallow");
  EXPECT_EQ(repo->head_short_id(8), git({"rev-parse", "--short=8", "HEAD"}, tree));
}

TEST_F(SourceRepoTest, UnbornHeadHasNoId) {
  must_run({"git", "init", "-q", "-b", "dev", "empty"}, dir.path(), git_env(dir.path()));
  auto repo = SourceRepo::open(dir.path() / "empty");
  ASSERT_TRUE(repo);
  EXPECT_EQ(repo->head_short_id(8), std::nullopt);
  EXPECT_EQ(repo->branch(), "dev");
}

TEST_F(SourceRepoTest, RequestedLengthIsHonoured) {
  auto repo = SourceRepo::open(tree);
  const std::string full = git({"rev-parse", "HEAD"}, tree);
  const auto id = repo->head_short_id(12);
  EXPECT_EQ(*id, full.substr(0, 12));
}

TEST_F(SourceRepoTest, OtherOwnerIsAClearError) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to give the checkout to another user";
  }
  must_run({"chown", "-R", "65534:65534", tree.string()}, dir.path());
  try {
    SourceRepo::open(tree);
    FAIL() << "libgit2 read a checkout owned by another user";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("--trust-source-dir"), std::string::npos)
        << error.what();
  }
  SourceRepo::trust_all_owners();
  EXPECT_TRUE(SourceRepo::open(tree));
}
