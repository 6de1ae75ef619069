// An exclusive lock held for the object's life: what a caller shows to do what
// only the one writer of a path may do (StagedReplacement's removal of what a
// stopped run left beside its target). tree/file_lock.hpp's FileLock is the
// one kind; it is declared here so that the units below tree/ can ask for it.
#pragma once

#include <filesystem>

namespace ascend_setup {

class HeldLock {
 public:
  virtual ~HeldLock() = default;
  // The lock file, for messages.
  virtual const std::filesystem::path& lock_path() const = 0;

 protected:
  HeldLock() = default;
  HeldLock(const HeldLock&) = default;
  HeldLock(HeldLock&&) = default;
  HeldLock& operator=(const HeldLock&) = default;
  HeldLock& operator=(HeldLock&&) = default;
};

}  // namespace ascend_setup
