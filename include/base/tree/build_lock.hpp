// The lock of a tree's build (build/ascend-setup/build.lock): two builds of
// one tree take turns. What a build writes in the tree (the payload in
// build_lib, the wheel in dist/, its digests, the report) is put in place
// under it (StagedReplacement asks for it); the commands setup() runs, which
// cannot be handed it, find it with held_build_lock().
#pragma once

#include "base/tree/file_lock.hpp"

#include <filesystem>

namespace ascend_setup {

class BuildLock {
 public:
  // Waits for the lock (FileLock); one at a time in a process.
  explicit BuildLock(const std::filesystem::path& tree_root);
  ~BuildLock();
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;

  const HeldLock& held() const { return lock_; }

 private:
  FileLock lock_;
};

// The build lock this process holds; std::logic_error when it holds none
// (a build output written outside a build: a bug).
const HeldLock& held_build_lock();

}  // namespace ascend_setup
