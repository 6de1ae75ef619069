#include "base/tree/file_lock.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/system_error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

namespace ascend_setup {

namespace {

// What the holder wrote: its pid (0 when none is readable) and its host name
// (empty when not written, as by an older ascend-setup).
struct Holder {
  long pid = 0;
  std::string host;
};

Holder read_holder(int fd) {
  char text[320] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  Holder holder;
  if (n <= 0) {
    return holder;
  }
  char* end = nullptr;
  holder.pid = std::strtol(text, &end, 10);
  std::string rest(end, text + n);
  const auto first = rest.find_first_not_of(" \t");
  if (first != std::string::npos) {
    holder.host = rest.substr(first, rest.find_first_of(" \t\n", first) - first);
  }
  return holder;
}

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

bool running(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

}  // namespace

FileLock::FileLock(const std::filesystem::path& path, const std::string& purpose) {
  const std::string host = this_host();
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
    const Holder holder = read_holder(fd_);
    spdlog::info("waiting for the lock held by pid {}{} ({}, {})",
                 holder.pid > 0 ? std::to_string(holder.pid) : "?",
                 holder.host.empty() ? std::string() : " on host " + holder.host, purpose,
                 path.string());
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
  } else if (const Holder previous = read_holder(fd_);
             previous.pid > 0 && previous.pid != ::getpid() &&
             (previous.host.empty() || previous.host == host) && !running(previous.pid)) {
    spdlog::debug("took over the lock {} left by pid {}, which is no longer running", path.string(),
                  previous.pid);
  }
  const std::string holder = std::to_string(::getpid()) + " " + host + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, holder.data(), holder.size(), 0) < 0) {
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
