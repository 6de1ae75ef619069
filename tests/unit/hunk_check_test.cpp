// The hunk check against `git apply --check` itself: for each case, one file
// and a one-hunk patch; the check says "applies" exactly when git does, and
// names the line that differs when not.
#include "base/git/hunk_check.hpp"

#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

std::string numbered(int first, int last) {
  std::string text;
  for (int i = first; i <= last; ++i) {
    text += "line " + std::to_string(i) + "\n";
  }
  return text;
}

// Line 10 becomes "changed", context lines 7-9 and 11-13.
const std::string middle_patch =
    "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@ x\n"
    " line 7\n line 8\n line 9\n-line 10\n+changed\n line 11\n line 12\n line 13\n";

// Appends at the end: no trailing context, so it must match at the end.
const std::string end_patch =
    "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -18,3 +18,4 @@\n"
    " line 18\n line 19\n line 20\n+line 21\n";

bool git_applies(const std::string& content, const std::string& patch) {
  TempDir dir;
  write_file(dir.path() / "f.txt", content);
  ProcessSpec spec;
  spec.argv = {"git", "apply", "--check"};
  spec.cwd = dir.path();
  spec.stdin_text = patch;
  spec.env_changes = {{"GIT_CEILING_DIRECTORIES", dir.path().parent_path().string()}};
  return run_process(spec).exit_code == 0;
}

HunkResult only_hunk(const std::string& content, const std::string& patch) {
  const auto files = parse_unified_diff(patch, "test.patch");
  EXPECT_EQ(files.size(), 1u);
  const auto results = check_hunks(files.at(0), content);
  EXPECT_EQ(results.size(), 1u);
  return results.at(0);
}

struct Case {
  std::string name, content, patch;
  HunkFit fit;
};

}  // namespace

TEST(HunkCheck, ParsesFilesAndHunks) {
  const std::string patch = middle_patch +
                            "diff --git a/new.txt b/new.txt\nnew file mode 100644\n"
                            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n";
  const auto files = parse_unified_diff(patch, "p");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "f.txt");
  EXPECT_EQ(files[0].hunks.at(0).header, "@@ -7,7 +7,7 @@");
  EXPECT_EQ(files[0].hunks.at(0).preimage.size(), 7u);
  EXPECT_EQ(files[1].path, "new.txt");
  EXPECT_TRUE(files[1].created);
  EXPECT_EQ(files[1].hunks.at(0).postimage, (std::vector<std::string>{"a", "b"}));
}

TEST(HunkCheck, CutShortHunkIsMalformed) {
  EXPECT_THROW(parse_unified_diff("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n", "p"), Error);
}

TEST(HunkCheck, AgreesWithGitApply) {
  const std::vector<Case> cases = {
      {"exact", numbered(1, 20), middle_patch, HunkFit::applies},
      {"moved down 5 lines", "a\nb\nc\nd\ne\n" + numbered(1, 20), middle_patch, HunkFit::applies},
      {"moved up 4 lines", numbered(5, 20), middle_patch, HunkFit::applies},
      {"context changed", numbered(1, 8) + "line nine\n" + numbered(10, 20), middle_patch,
       HunkFit::does_not_apply},
      {"already applied", numbered(1, 9) + "changed\n" + numbered(11, 20), middle_patch,
       HunkFit::already_applied},
      {"end at the end", numbered(1, 20), end_patch, HunkFit::applies},
      {"end no longer at the end", numbered(1, 22), end_patch, HunkFit::does_not_apply},
  };
  for (const Case& c : cases) {
    const HunkResult result = only_hunk(c.content, c.patch);
    EXPECT_EQ(result.fit, c.fit) << c.name << ": " << result.describe();
    EXPECT_EQ(result.fit == HunkFit::applies, git_applies(c.content, c.patch)) << c.name;
  }
}

TEST(HunkCheck, NamesTheFirstDifferingLine) {
  const HunkResult result =
      only_hunk(numbered(1, 8) + "line nine\n" + numbered(10, 20), middle_patch);
  ASSERT_EQ(result.fit, HunkFit::does_not_apply);
  EXPECT_EQ(result.line, 9);
  EXPECT_EQ(result.expected, "line 9");
  EXPECT_EQ(result.found, "line nine");
  EXPECT_EQ(result.describe(),
            "f.txt @@ -7,7 +7,7 @@: line 9 has \"line nine\", the patch expects \"line 9\"");
}

TEST(HunkCheck, MissingFileIsOneResult) {
  const auto files = parse_unified_diff(middle_patch, "p");
  const auto results = failing_hunks(files.at(0), std::nullopt);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].describe(), "f.txt: missing (the patch changes it)");
}
