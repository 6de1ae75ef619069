// The Ascend patch files (git's unified diff), read by parse_unified_diff
// (libgit2's parser) for the patch engine, its record and the doctor.
// Invariants: only Error refuses a patch; every path it names stays in the
// tree (relative, no `..` part); each hunk holds as many preimage and
// postimage lines as its header counts;
// a hunk checked against a file made of exactly its own preimage fits there
// (applies, or is already applied when it changes nothing).
#include "base/git/hunk_check.hpp"
#include "base/git/unified_diff.hpp"
#include "fuzz_support.hpp"

using namespace ascend_setup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  const auto files = fuzz::parsed([&] { return parse_unified_diff(text, "fuzz.patch"); });
  if (!files) {
    return 0;
  }
  for (const DiffFile& file : *files) {
    FUZZ_CHECK(!file.path.empty() && !file.old_path.empty(), "a file without a path");
    for (const std::string& path : {file.path, file.old_path}) {
      const std::filesystem::path parsed(path);
      bool dotdot = false;
      for (const auto& part : parsed) {
        dotdot = dotdot || part == "..";
      }
      FUZZ_CHECK(parsed.is_relative() && !dotdot && path.find('\0') == std::string::npos,
                 "a path that leaves the tree: " + path);
    }
    for (const DiffHunk& hunk : file.hunks) {
      FUZZ_CHECK(hunk.preimage.size() == static_cast<std::size_t>(hunk.old_count) &&
                     hunk.postimage.size() == static_cast<std::size_t>(hunk.new_count),
                 "the lines of " + hunk.header + " are not the counts of its header");
      if (file.created || hunk.preimage.empty()) {
        continue;
      }
      std::string content;
      for (const std::string& line : hunk.preimage) {
        content += line + "\n";
      }
      DiffFile alone = file;
      alone.hunks = {hunk};
      std::vector<HunkResult> results;
      FUZZ_CHECK(fuzz::accepts([&] { results = check_hunks(alone, content); }),
                 "check_hunks refused a parsed hunk");
      FUZZ_CHECK(results.size() == 1, "one hunk, one result");
      FUZZ_CHECK(results[0].fit != HunkFit::does_not_apply,
                 "a hunk does not fit a file made of its own preimage: " + results[0].describe());
    }
  }
  return 0;
}
