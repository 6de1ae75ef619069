// An exclusive lock on a file (flock), held for the object's life and
// released by the kernel when the process dies, so a lock left by a killed
// run is simply taken over. The holder writes its pid and host name into the
// file ("<pid> <host>"; a lock in a cache shared between containers or
// machines may be held by a process this one cannot see): a second run logs
// one line, "waiting for the lock held by pid N on host H (<purpose>, <path>)",
// waits, then goes on. A stop signal while waiting throws the stop's Error;
// other failures throw Error naming the path and the system's reason. It is
// the HeldLock (util/held_lock.hpp) a writer shows to StagedReplacement.
#pragma once

#include "base/util/held_lock.hpp"
#include "base/util/unique_fd.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace ascend_setup {

// What a lock's holder wrote: its pid (0 when none is readable) and its host
// name (empty when not written, as by an older ascend-setup).
struct LockHolder {
  long pid = 0;
  std::string host;
};

// The lock file's text, "<pid> <host>\n": a pid that is not a whole number
// from 1 to the largest pid reads as 0, a missing host as empty (never
// throws).
LockHolder parse_lock_holder(std::string_view text);

class FileLock : public HeldLock {
 public:
  // `purpose` says what the lock guards, for the waiting message.
  FileLock(const std::filesystem::path& path, const std::string& purpose);
  ~FileLock() override;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;

  const std::filesystem::path& lock_path() const override { return path_; }

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
};

}  // namespace ascend_setup
