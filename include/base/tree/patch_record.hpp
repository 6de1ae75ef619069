// What the patch engine knows of a patch, and its record of what it applied.
//
// The record lives in the engine's state directory: state.json (format, mode,
// the applied patches' names, hashes and nested checkouts, the hash of every
// file they touch as written) and applied/<name> (the texts), so that a run
// with nothing changed reads a few files and starts no process, and so that a
// changed patch can be undone with its old text. A record that is incomplete or unreadable is
// ignored with a warning (the engine then works the state out from the files).
#pragma once

#include "base/git/unified_diff.hpp"
#include "base/layer/build_mode.hpp"

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace ascend_setup {

struct PatchText {
  std::string name;              // its file name: the key of the record
  std::filesystem::path origin;  // for messages: the profile's file or the recorded copy
  std::string text;
  std::string sha256;
  std::vector<DiffFile> diff;      // its files and hunks (parse_files), tree-relative
  std::vector<std::string> files;  // tree-relative paths it touches, in patch order
  std::set<std::string> created;   // files it adds
  // A nested patch's checkout (tree-relative; empty for the tree's own
  // patches): the patch's paths are relative to it, as `git apply --directory`
  // reads them; `diff` and `files` have it in front.
  std::string checkout;
  // Applied to the files' content with CRLF made LF ([patches] nested
  // crlf_to_lf): the patch is LF, the checkout's files may be CRLF at HEAD.
  bool crlf_to_lf = false;

  bool touches(const std::string& file) const;

  // The text and its hash only: all the no-change check needs.
  static PatchText read(std::string name, std::filesystem::path origin, std::string text,
                        std::string checkout = {});
  // read(), then parse_files().
  static PatchText parse(std::string name, std::filesystem::path origin, std::string text,
                         std::string checkout = {});
  // Fills `diff`, `files` and `created` with parse_unified_diff (libgit2's
  // parser, whose start-up costs milliseconds: not on the no-change path).
  // Throws Error(bad_input) naming `origin` when the text is no patch.
  void parse_files();
};

class PatchRecord {
 public:
  explicit PatchRecord(std::filesystem::path state_dir) : state_dir_(std::move(state_dir)) {}

  // The recorded patches, parsed, in application order (none without a usable record).
  std::vector<PatchText> patches() const;

  // The no-change check: the record names `wanted` with the same texts, and
  // every file it lists still has the content recorded. No process.
  bool matches(const std::vector<PatchText>& wanted, const std::filesystem::path& tree_root) const;

  // Records `wanted` as applied in `mode`, with the current hashes of their
  // files under `tree_root`; state.json is replaced by a rename.
  void save(const std::vector<PatchText>& wanted, BuildMode mode,
            const std::filesystem::path& tree_root) const;

 private:
  std::filesystem::path state_dir_;
};

}  // namespace ascend_setup
