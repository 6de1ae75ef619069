// SourceRepo against real git repositories made with the git command line.
#include "base/git/source_repo.hpp"

#include "base/util/error.hpp"
#include "network_servers.hpp"
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

TEST_F(SourceRepoTest, GitlinksUnderADirectoryWithTheirUrls) {
  const fs::path nested = dir.path() / "nested";
  write_file(nested / "CMakeLists.txt", "");
  const std::string id = make_git_repo(nested, dir.path());
  write_file(tree / ".gitmodules",
             "[submodule \"deps/one\"]\n\tpath = deps/one\n\turl = " + nested.string() + "\n");
  write_file(tree / "deps/file.txt", "not a gitlink\n");
  git({"add", "-A"}, tree);
  git({"update-index", "--add", "--cacheinfo", "160000," + id + ",deps/one"}, tree);
  git({"update-index", "--add", "--cacheinfo", "160000," + id + ",deps/two"}, tree);
  git({"update-index", "--add", "--cacheinfo", "160000," + id + ",other/three"}, tree);
  git({"commit", "-q", "-m", "gitlinks"}, tree);
  const auto repo = SourceRepo::open(tree);
  ASSERT_TRUE(repo);
  const std::vector<Gitlink> links = repo->gitlinks_under("deps");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].path, "deps/one");
  EXPECT_EQ(links[0].id, id);
  EXPECT_EQ(links[0].url, nested.string());
  EXPECT_EQ(links[1].path, "deps/two");
  EXPECT_EQ(links[1].url, "");  // no .gitmodules entry
  EXPECT_TRUE(repo->gitlinks_under("absent").empty());
}

TEST_F(SourceRepoTest, FetchCommitChecksOutThatCommitNotTheTip) {
  const std::string first = git({"rev-parse", "HEAD"}, tree);
  write_file(tree / "later.txt", "later\n");
  git({"add", "-A"}, tree);
  git({"commit", "-q", "-m", "later"}, tree);
  const fs::path target = dir.path() / "fetched";
  fs::create_directory(target);  // a submodule's empty placeholder
  SourceRepo::fetch_commit(tree.string(), first, target, NetworkSettings{}, test_writer_lock());
  EXPECT_EQ(git({"rev-parse", "HEAD"}, target), first);
  EXPECT_TRUE(fs::exists(target / "a.txt"));
  EXPECT_FALSE(fs::exists(target / "later.txt"));
  // An unknown commit: an Error, nothing left behind.
  const fs::path other = dir.path() / "other";
  EXPECT_THROW(SourceRepo::fetch_commit(tree.string(), std::string(40, '1'), other,
                                        NetworkSettings{}, test_writer_lock()),
               Error);
  EXPECT_THROW(SourceRepo::fetch_commit((dir.path() / "no-remote").string(), first, other,
                                        NetworkSettings{}, test_writer_lock()),
               Error);
  EXPECT_FALSE(fs::exists(other));
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find("ascend-setup-fetch"), std::string::npos);
  }
}

// The CA of one network operation is not trusted by the next one that names
// another: libgit2's certificate locations are process-wide, and OpenSSL
// (linked in, in what ships) adds locations to what it trusted before.
TEST_F(SourceRepoTest, ACaNamedOnceIsNotTrustedOnceAnotherIsNamed) {
  const TestCa served(dir.path() / "ca");
  const TestCa other(dir.path() / "other-ca");
  const fs::path git_root = dir.path() / "git";
  serve_bare_copy(tree, git_root, "repo", dir.path());
  fs::create_directories(dir.path() / "www");
  const TlsNginx nginx(dir.path() / "nginx", served, dir.path() / "www", git_root);
  const auto clone_trusting = [&](const TestCa& ca, const std::string& into) {
    NetworkSettings settings;
    settings.git_ssl_cainfo = NetworkVariable{"GIT_SSL_CAINFO", ca.ca_certificate.string()};
    SourceRepo::clone(nginx.url("git/repo.git"), "main", dir.path() / into, settings,
                      test_writer_lock());
  };
  clone_trusting(served, "first");
  EXPECT_TRUE(fs::exists(dir.path() / "first" / "a.txt"));
  try {
    clone_trusting(other, "second");
    ADD_FAILURE() << "cloned while trusting only another CA";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("is not trusted"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "second"));
  clone_trusting(served, "third");
  EXPECT_TRUE(fs::exists(dir.path() / "third" / "a.txt"));
}
