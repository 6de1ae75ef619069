// A file or a directory replaced whole or not at all, the one way every unit
// puts a finished thing in place (a clone, a fetched repository, a package, a
// payload, a wheel): the new one is written beside its target under a name of
// its own (".<target name>.ascend-setup-<what>-<pid>"), synced, then put in
// place in one step: renamed over an absent target or an empty directory,
// exchanged with a present one (renameat2 RENAME_EXCHANGE) and the old one
// removed after. Where the file system cannot exchange, the old one is moved
// aside first and back again when the rename fails. Destroyed without
// commit(), the staged copy is removed: a failure or a stop leaves the target
// as it was. Failed system calls throw Error (system_error.hpp: a full disk
// says so). is_staged_name() is the one test of that naming pattern: what a
// killed run may leave is never taken for content (the wheel writer packs no
// such name).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace ascend_setup {

class StagedReplacement {
 public:
  // Nothing is created: staged() is absent (a leftover of the same name, a
  // killed run's with this pid, is removed), its parent exists.
  StagedReplacement(std::filesystem::path target, const std::string& what);
  ~StagedReplacement();
  StagedReplacement(const StagedReplacement&) = delete;
  StagedReplacement& operator=(const StagedReplacement&) = delete;

  // Where to write the new file or directory.
  const std::filesystem::path& staged() const { return staged_; }
  const std::filesystem::path& target() const { return target_; }

  // Syncs what staged() holds (a file: fsync; a directory: its file system),
  // puts it in place of the target, syncs the parent directory.
  void commit();

  // Removes every sibling of `target` staged under `what` by any run: only
  // for a caller holding the lock that keeps other writers of `target` out
  // (a run in another container has pids this one cannot see).
  static void remove_leftovers(const std::filesystem::path& target, const std::string& what);

 private:
  std::filesystem::path target_;
  std::filesystem::path staged_;
  bool committed_ = false;
};

// Whether `name` (a file name, no directory) is one a StagedReplacement gives
// its staged copy (".<target name>.ascend-setup-<what>-<pid>") or the old one
// it moves aside (the same, then "-old").
bool is_staged_name(std::string_view name);

// Syncs a directory's entries (fsync of the directory itself).
void sync_directory(const std::filesystem::path& directory);

}  // namespace ascend_setup
