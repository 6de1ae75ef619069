// The patch engine with a nested patch ([patches] nested): a patch whose
// paths are relative to a nested checkout inside the tree (AscendNPU-IR in
// the 3.7.0 line), applied as `git apply --directory` applies it, with the
// tree's own patches in one transaction and one record. Each behaviour on a
// git checkout whose nested checkout is a repository of its own, and on a
// tree that is no git checkout (a source archive).
#include "base/layer/profile.hpp"
#include "base/tree/patch_engine.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

const char* const checkout = "third_party/ascend/NestedIR";
const char* const nested_patch = "third_party/ascend/patch/nested_ir_adapter.patch";
const char* const adapter = "third_party/ascend/NestedIR/lib/Adapter.cpp";
const char* const created = "third_party/ascend/NestedIR/lib/Compat.cpp";

const char* const adapter_text =
    "#include \"Adapter.h\"\n"
    "\n"
    "int adapt(int value) {\n"
    "  return value + 22;\n"
    "}\n"
    "\n"
    "int keep(int value) { return value; }\n";

// Paths relative to the nested checkout, as its own `git diff` writes them.
const char* const patch_text =
    "diff --git a/lib/Adapter.cpp b/lib/Adapter.cpp\n"
    "--- a/lib/Adapter.cpp\n"
    "+++ b/lib/Adapter.cpp\n"
    "@@ -1,5 +1,5 @@\n"
    " #include \"Adapter.h\"\n"
    " \n"
    " int adapt(int value) {\n"
    "-  return value + 22;\n"
    "+  return value + 23;\n"
    " }\n"
    "diff --git a/lib/Compat.cpp b/lib/Compat.cpp\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/lib/Compat.cpp\n"
    "@@ -0,0 +1 @@\n"
    "+int llvm_major() { return 23; }\n";

class NestedPatchTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    tree = copy_example_tree(dir.path());
    write_file(tree / adapter, adapter_text);
    write_file(tree / checkout / "include/Adapter.h", "int adapt(int value);\n");
    write_file(tree / nested_patch, patch_text);
    if (is_git()) {
      make_git_repo(tree / checkout, dir.path());
      make_git_repo(tree, dir.path());
    }
    profile = parse_profile(
        replace_once(std::string(builtin_profile_text()),
                     "dev = { file = \"triton-ascend-dev-3.6.0.patch\", optional = false }\n",
                     "dev = { file = \"triton-ascend-dev-3.6.0.patch\", optional = false }\n"
                     "nested = [{ file = \"nested_ir_adapter.patch\", checkout = \"" +
                         std::string(checkout) + "\" }]\n"),
        "built-in with a nested patch");
    ASSERT_EQ(profile.patches.nested.size(), 1u);
  }

  bool is_git() const { return GetParam(); }

  PatchEngine engine(BuildMode mode) {
    return PatchEngine(tree, profile, mode, PatchEngine::default_state_dir(tree));
  }

  // What `git apply --directory` makes of a fresh copy of the nested files.
  std::string reference_adapter() {
    const fs::path reference = dir.path() / "reference";
    write_file(reference / adapter, adapter_text);
    write_file(reference / "nested.patch", patch_text);
    must_run({"git", "apply", "--directory=" + std::string(checkout), "nested.patch"}, reference,
             git_env(dir.path()));
    EXPECT_TRUE(fs::exists(reference / created));
    return read_file(reference / adapter);
  }

  TempDir dir;
  fs::path tree;
  Profile profile;
};

INSTANTIATE_TEST_SUITE_P(GitAndArchive, NestedPatchTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "GitCheckout" : "NoGit"; });

TEST_P(NestedPatchTest, AppliesInsideItsCheckoutWithTheTreesPatchesAndRestoresBoth) {
  const std::string ir = read_file(tree / "python/src/ir.cc");
  const PatchOutcome outcome = engine(BuildMode::release).apply(false);
  EXPECT_NE(std::find(outcome.written.begin(), outcome.written.end(), adapter),
            outcome.written.end());
  EXPECT_NE(std::find(outcome.written.begin(), outcome.written.end(), "python/src/ir.cc"),
            outcome.written.end());
  EXPECT_EQ(read_file(tree / adapter), reference_adapter());
  EXPECT_EQ(read_file(tree / created), "int llvm_major() { return 23; }\n");

  const PatchStatus status = engine(BuildMode::release).status();
  EXPECT_TRUE(status.patched_for_mode);
  ASSERT_EQ(status.patches.size(), 2u);
  EXPECT_EQ(status.patches[1].name, "nested_ir_adapter.patch");
  EXPECT_TRUE(status.patches[1].applied);
  EXPECT_NE(std::find(status.files.begin(), status.files.end(),
                      std::pair<std::string, FileStatus>{created, FileStatus::patched}),
            status.files.end());

  const PatchOutcome restored = engine(BuildMode::release).restore(false);
  EXPECT_EQ(read_file(tree / adapter), adapter_text);
  EXPECT_FALSE(fs::exists(tree / created)) << "the file the nested patch added stays behind";
  EXPECT_EQ(read_file(tree / "python/src/ir.cc"), ir);
  EXPECT_FALSE(engine(BuildMode::release).status().patched_for_mode);
}

TEST_P(NestedPatchTest, AnEditOverlappingANestedHunkStopsWithNothingWritten) {
  const std::string mine = replace_once(adapter_text, "value + 22", "value + 99");
  write_file(tree / adapter, mine);
  const std::string ir = read_file(tree / "python/src/ir.cc");
  try {
    engine(BuildMode::release).apply(false);
    FAIL() << "an overlapping edit was patched over";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::patch_conflict) << error.what();
    EXPECT_NE(std::string(error.what()).find(adapter), std::string::npos) << error.what();
  }
  EXPECT_EQ(read_file(tree / adapter), mine);
  EXPECT_EQ(read_file(tree / "python/src/ir.cc"), ir) << "the tree's own patch was written";
  EXPECT_FALSE(fs::exists(tree / created));
}

TEST_P(NestedPatchTest, AnEditOutsideTheHunksSurvivesPatchingAndRestoring) {
  const std::string mine = replace_once(adapter_text, "return value; }", "return -value; }");
  write_file(tree / adapter, mine);
  engine(BuildMode::release).apply(false);
  EXPECT_EQ(read_file(tree / adapter), replace_once(mine, "value + 22", "value + 23"));
  engine(BuildMode::release).restore(false);
  EXPECT_EQ(read_file(tree / adapter), mine);
}

// --force-patches takes the committed content from the nested checkout's own
// HEAD (the outer repository records only its commit).
TEST_P(NestedPatchTest, ForceSavesTheEditAndPatchesTheNestedCommittedContent) {
  const std::string mine = replace_once(adapter_text, "value + 22", "value + 99");
  write_file(tree / adapter, mine);
  if (!is_git()) {
    try {
      engine(BuildMode::release).apply(true);
      FAIL() << "forced without a committed copy";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("not a git checkout"), std::string::npos)
          << error.what();
    }
    EXPECT_EQ(read_file(tree / adapter), mine);
    return;
  }
  const PatchOutcome outcome = engine(BuildMode::release).apply(true);
  ASSERT_EQ(outcome.saved, std::vector<std::string>{adapter});
  EXPECT_EQ(read_file(outcome.saved_dir / adapter), mine);
  EXPECT_EQ(read_file(tree / adapter), reference_adapter());
}

TEST_P(NestedPatchTest, AMissingOrEmptyCheckoutIsOneClearErrorBeforeAnyWrite) {
  for (const bool empty : {false, true}) {
    fs::remove_all(tree / checkout);
    if (empty) {
      fs::create_directories(tree / checkout);  // a submodule not checked out
    }
    const std::string ir = read_file(tree / "python/src/ir.cc");
    try {
      engine(BuildMode::release).apply(false);
      FAIL() << "patched without the checkout";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::bad_input);
      const std::string what = error.what();
      EXPECT_NE(what.find(std::string("the checkout ") + checkout), std::string::npos) << what;
      EXPECT_NE(what.find(empty ? "is empty" : "is missing"), std::string::npos) << what;
      EXPECT_NE(what.find("git submodule update --init"), std::string::npos) << what;
    }
    EXPECT_EQ(read_file(tree / "python/src/ir.cc"), ir);
  }
}

TEST(NestedPatchProfile, ACheckoutOutsideTheTreeIsRefusedAtItsLine) {
  for (const char* bad : {"../elsewhere", "/abs/path", "a/../../b", ""}) {
    const std::string text =
        replace_once(std::string(builtin_profile_text()),
                     "dev = { file = \"triton-ascend-dev-3.6.0.patch\", optional = false }\n",
                     "dev = { file = \"triton-ascend-dev-3.6.0.patch\", optional = false }\n"
                     "nested = [{ file = \"n.patch\", checkout = \"" +
                         std::string(bad) + "\" }]\n");
    try {
      parse_profile(text, "p.toml");
      FAIL() << bad << " accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("key 'patches.nested.checkout'"), std::string::npos)
          << error.what();
      EXPECT_NE(std::string(error.what()).find("a directory under the tree"), std::string::npos)
          << error.what();
    }
  }
}

}  // namespace
