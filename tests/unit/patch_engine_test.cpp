// The patch engine on copies of the example tree, each behaviour both on a
// real git checkout and on a tree that is no git checkout (a source archive).
// The reference is always `git apply` itself.
#include "base/tree/patch_engine.hpp"
#include "base/layer/profile.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

const char* const main_patch = "third_party/ascend/patch/triton-ascend-3.6.0.patch";
const char* const dev_patch = "third_party/ascend/patch/triton-ascend-dev-3.6.0.patch";
const std::vector<std::string> main_files = {"bin/triton-opt.cpp", "python/src/ir.cc",
                                             "python/triton/language/semantic.py"};
const char* const dev_file = "python/triton/runtime/autotuner.py";

std::vector<std::string> all_files() {
  auto files = main_files;
  files.push_back(dev_file);
  return files;
}

class PatchEngineTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    tree = copy_example_tree(dir.path());
    reference = dir.path() / "reference";
    fs::copy(tree, reference, fs::copy_options::recursive);
    if (is_git()) {
      make_git_repo(tree, dir.path());
    }
    profile = parse_profile(builtin_profile_text(), "built-in");
  }

  bool is_git() const { return GetParam(); }

  PatchEngine engine(BuildMode mode) {
    return PatchEngine(tree, profile, mode, PatchEngine::default_state_dir(tree));
  }

  // What `git apply` makes of the reference copy (outside any repository).
  std::string git_apply_reference(const std::vector<const char*>& patches) {
    std::string log;
    for (const char* patch : patches) {
      const auto result = run_process({{"git", "apply", "-v", (reference / patch).string()},
                                       reference,
                                       git_env(dir.path()),
                                       {}});
      EXPECT_EQ(result.exit_code, 0) << result.err;
      log += result.err;
    }
    return log;
  }

  std::map<std::string, long long> mtimes() const {
    std::map<std::string, long long> result;
    for (const auto& file : all_files()) {
      result[file] = mtime_ns(tree / file);
    }
    return result;
  }

  std::map<std::string, std::string> contents() const {
    std::map<std::string, std::string> result;
    for (const auto& file : all_files()) {
      result[file] = read_file(tree / file);
    }
    return result;
  }

  FileStatus status_of(const PatchStatus& status, const std::string& file) {
    for (const auto& [path, file_status] : status.files) {
      if (path == file) {
        return file_status;
      }
    }
    ADD_FAILURE() << file << " not in the status";
    return FileStatus::missing;
  }

  TempDir dir;
  fs::path tree, reference;
  Profile profile;
};

INSTANTIATE_TEST_SUITE_P(GitAndArchive, PatchEngineTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "GitCheckout" : "NoGit"; });

TEST_P(PatchEngineTest, ResultIsByteIdenticalToGitApplyIncludingMovedHunks) {
  const std::string log = git_apply_reference({main_patch, dev_patch});
  // The fixture must exercise git's offset search (libgit2 1.5 rejects it).
  ASSERT_NE(log.find("offset"), std::string::npos) << log;

  const PatchOutcome outcome = engine(BuildMode::dev).apply(false);
  EXPECT_EQ(outcome.written, all_files());
  for (const auto& file : all_files()) {
    EXPECT_EQ(read_file(tree / file), read_file(reference / file)) << file;
    EXPECT_NE(read_file(tree / file), read_file(fs::path(EXAMPLE_TREE) / file)) << file;
  }
}

TEST_P(PatchEngineTest, AllOrNothingWhenOneHunkDoesNotFit) {
  // semantic.py is the last file of the main patch: its hunk no longer fits.
  const fs::path semantic = tree / "python/triton/language/semantic.py";
  write_file(semantic, replace_once(read_file(semantic), "return (value, dtype)",
                                    "return (value, dtype)  # my edit"));
  const auto before_text = contents();
  const auto before_time = mtimes();
  try {
    engine(BuildMode::dev).apply(false);
    FAIL() << "an overlapping edit was patched over";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::patch_conflict);
    const std::string message = error.what();
    EXPECT_NE(message.find("python/triton/language/semantic.py"), std::string::npos) << message;
    EXPECT_NE(message.find("--force-patches"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
  EXPECT_EQ(contents(), before_text);
  EXPECT_EQ(mtimes(), before_time);
}

TEST_P(PatchEngineTest, UnwritableRecordStopsBeforeTheTreeIsTouched) {
  write_file(tree / "build/ascend-setup/patches", "a file where the record directory goes");
  const auto before = mtimes();
  try {
    engine(BuildMode::dev).apply(false);
    ADD_FAILURE() << "no error";
  } catch (const ascend_setup::Error& error) {
    // The system's own reason and the path, not a lost errno.
    EXPECT_NE(std::string(error.what()).find("build/ascend-setup/patches: Not a directory"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(mtimes(), before);
  EXPECT_EQ(read_file(tree / "python/src/ir.cc"), read_file(reference / "python/src/ir.cc"));
}

TEST_P(PatchEngineTest, AlreadyPatchedTreeIsNotWritten) {
  engine(BuildMode::dev).apply(false);
  const auto before = mtimes();
  const PatchOutcome again = engine(BuildMode::dev).apply(false);
  EXPECT_TRUE(again.up_to_date);
  EXPECT_TRUE(again.written.empty());
  EXPECT_EQ(mtimes(), before);

  // Without the record (a wiped build dir) the tree is recognised as patched.
  fs::remove_all(tree / "build");
  const PatchOutcome rediscovered = engine(BuildMode::dev).apply(false);
  EXPECT_FALSE(rediscovered.up_to_date);
  EXPECT_TRUE(rediscovered.written.empty());
  EXPECT_EQ(mtimes(), before);
  EXPECT_TRUE(engine(BuildMode::dev).apply(false).up_to_date);
}

TEST_P(PatchEngineTest, LocalEditOutsideTheHunksSurvivesPatchingAndRestoring) {
  const fs::path ir = tree / "python/src/ir.cc";
  const std::string edited = "// my local note\n" + read_file(ir);
  write_file(ir, edited);

  engine(BuildMode::dev).apply(false);
  EXPECT_EQ(read_file(ir).rfind("// my local note\n", 0), 0u);
  EXPECT_NE(read_file(ir).find("ascend_target"), std::string::npos);

  engine(BuildMode::dev).restore(false);
  EXPECT_EQ(read_file(ir), edited);
  for (const auto& file : all_files()) {
    if (file != "python/src/ir.cc") {
      EXPECT_EQ(read_file(tree / file), read_file(reference / file)) << file;
    }
  }
}

TEST_P(PatchEngineTest, OverlappingEditIsSavedAndReplacedOnlyWithForce) {
  const fs::path semantic = tree / "python/triton/language/semantic.py";
  const std::string mine =
      replace_once(read_file(semantic), "return (value, dtype)", "return (dtype, value)");
  write_file(semantic, mine);
  if (!is_git()) {
    try {
      engine(BuildMode::dev).apply(true);
      FAIL() << "forced without a committed copy";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("not a git checkout"), std::string::npos)
          << error.what();
    }
    EXPECT_EQ(read_file(semantic), mine);
    return;
  }
  const PatchOutcome outcome = engine(BuildMode::dev).apply(true);
  ASSERT_EQ(outcome.saved, std::vector<std::string>{"python/triton/language/semantic.py"});
  EXPECT_EQ(outcome.saved_dir.parent_path(), tree / "build/ascend-setup/patches/saved");
  EXPECT_EQ(read_file(outcome.saved_dir / "python/triton/language/semantic.py"), mine);
  git_apply_reference({main_patch, dev_patch});
  for (const auto& file : all_files()) {
    EXPECT_EQ(read_file(tree / file), read_file(reference / file)) << file;
  }
}

TEST_P(PatchEngineTest, ChangedPatchReplacesTheOldChangesAndKeepsLocalEdits) {
  engine(BuildMode::dev).apply(false);
  const fs::path ir = tree / "python/src/ir.cc";
  write_file(ir, "// my local note\n" + read_file(ir));
  const auto untouched = mtime_ns(tree / "bin/triton-opt.cpp");

  // A new upstream version of the main patch: one added line differs.
  write_file(tree / main_patch,
             replace_once(read_file(tree / main_patch), "\"Ascend910B\"", "\"Ascend910C\""));
  EXPECT_EQ(status_of(engine(BuildMode::dev).status(), "python/src/ir.cc"),
            FileStatus::patched_by_older_patch);

  const PatchOutcome outcome = engine(BuildMode::dev).apply(false);
  EXPECT_EQ(outcome.written, std::vector<std::string>{"python/src/ir.cc"});
  const std::string text = read_file(ir);
  EXPECT_EQ(text.rfind("// my local note\n", 0), 0u);
  EXPECT_NE(text.find("Ascend910C"), std::string::npos);
  EXPECT_EQ(text.find("Ascend910B"), std::string::npos);
  EXPECT_EQ(mtime_ns(tree / "bin/triton-opt.cpp"), untouched);
  EXPECT_TRUE(engine(BuildMode::dev).status().patched_for_mode);
}

TEST_P(PatchEngineTest, SwitchingModesAddsOrRemovesOnlyTheDevChanges) {
  engine(BuildMode::dev).apply(false);
  const std::string dev_text = read_file(tree / dev_file);
  ASSERT_NE(dev_text.find("self.history"), std::string::npos);
  const auto main_times = mtimes();

  const PatchOutcome to_release = engine(BuildMode::release).apply(false);
  EXPECT_EQ(to_release.written, std::vector<std::string>{dev_file});
  EXPECT_EQ(read_file(tree / dev_file), read_file(reference / dev_file));
  for (const auto& file : main_files) {
    EXPECT_EQ(mtime_ns(tree / file), main_times.at(file)) << file;
  }
  EXPECT_TRUE(engine(BuildMode::release).status().patched_for_mode);
  EXPECT_FALSE(engine(BuildMode::dev).status().patched_for_mode);

  const PatchOutcome to_dev = engine(BuildMode::dev).apply(false);
  EXPECT_EQ(to_dev.written, std::vector<std::string>{dev_file});
  EXPECT_EQ(read_file(tree / dev_file), dev_text);
}

TEST_P(PatchEngineTest, ReleaseModeWithoutRecordRemovesAnAppliedDevPatch) {
  engine(BuildMode::dev).apply(false);
  fs::remove_all(tree / "build");
  const PatchStatus status = engine(BuildMode::release).status();
  EXPECT_FALSE(status.patched_for_mode);
  engine(BuildMode::release).apply(false);
  EXPECT_EQ(read_file(tree / dev_file), read_file(reference / dev_file));
}

TEST_P(PatchEngineTest, MissingPatchIsAClearErrorUnlessOptional) {
  fs::remove(tree / dev_patch);
  try {
    engine(BuildMode::dev).apply(false);
    FAIL() << "a missing patch went unnoticed";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((tree / dev_patch).string()), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(contents().at("python/src/ir.cc"), read_file(reference / "python/src/ir.cc"));
  // Release mode does not need it.
  EXPECT_NO_THROW(engine(BuildMode::release).apply(false));

  profile.patches.dev.optional = true;
  EXPECT_NO_THROW(engine(BuildMode::dev).apply(false));
  EXPECT_TRUE(engine(BuildMode::dev).status().patched_for_mode);
}

TEST_P(PatchEngineTest, MalformedPatchNamesItsPath) {
  for (const std::string& text :
       {std::string("this is not a patch\n"),
        read_file(tree / main_patch).substr(0, read_file(tree / main_patch).size() / 2) +
            "@@ -1,3 +1,9 @@\n garbage\n"}) {
    write_file(tree / main_patch, text);
    try {
      engine(BuildMode::release).apply(false);
      FAIL() << "a malformed patch was accepted: " << text;
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("malformed patch"), std::string::npos) << message;
      EXPECT_NE(message.find((tree / main_patch).string()), std::string::npos) << message;
    }
    EXPECT_EQ(read_file(tree / "python/src/ir.cc"), read_file(reference / "python/src/ir.cc"));
  }
}

TEST_P(PatchEngineTest, StatusNamesEveryFileState) {
  PatchStatus status = engine(BuildMode::dev).status();
  EXPECT_FALSE(status.patched_for_mode);
  for (const auto& file : all_files()) {
    EXPECT_EQ(status_of(status, file), FileStatus::pristine) << file;
  }
  for (const auto& patch : status.patches) {
    EXPECT_FALSE(patch.applied) << patch.name;
  }

  engine(BuildMode::dev).apply(false);
  status = engine(BuildMode::dev).status();
  EXPECT_TRUE(status.patched_for_mode);
  for (const auto& file : all_files()) {
    EXPECT_EQ(status_of(status, file), FileStatus::patched) << file;
  }

  const fs::path semantic = tree / "python/triton/language/semantic.py";
  write_file(semantic, replace_once(read_file(semantic), "\"npu\")", "\"cpu\")"));
  fs::remove(tree / "bin/triton-opt.cpp");
  status = engine(BuildMode::dev).status();
  EXPECT_FALSE(status.patched_for_mode);
  EXPECT_EQ(status_of(status, "python/triton/language/semantic.py"), FileStatus::locally_modified);
  EXPECT_EQ(status_of(status, "bin/triton-opt.cpp"), FileStatus::missing);
  EXPECT_EQ(status_of(status, "python/src/ir.cc"), FileStatus::patched);
}

TEST_P(PatchEngineTest, RestoreWithoutRecordFindsTheAppliedPatches) {
  engine(BuildMode::dev).apply(false);
  fs::remove_all(tree / "build");
  const PatchOutcome outcome = engine(BuildMode::dev).restore(false);
  EXPECT_EQ(outcome.written, all_files());
  for (const auto& file : all_files()) {
    EXPECT_EQ(read_file(tree / file), read_file(reference / file)) << file;
  }
  EXPECT_TRUE(engine(BuildMode::dev).restore(false).written.empty());
}

}  // namespace
