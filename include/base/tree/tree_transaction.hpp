// Writes a set of files into a source tree all or nothing:
//  1. stage() notes each file's new content, or its removal. A symlinked file
//     is written through the link when the target lies inside the tree and
//     refused (Error) when it lies outside; the link stays a link. So is
//     every directory on the file's way below the tree root: a symlinked
//     directory leading inside the tree is followed, one leading outside is
//     refused (Error naming the file and the link) before anything is written.
//  2. write() first saves the old state of every file (bytes and mode,
//     "absent", or a link's target) and a journal naming them and the
//     temporaries, synced to disk, under `journal_dir`; only then it replaces
//     each file by renaming a synced temporary (a unique name in the file's
//     own directory, the file's mode and owner) over it. A failure or a stop
//     signal between two files rolls every file back, then rethrows.
//  3. finish() deletes the journal: the change is final. A transaction that
//     wrote and was not finished rolls back when destroyed.
// recover() rolls back what a killed run (SIGKILL, power loss) left: callers
// run it, holding the tree's lock, before anything else reads the tree.
// Failed system calls throw Error naming the path and the system's reason.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

class TreeTransaction {
 public:
  TreeTransaction(std::filesystem::path tree_root, std::filesystem::path journal_dir);
  ~TreeTransaction();
  TreeTransaction(const TreeTransaction&) = delete;
  TreeTransaction& operator=(const TreeTransaction&) = delete;

  // `file` is tree-relative; nullopt content removes it. `new_file_mode`
  // applies to a file that does not exist yet (an existing one keeps its own).
  void stage(const std::string& file, std::optional<std::string> content, unsigned new_file_mode);
  void write();
  void finish();

  // True when a journal was found and the tree rolled back from it.
  static bool recover(const std::filesystem::path& journal_dir);

  struct Entry;

 private:
  std::filesystem::path tree_root_;
  std::filesystem::path journal_dir_;
  std::vector<Entry> entries_;
  bool written_ = false;
};

}  // namespace ascend_setup
