// Hunk by hunk, does a patch fit a given content? Each hunk of a patch read
// by parse_unified_diff (unified_diff.hpp) is looked for in the content with
// `git apply`'s rules: the exact preimage (context and removed
// lines, no fuzz), searched outward from the hunk's stated line; a hunk
// starting at line 1 must match at the start, one without trailing context at
// the end. A hunk whose preimage is absent but whose postimage is present is
// "already applied"; otherwise the report names the first line that differs
// where the hunk fits best. Each hunk is checked against the content as
// given (line numbers are the content's), not against the result of the
// hunks before it.
#pragma once

#include "base/git/unified_diff.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

enum class HunkFit { applies, already_applied, does_not_apply };

struct HunkResult {
  std::string file;
  std::string header;
  HunkFit fit = HunkFit::applies;
  // does_not_apply: the first differing line (1-based, in the content) where
  // the hunk fits best, what the patch expects there and what is there
  // (`at_end`: the content ends before it).
  int line = 0;
  std::string expected, found;
  bool at_end = false;

  // "FILE @@ -a,b +c,d @@: already applied" or "...: line N has "X", the patch expects "Y"".
  std::string describe() const;
};

// Every hunk of `file` against `content` (nullopt: the file does not exist;
// then a patch that does not create it fails with one result naming no hunk).
std::vector<HunkResult> check_hunks(const DiffFile& file,
                                    const std::optional<std::string>& content);

// Only the hunks that do not apply (already-applied ones included).
std::vector<HunkResult> failing_hunks(const DiffFile& file,
                                      const std::optional<std::string>& content);

}  // namespace ascend_setup
