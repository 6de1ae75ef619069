// The Ascend source patches, applied safely: the tree is brought to
// "patched for this mode" with `git apply` semantics (a hunk whose context
// moved still applies), all or nothing, keeping the user's own edits, and
// without touching a file that already has the right content.
//
// All work happens on copies in a scratch directory; the tree is written only
// once every hunk of every patch applied there, as one TreeTransaction (a
// journal under the state directory, rolled back on any failure, stop signal
// or, by the next run, after a kill), holding the tree's lock (state
// directory/tree.lock) so that concurrent runs take turns. What was applied is
// recorded under the state directory (patch_record.hpp).
//
// A nested patch marked crlf_to_lf ([patches] nested) works on its files with
// CRLF made LF, as the maintainers' layer converts them before `git apply`;
// a file that ends as its tree or committed content but for the line endings
// (a restore) gets those bytes back, CRLF included. A file a patch adds is
// part of the patch: undone by a restore, created again by the next apply.
#pragma once

#include "base/layer/build_mode.hpp"
#include "base/layer/profile.hpp"
#include "base/tree/file_lock.hpp"
#include "base/tree/patch_record.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

class TreeTransaction;

enum class FileStatus { pristine, patched, patched_by_older_patch, locally_modified, missing };

std::string_view to_string(FileStatus status);

struct PatchStatus {
  struct Patch {
    std::string name;
    bool applied = false;
    bool wanted = false;  // part of this mode's patch set
  };
  std::vector<Patch> patches;
  std::vector<std::pair<std::string, FileStatus>> files;  // tree-relative paths
  bool patched_for_mode = false;
};

struct PatchOutcome {
  bool up_to_date = false;           // nothing was done, not even a check
  std::vector<std::string> written;  // tree-relative paths whose content changed
  std::filesystem::path saved_dir;   // where --force-patches saved local edits
  std::vector<std::string> saved;    // tree-relative paths saved there
};

class PatchEngine {
 public:
  // `state_dir` holds the record of what was applied (created on demand).
  PatchEngine(std::filesystem::path tree_root, const Profile& profile, BuildMode mode,
              std::filesystem::path state_dir);

  // The default state directory: <tree>/build/ascend-setup/patches.
  static std::filesystem::path default_state_dir(const std::filesystem::path& tree_root);

  // Brings the tree to "patched for this mode". A patch whose hunks do not
  // fit the committed content stops it (Error patch_stale, every hunk named).
  // Local edits that overlap a hunk stop it (Error patch_conflict, nothing
  // written) unless `force`: then those files are saved under the state
  // directory (each one logged) and patched from their committed content.
  PatchOutcome apply(bool force);

  // Returns every patched file to its unpatched content, keeping local edits
  // (an overlapping one stops it unless `force`, as apply()).
  PatchOutcome restore(bool force);

  PatchStatus status();

 private:
  using Patch = PatchText;
  struct Analysis;

  std::vector<Patch> wanted_patches() const;  // read and hashed, not parsed
  void require_checkout(const PatchFile& entry, const std::filesystem::path& patch) const;
  // The analysis, step by step: what may be applied, the files copied into
  // the scratch directory, the candidates undone there, the wanted applied.
  Analysis analyse(const std::vector<Patch>& wanted) const;
  std::vector<Patch> candidates(const std::vector<Patch>& wanted) const;
  void copy_files(Analysis& analysis, const std::vector<Patch>& wanted) const;
  void undo_candidates(Analysis& analysis) const;
  void apply_wanted(Analysis& analysis, const std::vector<Patch>& wanted) const;
  void restore_line_endings(const Analysis& analysis) const;
  static PatchStatus recorded_status(const std::vector<Patch>& wanted);
  static std::pair<FileStatus, bool> file_status(const Analysis& analysis, const std::string& file,
                                                 const std::vector<Patch>& wanted);
  PatchOutcome reconcile(const std::vector<Patch>& wanted, bool force,
                         TreeTransaction& transaction);
  void report_troubled_files(const std::vector<std::string>& troubled, const Analysis& analysis,
                             const std::vector<Patch>& wanted, bool force) const;
  std::filesystem::path journal_dir() const;
  FileLock lock_tree() const;

  std::filesystem::path tree_root_;
  const Profile& profile_;
  BuildMode mode_;
  std::filesystem::path state_dir_;
  PatchRecord record_;
};

// A run stopped while it patched `tree_root` (SIGKILL, power loss) left a
// journal: the files go back as they were, under the tree's lock. Nothing
// happens (no file is created) when there is no journal.
void recover_interrupted_patching(const std::filesystem::path& tree_root);

// The patch step of a build (CMakeBuild.run()) and of --apply-patches: picks
// the mode (build_mode.hpp), brings the tree to "patched for this mode" and logs
// what it did.
PatchOutcome patch_source_tree(const std::filesystem::path& tree_root, const Profile& profile,
                               std::optional<BuildMode> forced_mode, bool force);

}  // namespace ascend_setup
