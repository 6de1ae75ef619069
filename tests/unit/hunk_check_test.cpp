// The hunk check against `git apply --check` itself: for each case, one file
// and a one-hunk patch; the check says "applies" exactly when git does, and
// names the line that differs when not.
#include "base/git/hunk_check.hpp"

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

// `git diff` of `before` and `after` as f.txt in a real repository.
std::string diff_by_git(const std::string& before, const std::string& after) {
  TempDir dir;
  const fs::path repo = dir.path() / "repo";
  fs::create_directories(repo);
  write_file(repo / "f.txt", before);
  make_git_repo(repo, dir.path() / "home");
  write_file(repo / "f.txt", after);
  return must_run({"git", "-c", "core.autocrlf=false", "diff"}, repo, git_env(dir.path() / "home"));
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

// The "\ No newline at end of file" markers are no lines of either image: a
// last line without its newline matches as git apply matches it.
TEST(HunkCheck, NoNewlineAtEndOfFileAgreesWithGitApply) {
  for (const auto& [before, after] : std::vector<std::pair<std::string, std::string>>{
           {"a\nb", "a\nc"}, {"a\nb", "a\nc\n"}, {"a\nb\n", "a\nc"}, {"a\nb", "a\nb\nc"}}) {
    const std::string patch = diff_by_git(before, after);
    ASSERT_NE(patch.find("\\ No newline at end of file"), std::string::npos) << patch;
    EXPECT_EQ(only_hunk(before, patch).fit, HunkFit::applies) << patch;
    EXPECT_TRUE(git_applies(before, patch)) << patch;
    EXPECT_EQ(only_hunk(after, patch).fit, HunkFit::already_applied) << patch;
  }
}

// A CRLF file's lines keep their carriage return: its patch fits it, not the
// same text with LF line ends (nor does git apply take it there).
TEST(HunkCheck, CrlfLinesAgreeWithGitApply) {
  const std::string before = "one\r\ntwo\r\nthree\r\n";
  const std::string patch = diff_by_git(before, "one\r\n2\r\nthree\r\n");
  EXPECT_EQ(parse_unified_diff(patch, "p").at(0).hunks.at(0).preimage,
            (std::vector<std::string>{"one\r", "two\r", "three\r"}));
  EXPECT_EQ(only_hunk(before, patch).fit, HunkFit::applies);
  EXPECT_TRUE(git_applies(before, patch));
  const std::string unix_lines = "one\ntwo\nthree\n";
  EXPECT_EQ(only_hunk(unix_lines, patch).fit, HunkFit::does_not_apply);
  EXPECT_FALSE(git_applies(unix_lines, patch));
}
