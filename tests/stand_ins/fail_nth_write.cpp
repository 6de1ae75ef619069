// LD_PRELOAD stand-in for a disk that gives out midway: the Nth write() or
// pwrite() (N = $FAIL_WRITE_NTH, counted from 1, both counted together) to a
// file whose path contains
// $FAIL_WRITE_MATCH fails with EIO, or, when $FAIL_WRITE_KILL is set, the
// process dies of SIGKILL right there (a power loss). Each process counts
// its own writes; other writes pass through untouched.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
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

// True when this write is the one to fail (after a SIGKILL when asked).
bool strikes(int fd) {
  static int seen = 0;
  const char* match = std::getenv("FAIL_WRITE_MATCH");
  const char* nth = std::getenv("FAIL_WRITE_NTH");
  if (match == nullptr || nth == nullptr || !matches(fd, match) || ++seen != std::atoi(nth)) {
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
