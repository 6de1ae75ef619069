// An exclusive lock on a file (flock), held for the object's life and
// released by the kernel when the process dies, so a lock left by a killed
// run is simply taken over. The holder writes its pid and host name into the
// file ("<pid> <host>"; a lock in a cache shared between containers or
// machines may be held by a process this one cannot see): a second run logs
// one line, "waiting for the lock held by pid N on host H (<purpose>, <path>)",
// waits, then goes on. A stop signal while waiting throws the stop's Error;
// other failures throw Error naming the path and the system's reason.
#pragma once

#include <filesystem>
#include <string>

namespace ascend_setup {

class FileLock {
 public:
  // `purpose` says what the lock guards, for the waiting message.
  FileLock(const std::filesystem::path& path, const std::string& purpose);
  ~FileLock();
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace ascend_setup
