// The one unified-diff reader: the shapes git writes, the shapes it refuses
// with one line naming the patch, and the example tree's real patches as the
// engine and the doctor read them. How the hunks read here match content, as
// git apply does: hunk_check_test.cpp.
#include "base/git/unified_diff.hpp"

#include "base/git/hunk_check.hpp"
#include "base/layer/patch_files.hpp"
#include "base/layer/profile.hpp"
#include "base/tree/patch_record.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

const std::string middle_patch =
    "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@ x\n"
    " line 7\n line 8\n line 9\n-line 10\n+changed\n line 11\n line 12\n line 13\n";

// The one-line Error of bad_input that parse_unified_diff throws for `text`.
std::string refusal(const std::string& text) {
  try {
    const auto files = parse_unified_diff(text, "the.patch");
    ADD_FAILURE() << "accepted, " << files.size() << " file(s): " << text;
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.kind(), ErrorKind::bad_input) << message;
    EXPECT_EQ(message.rfind("malformed patch the.patch: ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  return "";
}

}  // namespace

TEST(UnifiedDiff, ParsesFilesAndHunks) {
  const std::string patch = middle_patch +
                            "diff --git a/new.txt b/new.txt\nnew file mode 100644\n"
                            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
                            "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n"
                            "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
  const auto files = parse_unified_diff(patch, "p");
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "f.txt");
  EXPECT_EQ(files[0].old_path, "f.txt");
  EXPECT_FALSE(files[0].created || files[0].deleted);
  const DiffHunk& hunk = files[0].hunks.at(0);
  EXPECT_EQ(hunk.header, "@@ -7,7 +7,7 @@");
  EXPECT_EQ((std::vector<int>{hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count}),
            (std::vector<int>{7, 7, 7, 7}));
  EXPECT_EQ(hunk.preimage.size(), 7u);
  EXPECT_EQ(hunk.preimage.at(3), "line 10");
  EXPECT_EQ(hunk.postimage.at(3), "changed");
  EXPECT_TRUE(hunk.trailing_context);
  EXPECT_EQ(files[1].path, "new.txt");
  EXPECT_TRUE(files[1].created);
  EXPECT_EQ(files[1].hunks.at(0).postimage, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(files[1].hunks.at(0).trailing_context);
  EXPECT_EQ(files[2].path, "gone.txt");
  EXPECT_TRUE(files[2].deleted);
  EXPECT_EQ(files[2].hunks.at(0).header, "@@ -1 +0,0 @@");
  EXPECT_EQ(files[2].hunks.at(0).old_count, 1);
}

TEST(UnifiedDiff, CutShortHunkIsOneLineNamingThePatch) {
  refusal("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n");
  // a line that is no hunk line where the hunk still needs lines
  refusal("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n?b\n");
}

// A path that leaves the tree is refused, whichever header it comes from;
// the fuzz finding of issue 38 (a `---` header libgit2 read loosely as
// `b/../tritona/f.c`) among them.
TEST(UnifiedDiff, APathThatLeavesTheTreeIsRefused) {
  for (const std::string& header :
       {std::string("diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n"),
        std::string("diff --git a/x/../../y b/x/../../y\n--- a/x/../../y\n+++ b/x/../../y\n")}) {
    const std::string message = refusal(header + "@@ -1 +1 @@\n-a\n+b\n");
    EXPECT_NE(message.find("leaves the tree"), std::string::npos) << message;
  }
  const std::string finding = read_file(fs::path(SOURCE_DIR) / "tests/fuzz/unified_diff/crashes" /
                                        "crash-0f14a07fbc424a75895d9583f7730293128a964b");
  const std::string message = refusal(finding);
  EXPECT_NE(message.find("the path '../tritona/f.c' leaves the tree"), std::string::npos)
      << message;
}

TEST(UnifiedDiff, TextWithNoFileIsRefused) {
  for (const std::string& text :
       {std::string(), std::string("this is not a patch\n"),
        std::string("From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] nothing\n\n---\n")}) {
    refusal(text);
  }
}

TEST(UnifiedDiff, PlainDiffWithoutGitHeaderIsRefusedSayingSo) {
  // as `diff -u` writes it (the old reader took these; the engine never did)
  const std::string message = refusal("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
  EXPECT_NE(message.find("no \"diff --git\" header"), std::string::npos) << message;
}

TEST(UnifiedDiff, ModeChangeAloneIsAFileWithoutHunks) {
  const auto files =
      parse_unified_diff("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n", "p");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "run.sh");
  EXPECT_TRUE(files[0].hunks.empty());
  // the file missing is a finding; present, nothing to check
  EXPECT_EQ(failing_hunks(files[0], std::nullopt).size(), 1u);
  EXPECT_TRUE(failing_hunks(files[0], std::string("echo\n")).empty());
}

TEST(UnifiedDiff, RenameNamesBothPathsAndTheHunksApplyToTheOldOne) {
  const std::string patch =
      "diff --git a/old.txt b/new.txt\nsimilarity index 80%\nrename from old.txt\n"
      "rename to new.txt\nindex 1111111..2222222 100644\n--- a/old.txt\n+++ b/new.txt\n"
      "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
  const auto files = parse_unified_diff(patch, "p");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "new.txt");
  EXPECT_EQ(files[0].old_path, "old.txt");
  EXPECT_FALSE(files[0].created);
  const auto results = check_hunks(files[0], std::string("a\nb\nc\n"));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].fit, HunkFit::applies);

  const PatchText text = PatchText::parse("p", "p", patch);
  EXPECT_EQ(text.files, (std::vector<std::string>{"old.txt", "new.txt"}));
  EXPECT_TRUE(text.created.empty());
}

TEST(UnifiedDiff, BinaryPatchIsAFileWithoutHunks) {
  // git diff --binary of blob.bin, "\0\1\2" to "\0\3\2\4"
  const auto files = parse_unified_diff(
      "diff --git a/blob.bin b/blob.bin\n"
      "index 8352675d67aed6625ece79af41c27fdb4ee2e867..38fc5cf44a1a291f430e9ec6b426a7e5b916388c "
      "100644\nGIT binary patch\nliteral 4\nLcmZQzW?}&V02KfV\n\nliteral 3\nKcmZQzWC8#H2LJ>B\n\n",
      "p");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "blob.bin");
  EXPECT_TRUE(files[0].hunks.empty());
}

TEST(UnifiedDiff, NewFilesAreCreatedInThePatchRecord) {
  const PatchText text =
      PatchText::parse("p", "p",
                       middle_patch +
                           "diff --git a/new.txt b/new.txt\nnew file mode 100644\n"
                           "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+a\n");
  EXPECT_EQ(text.files, (std::vector<std::string>{"f.txt", "new.txt"}));
  EXPECT_EQ(text.created, (std::set<std::string>{"new.txt"}));
  EXPECT_EQ(text.diff.size(), 2u);
}

// Every patch the profiles name, as the example tree has it: read, and every
// hunk fits the tree's files; the record lists the same files.
TEST(UnifiedDiff, TheExampleTreesPatchesFitItsFiles) {
  const fs::path tree = EXAMPLE_TREE;
  for (const std::string_view profile_text : {builtin_profile_text(), in_tree_profile_text()}) {
    const Profile profile = parse_profile(std::string(profile_text), "profile");
    const auto patch_files = profile_patch_files(profile, std::nullopt);
    ASSERT_EQ(patch_files.size(), 2u);
    for (const ProfilePatchFile& patch_file : patch_files) {
      const std::string text = read_file(tree / patch_file.relative);
      const auto files = parse_unified_diff(text, patch_file.relative.string());
      ASSERT_FALSE(files.empty()) << patch_file.relative;
      std::vector<std::string> paths;
      for (const DiffFile& file : files) {
        paths.push_back(file.path);
        ASSERT_FALSE(file.hunks.empty()) << file.path;
        for (const HunkResult& result : check_hunks(file, read_file(tree / file.path))) {
          EXPECT_EQ(result.fit, HunkFit::applies) << result.describe();
        }
      }
      EXPECT_EQ(PatchText::parse("p", patch_file.relative, text).files, paths);
    }
  }
}
