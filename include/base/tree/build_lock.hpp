// The lock of a tree's build (build/ascend-setup/build.lock): two builds of
// one tree take turns. Everything a build reads or writes under
// build/ascend-setup/ is read or written under it: the compile cache's log
// emptied when the build starts, the payload in build_lib, the wheel in
// dist/, its digests, the trace and the report. It is taken where the build
// first writes there, not before: a build refused before it writes (a
// setup.py that carries the layer) leaves the tree as it was.
// StagedReplacement asks for it; the commands setup() runs, which cannot be
// handed it, find it with held_build_lock().
#pragma once

#include "base/tree/file_lock.hpp"

#include <filesystem>

namespace ascend_setup {

// The build lock of `tree_root`, taken now (waiting for it: FileLock) unless
// this process holds it already; held until release_build_lock(). A lock of
// another tree this process held is released first.
const HeldLock& take_build_lock(const std::filesystem::path& tree_root);

// Releases the build lock this process holds, if any.
void release_build_lock();

// Holds the build lock of `tree_root` from its construction (or from an
// earlier take_build_lock() of this run) until it dies.
class BuildLock {
 public:
  explicit BuildLock(const std::filesystem::path& tree_root) : held_(take_build_lock(tree_root)) {}
  ~BuildLock() { release_build_lock(); }
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;

  const HeldLock& held() const { return held_; }

 private:
  const HeldLock& held_;
};

// The build lock this process holds; std::logic_error when it holds none
// (a build output written outside a build: a bug).
const HeldLock& held_build_lock();

}  // namespace ascend_setup
