// A file or a directory replaced whole or not at all, the one way every unit
// puts a finished thing in place (a clone, a fetched repository, a package, a
// payload, a wheel): the new one is written beside its target under a name of
// its own (".<target name>.ascend-setup-<what>-<pid>"), synced (fsync of each
// of its files and directories, never of the whole file system), then put in
// place in one step: renamed over an absent target, a file or an empty
// directory (renameat2 RENAME_NOREPLACE), or exchanged with a present one
// (RENAME_EXCHANGE) and the old one removed after; then the parent directory
// is synced. Destroyed without commit(), the staged copy is removed: a
// failure or a stop leaves the target as it was.
//
// Only the holder of the target's lock writes beside it, so the lock is part
// of the API: the constructor takes it and first removes what stopped runs
// staged under the same `what`, whatever their pid (a run in another
// container that shares the cache has pids this one cannot see).
//
// Where renameat2's flags are missing (NFS, some FUSE file systems: EINVAL),
// a file or a link still replaces its target in one rename(2), and so does a
// directory whose target is absent. A directory cannot replace a present one
// in one step there: the old one is moved aside (".<target
// name>.ascend-setup-<what>-<pid>-old"), the new one moved in, the old one
// removed; a failed move-in puts the old one back at once. What this cannot
// guarantee: between the two renames, a reader that holds no lock (another
// container's build reading the package) finds no target; a run killed there
// leaves the old one aside, and the next holder of the lock puts it back
// before anything else (remove_leftovers).
//
// Failed system calls throw Error (system_error.hpp: a full disk says so).
// is_staged_name() is the one test of that naming pattern: what a killed run
// may leave is never taken for content (the wheel writer packs no such name).
#pragma once

#include "base/util/held_lock.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace ascend_setup {

class StagedReplacement {
 public:
  // `held`: the lock that keeps other writers of `target` out. Creates the
  // parent directory and removes the leftovers (remove_leftovers); nothing
  // else is created: staged() is absent.
  StagedReplacement(const HeldLock& held, std::filesystem::path target, const std::string& what);
  ~StagedReplacement();
  StagedReplacement(const StagedReplacement&) = delete;
  StagedReplacement& operator=(const StagedReplacement&) = delete;

  // Where to write the new file or directory.
  const std::filesystem::path& staged() const { return staged_; }
  const std::filesystem::path& target() const { return target_; }

  // Syncs what staged() holds, puts it in place of the target, syncs the
  // parent directory.
  void commit();

  // What stopped runs staged beside `target` under `what`: an old target a
  // killed run moved aside is put back when the target is absent; every
  // other one is removed.
  static void remove_leftovers(const HeldLock& held, const std::filesystem::path& target,
                               const std::string& what);

 private:
  void replace_without_flags();

  std::filesystem::path target_;
  std::filesystem::path staged_;
  bool committed_ = false;
};

// Whether `name` (a file name, no directory) is one a StagedReplacement gives
// its staged copy (".<target name>.ascend-setup-<what>-<pid>") or the old one
// it moves aside (the same, then "-old").
bool is_staged_name(std::string_view name);

// `link` made a symbolic link to `target` in one rename: a link made beside
// it under a staged name (".<link name>.ascend-setup-link-<pid>") renamed
// over it, so a reader never finds it missing; nothing is done when it points
// there already. `link` must be absent or a symbolic link (a caller leaves
// anything else alone). Failed system calls throw Error (system_error.hpp).
void point_symlink_at(const std::filesystem::path& link, const std::filesystem::path& target);

// Syncs a directory's entries (fsync of the directory itself).
void sync_directory(const std::filesystem::path& directory);

}  // namespace ascend_setup
