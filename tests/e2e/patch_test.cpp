// The patch engine through the built binary: --apply-patches,
// --patch-status, --restore-sources, --force-patches, the no-process check
// when nothing changed, a checkout owned by another user.
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace test_support;

namespace {

class PatchCliTest : public ExampleTreeTest {
 protected:
  void SetUp() override { make_git_repo(tree, dir.path()); }
};

TEST_F(PatchCliTest, StatusApplyRestoreRoundTrip) {
  auto status = host({"--patch-status"});
  EXPECT_EQ(status.exit_code, 1) << status.err;
  EXPECT_NE(status.out.find("mode dev (IS_MANYLINUX off)\n"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("patch not-applied triton-ascend-3.6.0.patch\n"), std::string::npos);
  EXPECT_NE(status.out.find("file pristine python/src/ir.cc\n"), std::string::npos);

  auto apply = host({"--apply-patches"});
  EXPECT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_TRUE(apply.out.empty()) << "logs belong on stderr: " << apply.out;
  EXPECT_NE(apply.err.find("wrote bin/triton-opt.cpp"), std::string::npos) << apply.err;

  status = host({"--patch-status"});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_NE(status.out.find("patch applied triton-ascend-dev-3.6.0.patch\n"), std::string::npos);
  EXPECT_NE(status.out.find("file patched python/triton/runtime/autotuner.py\n"),
            std::string::npos);
  // The same tree is not patched for a release build (the dev patch is in).
  status = host({"--release", "--patch-status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.out.find("patch applied-unwanted triton-ascend-dev-3.6.0.patch\n"),
            std::string::npos)
      << status.out;

  auto restore = host({"--restore-sources"});
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(must_run({"git", "status", "--porcelain"}, tree, git_env(dir.path())), "");
  EXPECT_EQ(host({"--patch-status"}).exit_code, 1);
}

TEST_F(PatchCliTest, NoProcessIsStartedWhenNothingChanged) {
  // A git on PATH that records every call, then runs the real one.
  const fs::path log = dir.path() / "git-calls.log";
  env["PATH"] = path_with_recording_git(dir.path() / "bin", log);

  ASSERT_EQ(host({"--apply-patches"}).exit_code, 0);
  const std::string first = read_file(log);
  EXPECT_NE(first.find("apply"), std::string::npos) << "the fake git was not used";

  const auto second = host({"--apply-patches"});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("up to date, no file touched"), std::string::npos) << second.err;
  EXPECT_EQ(read_file(log), first) << "git ran although nothing changed";
  EXPECT_EQ(host({"--patch-status"}).exit_code, 0);
  EXPECT_EQ(read_file(log), first);
}

TEST_F(PatchCliTest, OverlappingEditStopsWithExitCodeAndForceSavesIt) {
  const fs::path semantic = tree / "python/triton/language/semantic.py";
  std::string text = read_file(semantic);
  text.replace(text.find("return (value, dtype)"), 21, "return (dtype, value)");
  write_file(semantic, text);

  const auto refused = host({"--apply-patches"});
  EXPECT_EQ(refused.exit_code, ascend_setup::exit_code::patch_conflict);
  EXPECT_NE(refused.err.find("python/triton/language/semantic.py"), std::string::npos);
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_EQ(read_file(semantic), text);
  EXPECT_EQ(read_file(tree / "python/src/ir.cc"),
            read_file(fs::path(EXAMPLE_TREE) / "python/src/ir.cc"));
  const auto status = host({"--patch-status"});
  EXPECT_NE(status.out.find("file locally-modified python/triton/language/semantic.py\n"),
            std::string::npos)
      << status.out;

  // A build stops the same way, before CMake runs.
  const auto build = host({"build_ext"});
  EXPECT_EQ(build.exit_code, ascend_setup::exit_code::patch_conflict) << build.err;
  EXPECT_NE(build.err.find("ascend-setup: error: local changes conflict with the Ascend patches in "
                           "python/triton/language/semantic.py"),
            std::string::npos)
      << build.err;
  EXPECT_EQ(build.err.find("Traceback"), std::string::npos) << build.err;
  for (const auto& entry : fs::recursive_directory_iterator(tree / "build")) {
    EXPECT_NE(entry.path().filename(), "CMakeCache.txt") << "CMake ran: " << entry.path();
  }
  EXPECT_EQ(read_file(semantic), text);

  const auto forced = host({"--force-patches", "--apply-patches"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  const auto at = forced.err.find((tree / "build/ascend-setup/patches/saved/").string());
  ASSERT_NE(at, std::string::npos) << forced.err;
  const std::string saved_dir = forced.err.substr(at, forced.err.find('\n', at) - at);
  EXPECT_EQ(read_file(fs::path(saved_dir) / "python/triton/language/semantic.py"), text);
  EXPECT_EQ(host({"--patch-status"}).exit_code, 0);
}

TEST_F(PatchCliTest, CheckoutOwnedByAnotherUserNeedsTrustAndNoConfigIsWritten) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to give the checkout to another user";
  }
  must_run({"chown", "-R", "65534:65534", tree.string()}, dir.path());
  // The version's +git<hash> needs the checkout.
  const auto refused = host({"--dump-kwargs"});
  EXPECT_EQ(refused.exit_code, ascend_setup::exit_code::bad_input);
  EXPECT_NE(refused.err.find("owned by another user"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--trust-source-dir"), std::string::npos) << refused.err;

  const auto trusted = host({"--trust-source-dir", "--apply-patches"});
  EXPECT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_EQ(host({"--trust-source-dir", "--patch-status"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(dir.path() / ".gitconfig"));
  EXPECT_FALSE(fs::exists(dir.path() / ".config/git"));
  EXPECT_EQ(read_file(tree / ".git/config").find("safe"), std::string::npos);
}

TEST_F(PatchCliTest, SourceArchiveOwnedByAnotherUserNeedsNoTrust) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to give the tree to another user";
  }
  fs::remove_all(tree / ".git");
  must_run({"chown", "-R", "65534:65534", tree.string()}, dir.path());
  const auto result = host({"--apply-patches"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("(dev build: IS_MANYLINUX off)"), std::string::npos) << result.err;
}

// setup_ascend.py's rule: the official manylinux build of 3.6.0 skips the dev
// patch on any branch; a suffix or a dev version makes it a dev build again.
TEST_F(PatchCliTest, ManylinuxReleaseBuildSkipsTheDevPatchOnAnyBranch) {
  const fs::path autotuner = tree / "python/triton/runtime/autotuner.py";
  const std::string pristine = read_file(autotuner);
  env["IS_MANYLINUX"] = "1";
  env["TRITON_WHEEL_VERSION_SUFFIX"] = std::nullopt;
  auto status = host({"--patch-status"});
  EXPECT_NE(status.out.find("mode release (IS_MANYLINUX on, no suffix, version 3.6.0)\n"),
            std::string::npos)
      << status.out;
  const auto apply = host({"--apply-patches"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_NE(apply.err.find("(release build: IS_MANYLINUX on, no suffix, version 3.6.0)"),
            std::string::npos)
      << apply.err;
  EXPECT_EQ(read_file(autotuner), pristine);
  EXPECT_NE(read_file(tree / "python/src/ir.cc"),
            read_file(fs::path(EXAMPLE_TREE) / "python/src/ir.cc"));

  env["TRITON_WHEEL_VERSION_SUFFIX"] = "rc1";
  status = host({"--patch-status"});
  EXPECT_NE(status.out.find("mode dev (TRITON_WHEEL_VERSION_SUFFIX is 'rc1')\n"), std::string::npos)
      << status.out;
  env["TRITON_WHEEL_VERSION_SUFFIX"] = std::nullopt;
  write_file(tree / "version.txt", "3.6.0.dev0\n");
  ASSERT_EQ(host({"--apply-patches"}).exit_code, 0);
  EXPECT_NE(read_file(autotuner), pristine);  // a dev version: the dev patch is in
}

TEST_F(PatchCliTest, ModeOptionsAreExclusive) {
  const auto both = host({"--dev", "--release", "--patch-status"});
  EXPECT_EQ(both.exit_code, ascend_setup::exit_code::usage) << both.err;
  const auto two = host({"--apply-patches", "--restore-sources"});
  EXPECT_EQ(two.exit_code, ascend_setup::exit_code::usage) << two.err;
}

}  // namespace
