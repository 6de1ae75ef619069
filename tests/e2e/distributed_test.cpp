// The distributed part as setup_ascend.py has it, through the built binary:
// TRITON_BUILD_TD (and its deprecated alias), a plain clone made by libgit2
// from the profile's URL (a local repository stands in for the remote server),
// held at the profile's pin, never discarding local changes; a registered
// submodule accepted; a source archive used as it is; the offline error.
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;

namespace {

class DistributedTest : public ExampleTreeTest {
 protected:
  void SetUp() override {
    make_git_repo(tree, dir.path());
    clone = tree / "third_party/ascend/Triton-distributed-ascend";
    remote = dir.path() / "remote" / "Triton-distributed-ascend";
    pin = make_distributed_remote(remote, dir.path());
    use_profile(remote.string(), pin);
    env["TRITON_BUILD_TD"] = "ON";
    env["TRITON_BUILD_DISTRIBUTED"] = std::nullopt;
    // A git on PATH that records its calls: libgit2 does the work, not git.
    env["PATH"] = path_with_recording_git(dir.path() / "bin", git_log);
  }
  void use_profile(const std::string& url, const std::string& pin_id) {
    write_profile(profile, {{"https://gitcode.com/Ascend/Triton-distributed-ascend.git", url},
                            {"d2ac268c7ab4dc09865ed51638104ee1b97dc460", pin_id}});
  }
  ascend_setup::ProcessResult host(const std::vector<std::string>& args) {
    std::vector<std::string> all{"--profile", profile.string()};
    all.insert(all.end(), args.begin(), args.end());
    return run_host(all, tree, env);
  }
  std::string git_in(const fs::path& repo, const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git", "-C", repo.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = must_run(argv, dir.path(), git_env(dir.path()));
    return out.substr(0, out.find('\n'));
  }
  std::string git_calls() { return fs::exists(git_log) ? read_file(git_log) : ""; }
  static bool lists_package(const nlohmann::ordered_json& kwargs, const std::string& name) {
    const auto& packages = kwargs["packages"];
    return std::find(packages.begin(), packages.end(), name) != packages.end();
  }

  fs::path remote, profile = dir.path() / "profile.toml", git_log = dir.path() / "git.log";
  fs::path clone;  // where the distributed part lives in the tree
  std::string pin;
};

TEST_F(DistributedTest, MissingDirectoryIsClonedAtThePinByLibgit2_LocalRemote) {
  // A later commit on master: the clone must still end at the pin.
  write_file(remote / "python/triton_dist/later.py", "");
  must_run({"git", "add", "-A"}, remote, git_env(dir.path()));
  must_run({"git", "commit", "-q", "-m", "later"}, remote, git_env(dir.path()));

  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(git_in(clone, {"rev-parse", "HEAD"}), pin);
  EXPECT_FALSE(fs::exists(clone / "python/triton_dist/later.py"));
  EXPECT_TRUE(fs::exists(clone / "python/triton_dist/layers/nested/ops.pyi"));
  EXPECT_EQ(git_calls().find("Triton-distributed-ascend"), std::string::npos) << git_calls();
  const auto kwargs = parse_json(result.out);
  for (const char* name : {"triton_dist", "triton_dist.layers", "triton_dist.layers.nested"}) {
    EXPECT_TRUE(lists_package(kwargs, name)) << name;
  }
  EXPECT_EQ(kwargs["package_data"]["triton_dist"], (nlohmann::ordered_json{"*.py", "*.pyi"}));
  // No git configuration is written, globally or in the tree.
  EXPECT_FALSE(fs::exists(dir.path() / ".gitconfig"));
  EXPECT_EQ(read_file(tree / ".git/config").find("safe"), std::string::npos);
  // No staging directory is left beside the clone.
  for (const auto& entry : fs::directory_iterator(clone.parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find("ascend-setup-clone"), std::string::npos);
  }
}

TEST_F(DistributedTest, AtThePinNothingIsTouched_LocalRemote) {
  ASSERT_EQ(host({"--dump-kwargs"}).exit_code, 0);
  const long long before = mtime_ns(clone / "python/triton_dist/__init__.py");
  fs::rename(remote, dir.path() / "gone");  // offline from here on
  const auto again = host({"--dump-kwargs"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(mtime_ns(clone / "python/triton_dist/__init__.py"), before);
  EXPECT_EQ(again.err.find("distributed part:"), std::string::npos) << again.err;
}

TEST_F(DistributedTest, MovedOffThePinIsCheckedOutBack_LocalRemote) {
  ASSERT_EQ(host({"--dump-kwargs"}).exit_code, 0);
  write_file(clone / "python/triton_dist/mine.py", "");
  must_run({"git", "add", "-A"}, clone, git_env(dir.path()));
  must_run({"git", "commit", "-q", "-m", "mine"}, clone, git_env(dir.path()));
  const std::string moved = git_in(clone, {"rev-parse", "HEAD"});
  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(git_in(clone, {"rev-parse", "HEAD"}), pin);
  EXPECT_NE(result.err.find("checked out at the pin " + pin + " (was " + moved + ")"),
            std::string::npos)
      << result.err;
  // The user's commit is not lost: the branch still holds it.
  EXPECT_EQ(git_in(clone, {"rev-parse", "master"}), moved);
}

TEST_F(DistributedTest, PinUnknownLocallyIsFetched_LocalRemote) {
  ASSERT_EQ(host({"--dump-kwargs"}).exit_code, 0);
  // The pin moves to a commit the clone has never seen.
  write_file(remote / "python/triton_dist/newer.py", "");
  must_run({"git", "add", "-A"}, remote, git_env(dir.path()));
  must_run({"git", "commit", "-q", "-m", "newer"}, remote, git_env(dir.path()));
  const std::string newer = git_in(remote, {"rev-parse", "HEAD"});
  use_profile(remote.string(), newer);
  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(git_in(clone, {"rev-parse", "HEAD"}), newer);
  EXPECT_TRUE(fs::exists(clone / "python/triton_dist/newer.py"));
  EXPECT_TRUE(lists_package(parse_json(result.out), "triton_dist"));
}

TEST_F(DistributedTest, LocalChangesOffThePinAreRefusedAndKept_LocalRemote) {
  ASSERT_EQ(host({"--dump-kwargs"}).exit_code, 0);
  write_file(remote / "python/triton_dist/newer.py", "");
  must_run({"git", "add", "-A"}, remote, git_env(dir.path()));
  must_run({"git", "commit", "-q", "-m", "newer"}, remote, git_env(dir.path()));
  use_profile(remote.string(), git_in(remote, {"rev-parse", "HEAD"}));
  write_file(clone / "python/triton_dist/__init__.py", "# my work\n");
  const auto result = host({"--dump-kwargs"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::patch_conflict) << result.err;
  EXPECT_NE(result.err.find("has local changes (python/triton_dist/__init__.py)"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_TRUE(result.out.empty());
  EXPECT_EQ(read_file(clone / "python/triton_dist/__init__.py"), "# my work\n");
  EXPECT_EQ(git_in(clone, {"rev-parse", "HEAD"}), pin);
}

TEST_F(DistributedTest, OfflineWithNoCloneIsOneLineNamingUrlDirectoryPinAndCommands) {
  fs::rename(remote, dir.path() / "gone");
  const auto result = host({"--dump-kwargs"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input);
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 2) << result.err;  // + info
  for (const std::string& part : {remote.string(), clone.string(), pin,
                                  "git clone " + remote.string() + " -b master " + clone.string() +
                                      " && git -C " + clone.string() + " checkout " + pin,
                                  std::string("TRITON_BUILD_TD")}) {
    EXPECT_NE(result.err.find(part), std::string::npos) << part << "\n" << result.err;
  }
  EXPECT_EQ(result.err.find("Traceback"), std::string::npos);
  EXPECT_FALSE(fs::exists(clone));
}

// The in-tree layer's rule: the clone is tried network_attempts times,
// retry_seconds apart, each failure a warning, the last one the error.
TEST_F(DistributedTest, CloneIsTriedAgainAsTheProfileSays) {
  std::string text = read_file(profile);
  text = replace_once(text, "link = \"python/triton_dist\"\n",
                      "link = \"python/triton_dist\"\nnetwork_attempts = 3\nretry_seconds = 0\n");
  write_file(profile, text);
  fs::rename(remote, dir.path() / "gone");
  const auto result = host({"--dump-kwargs"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  EXPECT_TRUE(contains(result.err, "cloning " + remote.string() + " failed (attempt 1 of 3)"))
      << result.err;
  EXPECT_TRUE(contains(result.err, "(attempt 2 of 3)")) << result.err;
  EXPECT_FALSE(contains(result.err, "(attempt 3 of 3)")) << result.err;
  EXPECT_TRUE(contains(result.err, "could not be cloned from " + remote.string())) << result.err;
  EXPECT_FALSE(fs::exists(clone));
}

TEST_F(DistributedTest, SourceArchiveUsesTheDirectoryAsItIs) {
  fs::remove_all(tree / ".git");
  write_file(clone / "python/triton_dist/__init__.py", "");
  write_file(clone / "python/triton_dist/archived/__init__.py", "");
  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(lists_package(parse_json(result.out), "triton_dist.archived"));
  EXPECT_FALSE(fs::exists(clone / ".git"));
}

TEST_F(DistributedTest, SourceArchiveWithoutTheDirectoryClonesTheBranch_LocalRemote) {
  fs::remove_all(tree / ".git");
  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(git_in(clone, {"rev-parse", "HEAD"}), pin);
  EXPECT_TRUE(lists_package(parse_json(result.out), "triton_dist.layers.nested"));
}

TEST_F(DistributedTest, ARegisteredSubmoduleIsAccepted_LocalRemote) {
  must_run({"git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", remote.string(),
            "third_party/ascend/Triton-distributed-ascend"},
           tree, git_env(dir.path()));
  must_run({"git", "commit", "-q", "-m", "distributed submodule"}, tree, git_env(dir.path()));
  const fs::path second = dir.path() / "second";
  must_run({"git", "clone", "-q", tree.string(), second.string()}, dir.path(), git_env(dir.path()));
  ASSERT_TRUE(fs::is_empty(second / "third_party/ascend/Triton-distributed-ascend"));
  std::vector<std::string> args{"--profile", profile.string(), "--dump-kwargs"};
  const auto result = run_host(args, second, env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(git_in(second / "third_party/ascend/Triton-distributed-ascend", {"rev-parse", "HEAD"}),
            pin);
  EXPECT_TRUE(lists_package(parse_json(result.out), "triton_dist.layers"));
}

TEST_F(DistributedTest, DirectoryThatIsNoCloneIsAClearError) {
  write_file(clone / "python/triton_dist/__init__.py", "");
  const auto result = host({"--dump-kwargs"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input);
  EXPECT_NE(result.err.find(clone.string() + " exists but is not a git clone"), std::string::npos)
      << result.err;
}

TEST_F(DistributedTest, OffTouchesNothing) {
  env["TRITON_BUILD_TD"] = "OFF";
  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(clone));
  EXPECT_FALSE(lists_package(parse_json(result.out), "triton_dist"));
}

TEST_F(DistributedTest, DeprecatedSwitchNameWorksWithAWarning_LocalRemote) {
  env["TRITON_BUILD_TD"] = std::nullopt;
  env["TRITON_BUILD_DISTRIBUTED"] = "ON";
  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("warning: TRITON_BUILD_DISTRIBUTED is deprecated: use TRITON_BUILD_TD"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(lists_package(parse_json(result.out), "triton_dist"));

  // Both set: TRITON_BUILD_TD wins.
  env["TRITON_BUILD_TD"] = "OFF";
  const auto both = host({"--dump-kwargs"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.err.find("TRITON_BUILD_DISTRIBUTED is deprecated and ignored"), std::string::npos)
      << both.err;
  EXPECT_FALSE(lists_package(parse_json(both.out), "triton_dist"));
}

}  // namespace
