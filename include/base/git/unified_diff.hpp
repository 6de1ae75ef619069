// A patch read into files and hunks: the one reader of unified diffs, libgit2's
// patch parser (git_diff_from_buffer), used by the patch engine, its record
// and the doctor. A pure function of the text: no file system, no repository.
//
// It accepts what `git diff` and `git format-patch` write: one "diff --git"
// header per file (mail headers and a signature around them are skipped),
// hunks with their "\ No newline at end of file" markers, new and deleted
// files, mode changes, renames and copies, binary patches. It refuses, with
// Error(bad_input) "malformed patch ORIGIN: WHY" (one line): text with no
// file in it, plain "---"/"+++" diffs without a "diff --git" header (as
// `diff -u` writes them), a hunk cut short or with a line that is not ' ',
// '-', '+' or '\', a last line without its newline, a hunk header longer than
// 127 bytes, paths that disagree between the headers, a path that leaves the tree (absolute,
// empty or with a `..` part), a NUL byte anywhere. Nothing else escapes
// on any input (but std::bad_alloc, as for any allocation), and nothing of
// libgit2 is left allocated.
#pragma once

#include <string>
#include <vector>

namespace ascend_setup {

struct DiffHunk {
  std::string header;  // "@@ -a,b +c,d @@" as the patch writes it, without the context after it
  int old_start = 0, old_count = 0, new_start = 0, new_count = 0;
  // Lines without their newline ("x\r" for a CRLF line); the "\ No newline"
  // markers are dropped, so a last line without a newline reads as one with.
  std::vector<std::string> preimage, postimage;
  bool trailing_context = false;  // ends with a context line
};

struct DiffFile {
  std::string path;      // tree-relative: the new name, else (deleted) the old one
  std::string old_path;  // the name the hunks apply to: the old name (path unless renamed, copied)
  bool created = false;  // new file (--- /dev/null)
  bool deleted = false;  // deleted file (+++ /dev/null)
  std::vector<DiffHunk> hunks;  // none for a mode change, a pure rename, a binary patch
};

// Every file of `text` with its hunks, in patch order. Throws Error(bad_input)
// naming `origin` when the text is no patch (see above).
std::vector<DiffFile> parse_unified_diff(const std::string& text, const std::string& origin);

// Each path of `files` taken as relative to `directory` (tree-relative, as
// the profile's nested checkouts are), as `git apply --directory` reads a
// patch made inside a nested checkout. An empty `directory` changes nothing.
void place_under(std::vector<DiffFile>& files, const std::string& directory);

}  // namespace ascend_setup
