#include "base/tree/file_lock.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/system_error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <utility>

namespace ascend_setup {

namespace {

// The pid the holder wrote, 0 when none is readable.
long holder_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  return n > 0 ? std::strtol(text, nullptr, 10) : 0;
}

bool running(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

}  // namespace

FileLock::FileLock(const std::filesystem::path& path, const std::string& purpose) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw system_error("create the directory", path.parent_path(), ec.value());
  }
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw system_error("open the lock file", path, errno);
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    if (error_number != EWOULDBLOCK) {
      ::close(fd_);
      throw system_error("lock", path, error_number);
    }
    const long holder = holder_pid(fd_);
    spdlog::info("waiting for the lock held by pid {} ({}, {})",
                 holder > 0 ? std::to_string(holder) : "?", purpose, path.string());
    while (::flock(fd_, LOCK_EX) != 0) {
      const int wait_error = errno;
      if (wait_error == EINTR && stop_signal() == 0) {
        continue;
      }
      ::close(fd_);
      throw_if_stopped();
      throw system_error("lock", path, wait_error);
    }
    spdlog::info("got the lock ({})", purpose);
  } else if (const long previous = holder_pid(fd_);
             previous > 0 && previous != ::getpid() && !running(previous)) {
    spdlog::debug("took over the lock {} left by pid {}, which is no longer running", path.string(),
                  previous);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    const int error_number = errno;
    ::close(fd_);
    throw system_error("write the lock file", path, error_number);
  }
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::close(fd_);  // releases the flock
  }
}

}  // namespace ascend_setup
