#include "base/tree/file_lock.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/numbers.hpp"
#include "base/util/system_error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <limits>
#include <string>
#include <utility>

namespace ascend_setup {

namespace {

LockHolder read_holder(int fd) {
  char text[320];
  const ssize_t n = ::pread(fd, text, sizeof text, 0);
  return n <= 0 ? LockHolder{} : parse_lock_holder(std::string_view(text, static_cast<size_t>(n)));
}

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

bool running(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

}  // namespace

LockHolder parse_lock_holder(std::string_view text) {
  LockHolder holder;
  text = text.substr(0, text.find('\n'));
  const size_t blank = text.find_first_of(" \t");
  holder.pid =
      parse_integer<long>(text.substr(0, blank), 1, std::numeric_limits<pid_t>::max()).value_or(0);
  if (blank != std::string_view::npos) {
    const std::string_view rest = text.substr(blank);
    const size_t first = rest.find_first_not_of(" \t\r");
    if (first != std::string_view::npos) {
      holder.host = std::string(rest.substr(first, rest.find_first_of(" \t\r", first) - first));
    }
  }
  return holder;
}

FileLock::FileLock(const std::filesystem::path& path, const std::string& purpose) : path_(path) {
  const std::string host = this_host();
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw system_error("create the directory", path.parent_path(), ec.value());
  }
  fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd_) {
    throw system_error("open the lock file", path, errno);
  }
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    if (error_number != EWOULDBLOCK) {
      throw system_error("lock", path, error_number);
    }
    const LockHolder holder = read_holder(fd_.get());
    spdlog::info("waiting for the lock held by pid {}{} ({}, {})",
                 holder.pid > 0 ? std::to_string(holder.pid) : "?",
                 holder.host.empty() ? std::string() : " on host " + holder.host, purpose,
                 path.string());
    while (::flock(fd_.get(), LOCK_EX) != 0) {
      const int wait_error = errno;
      if (wait_error == EINTR && stop_signal() == 0) {
        continue;
      }
      throw_if_stopped();
      throw system_error("lock", path, wait_error);
    }
    spdlog::info("got the lock ({})", purpose);
  } else if (const LockHolder previous = read_holder(fd_.get());
             previous.pid > 0 && previous.pid != ::getpid() &&
             (previous.host.empty() || previous.host == host) && !running(previous.pid)) {
    spdlog::debug("took over the lock {} left by pid {}, which is no longer running", path.string(),
                  previous.pid);
  }
  const std::string holder = std::to_string(::getpid()) + " " + host + "\n";
  if (::ftruncate(fd_.get(), 0) != 0 || ::pwrite(fd_.get(), holder.data(), holder.size(), 0) < 0) {
    throw system_error("write the lock file", path, errno);
  }
}

FileLock::FileLock(FileLock&& other) noexcept = default;

FileLock::~FileLock() = default;  // closing the fd releases the flock

}  // namespace ascend_setup
