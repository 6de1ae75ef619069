// A nested patch marked crlf_to_lf ([patches] nested): the 3.8.0 line's
// NPU-IR patch is LF while some AscendNPU-IR sources are CRLF at HEAD. The
// engine patches those files with CRLF made LF, as the maintainers' layer
// converts them before `git apply`; a restore gives the committed bytes
// back, CRLF and all, and removes the file the patch added; a rebuild
// patches again with nothing to change.
#include "base/layer/profile.hpp"
#include "base/tree/patch_engine.hpp"
#include "base/util/error.hpp"
#include "base/util/strings.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace nested_crlf_test {  // named: the unity build joins it with nested_patch_test

const char* const checkout = "third_party/ascend/NestedIR";
const char* const nested_patch = "third_party/ascend/patch/nested_ir_llvm24.patch";
const char* const lists = "third_party/ascend/NestedIR/CMakeLists.txt";
const char* const created = "third_party/ascend/NestedIR/lib/Llvm24.cpp";

const char* const lists_crlf =
    "cmake_minimum_required(VERSION 3.20)\r\n"
    "project(nested CXX)\r\n"
    "set(LLVM_MAJOR 23)\r\n"
    "add_library(nested lib/Adapter.cpp)\r\n";

const char* const patch_text =
    "diff --git a/CMakeLists.txt b/CMakeLists.txt\n"
    "--- a/CMakeLists.txt\n"
    "+++ b/CMakeLists.txt\n"
    "@@ -1,4 +1,4 @@\n"
    " cmake_minimum_required(VERSION 3.20)\n"
    " project(nested CXX)\n"
    "-set(LLVM_MAJOR 23)\n"
    "+set(LLVM_MAJOR 24)\n"
    " add_library(nested lib/Adapter.cpp)\n"
    "diff --git a/lib/Llvm24.cpp b/lib/Llvm24.cpp\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/lib/Llvm24.cpp\n"
    "@@ -0,0 +1 @@\n"
    "+int llvm_major() { return 24; }\n";

class NestedCrlfPatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = copy_example_tree(dir.path());
    write_file(tree / lists, lists_crlf);
    write_file(tree / checkout / "lib/Adapter.cpp", "int adapt() { return 0; }\n");
    write_file(tree / nested_patch, patch_text);
    make_git_repo(tree / checkout, dir.path());
    make_git_repo(tree, dir.path());
    ASSERT_EQ(
        must_run({"git", "show", "HEAD:CMakeLists.txt"}, tree / checkout, git_env(dir.path())),
        lists_crlf)
        << "git changed the committed line endings";
  }

  Profile profile_with(bool crlf_to_lf) {
    return parse_profile(
        replace_once(std::string(builtin_profile_text()),
                     "dev = { file = \"triton-ascend-dev-3.6.0.patch\", optional = false }\n",
                     "dev = { file = \"triton-ascend-dev-3.6.0.patch\", optional = false }\n"
                     "nested = [{ file = \"nested_ir_llvm24.patch\", checkout = \"" +
                         std::string(checkout) +
                         "\", crlf_to_lf = " + (crlf_to_lf ? "true" : "false") + " }]\n"),
        "built-in with a nested CRLF patch");
  }

  PatchEngine engine(const Profile& profile) {
    return PatchEngine(tree, profile, BuildMode::release, PatchEngine::default_state_dir(tree));
  }

  TempDir dir;
  fs::path tree;
};

TEST_F(NestedCrlfPatchTest, PatchesWithLfAndRestoresTheCommittedCrlfBytes) {
  const Profile profile = profile_with(true);
  const std::string lf_patched =
      replace_all(replace_once(lists_crlf, "LLVM_MAJOR 23", "LLVM_MAJOR 24"), "\r\n", "\n");
  for (int round = 0; round < 2; ++round) {  // a rebuild after a restore patches again
    const PatchOutcome outcome = engine(profile).apply(false);
    EXPECT_NE(std::find(outcome.written.begin(), outcome.written.end(), lists),
              outcome.written.end());
    EXPECT_EQ(read_file(tree / lists), lf_patched);
    EXPECT_EQ(read_file(tree / created), "int llvm_major() { return 24; }\n");
    EXPECT_TRUE(engine(profile).status().patched_for_mode);

    fs::remove_all(PatchEngine::default_state_dir(tree) / "state.json");  // no record: worked out
    const PatchOutcome again = engine(profile).apply(false);
    EXPECT_TRUE(again.written.empty()) << "a second build changed " << again.written.front();

    engine(profile).restore(false);
    EXPECT_EQ(read_file(tree / lists), lists_crlf) << "the committed CRLF bytes are not back";
    EXPECT_FALSE(fs::exists(tree / created));
    EXPECT_EQ(must_run({"git", "status", "--porcelain"}, tree / checkout, git_env(dir.path())), "");
    EXPECT_FALSE(engine(profile).status().patched_for_mode);
  }
}

TEST_F(NestedCrlfPatchTest, WithoutTheRuleTheLfPatchDoesNotFitTheCrlfFile) {
  try {
    engine(profile_with(false)).apply(false);
    FAIL() << "an LF patch applied to a CRLF file";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::patch_stale) << error.what();
  }
  EXPECT_EQ(read_file(tree / lists), lists_crlf);
  EXPECT_FALSE(fs::exists(tree / created));
}

TEST_F(NestedCrlfPatchTest, ForceTakesTheCommittedCrlfContentAsLf) {
  const Profile profile = profile_with(true);
  write_file(tree / lists, replace_once(lists_crlf, "LLVM_MAJOR 23", "LLVM_MAJOR 99"));
  const PatchOutcome outcome = engine(profile).apply(true);
  ASSERT_EQ(outcome.saved, std::vector<std::string>{lists});
  EXPECT_EQ(read_file(tree / lists),
            replace_all(replace_once(lists_crlf, "LLVM_MAJOR 23", "LLVM_MAJOR 24"), "\r\n", "\n"));
}

}  // namespace nested_crlf_test
