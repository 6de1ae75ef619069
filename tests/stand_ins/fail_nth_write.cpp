// LD_PRELOAD stand-in for a disk that gives out midway: the Nth write() or
// pwrite() (N = $FAIL_WRITE_NTH, counted from 1, both counted together) to a
// file whose path contains
// $FAIL_WRITE_MATCH fails with EIO, or, when $FAIL_WRITE_KILL is set, the
// process dies of SIGKILL right there (a power loss), or, when
// $FAIL_WRITE_HOLD names a directory, the write waits at a gate there: the
// stand-in starts a sentinel child process, writes DIR/holding (the pid,
// whole), then waits until the test creates DIR/open, or the sentinel has
// ended, or a signal handler has run in this thread (its sleep ends with
// EINTR), and then writes. A stop of ascend-setup ends every descendant of
// the run once its handler has run (the stopper thread), the sentinel among
// them: so the held write goes on only after the stop was noted, and the
// test's stop meets the work in the middle, however fast the machine. The
// sentinel ends by itself once its parent is gone.
// Each process counts its own writes; other writes pass through untouched.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace {

using WriteFunction = ssize_t (*)(int, const void*, size_t);

bool matches(int fd, const char* match) {
  char link[64];
  char target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  if (n <= 0) {
    return false;
  }
  target[n] = '\0';
  return std::strstr(target, match) != nullptr;
}

// Waits at the gate in `dir` (see the top), at most 600 s.
void hold(const std::string& dir) {
  const pid_t parent = ::getpid();
  const pid_t sentinel = ::fork();
  if (sentinel == 0) {
    for (int i = 0; i < 60000 && ::getppid() == parent; ++i) {
      const timespec pause{0, 10 * 1000 * 1000};
      ::nanosleep(&pause, nullptr);
    }
    ::_exit(0);
  }
  const std::string holding = dir + "/holding";
  if (FILE* out = std::fopen((holding + ".tmp").c_str(), "w")) {
    std::fprintf(out, "%d\n", static_cast<int>(::getpid()));
    std::fclose(out);
    std::rename((holding + ".tmp").c_str(), holding.c_str());
  }
  const std::string open = dir + "/open";
  for (int i = 0; i < 60000 && ::access(open.c_str(), F_OK) != 0; ++i) {
    if (sentinel > 0 && ::waitpid(sentinel, nullptr, WNOHANG) != 0) {
      return;  // ended by the stop (or reaped by someone else: gone either way)
    }
    const timespec pause{0, 10 * 1000 * 1000};
    if (::nanosleep(&pause, nullptr) != 0 && errno == EINTR) {
      break;
    }
  }
  if (sentinel > 0) {
    ::kill(sentinel, SIGKILL);
    ::waitpid(sentinel, nullptr, 0);
  }
}

// True when this write is the one to fail (after a SIGKILL when asked); a
// held write waits at its gate and then is written.
bool strikes(int fd) {
  static int seen = 0;
  const char* match = std::getenv("FAIL_WRITE_MATCH");
  const char* nth = std::getenv("FAIL_WRITE_NTH");
  if (match == nullptr || nth == nullptr || !matches(fd, match) || ++seen != std::atoi(nth)) {
    return false;
  }
  if (const char* gate = std::getenv("FAIL_WRITE_HOLD")) {
    const int saved = errno;
    hold(gate);
    errno = saved;
    return false;
  }
  if (std::getenv("FAIL_WRITE_KILL") != nullptr) {
    ::kill(::getpid(), SIGKILL);
  }
  errno = EIO;
  return true;
}

using PwriteFunction = ssize_t (*)(int, const void*, size_t, off_t);

}  // namespace

// Exported although the project builds with hidden visibility.
extern "C" __attribute__((visibility("default"))) ssize_t write(int fd, const void* buffer,
                                                                size_t count) {
  static const auto real = reinterpret_cast<WriteFunction>(dlsym(RTLD_NEXT, "write"));
  return strikes(fd) ? -1 : real(fd, buffer, count);
}

extern "C" __attribute__((visibility("default"))) ssize_t pwrite(int fd, const void* buffer,
                                                                 size_t count, off_t offset) {
  static const auto real = reinterpret_cast<PwriteFunction>(dlsym(RTLD_NEXT, "pwrite"));
  return strikes(fd) ? -1 : real(fd, buffer, count, offset);
}

extern "C" __attribute__((visibility("default"))) ssize_t pwrite64(int fd, const void* buffer,
                                                                   size_t count, off_t offset) {
  static const auto real = reinterpret_cast<PwriteFunction>(dlsym(RTLD_NEXT, "pwrite64"));
  return strikes(fd) ? -1 : real(fd, buffer, count, offset);
}
