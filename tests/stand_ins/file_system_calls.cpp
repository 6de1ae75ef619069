// LD_PRELOAD stand-in for what a file system does with renames and syncs,
// each behaviour turned on by its variable:
// - $STAND_IN_RENAME_FLAGS=einval: renameat2() with flags fails with EINVAL,
//   as on NFS (the shared-TRITON_HOME case); without flags it is renameat().
// - $STAND_IN_RENAME_KILL=N:PART: the Nth rename the stand-in lets through
//   (rename(), renameat(), renameat2() without flags; counted from 1) whose
//   source path contains PART ends the process with SIGKILL before it
//   renames (a power loss between two renames).
// - $STAND_IN_RENAME_FAIL=N:PART: that rename fails with EIO instead.
// - $STAND_IN_CALL_LOG=FILE: each rename done ("rename FROM TO"),
//   fsync() and fdatasync() ("fsync PATH") and syncfs() ("syncfs PATH") is
//   appended to FILE, PATH being the descriptor's.
// A count starts again whenever its variable's value changes.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using RenameatFunction = int (*)(int, const char*, int, const char*);
using SyncFunction = int (*)(int);

void log_line(const std::string& line) {
  const char* log = std::getenv("STAND_IN_CALL_LOG");
  if (log == nullptr) {
    return;
  }
  if (FILE* out = std::fopen(log, "a")) {
    std::fprintf(out, "%s\n", line.c_str());
    std::fclose(out);
  }
}

std::string path_of(int fd) {
  char link[64];
  char target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  return n <= 0 ? std::string("?") : std::string(target, static_cast<size_t>(n));
}

// True when the rename from `from` is the one `variable` ("N:PART") names.
bool strikes(const char* variable, const char* from) {
  struct Count {
    std::string value;
    int seen = 0;
  };
  static Count counts[2];
  Count& count = counts[std::strcmp(variable, "STAND_IN_RENAME_KILL") == 0 ? 0 : 1];
  const char* value = std::getenv(variable);
  if (value == nullptr) {
    return false;
  }
  if (count.value != value) {
    count = {value, 0};
  }
  const char* colon = std::strchr(value, ':');
  if (colon == nullptr || std::strstr(from, colon + 1) == nullptr) {
    return false;
  }
  return ++count.seen == std::atoi(value);
}

int rename_through(int from_dir, const char* from, int to_dir, const char* to) {
  static const auto real = reinterpret_cast<RenameatFunction>(dlsym(RTLD_NEXT, "renameat"));
  if (strikes("STAND_IN_RENAME_KILL", from)) {
    ::kill(::getpid(), SIGKILL);
  }
  if (strikes("STAND_IN_RENAME_FAIL", from)) {
    errno = EIO;
    return -1;
  }
  const int result = real(from_dir, from, to_dir, to);
  const int saved = errno;
  if (result == 0) {
    log_line(std::string("rename ") + from + " " + to);
  }
  errno = saved;
  return result;
}

int sync_logged(const char* name, const char* what, int fd) {
  const auto real = reinterpret_cast<SyncFunction>(dlsym(RTLD_NEXT, name));
  const int result = real(fd);
  const int saved = errno;
  log_line(std::string(what) + " " + path_of(fd));
  errno = saved;
  return result;
}

}  // namespace

// Exported although the project builds with hidden visibility.
extern "C" __attribute__((visibility("default"))) int renameat2(int from_dir, const char* from,
                                                                int to_dir, const char* to,
                                                                unsigned int flags) {
  using Renameat2Function = int (*)(int, const char*, int, const char*, unsigned int);
  static const auto real = reinterpret_cast<Renameat2Function>(dlsym(RTLD_NEXT, "renameat2"));
  if (flags != 0) {
    if (const char* mode = std::getenv("STAND_IN_RENAME_FLAGS");
        mode != nullptr && std::strcmp(mode, "einval") == 0) {
      errno = EINVAL;
      return -1;
    }
    return real(from_dir, from, to_dir, to, flags);
  }
  return rename_through(from_dir, from, to_dir, to);
}

extern "C" __attribute__((visibility("default"))) int renameat(int from_dir, const char* from,
                                                               int to_dir, const char* to) {
  return rename_through(from_dir, from, to_dir, to);
}

extern "C" __attribute__((visibility("default"))) int rename(const char* from, const char* to) {
  return rename_through(AT_FDCWD, from, AT_FDCWD, to);
}

extern "C" __attribute__((visibility("default"))) int fsync(int fd) {
  return sync_logged("fsync", "fsync", fd);
}

extern "C" __attribute__((visibility("default"))) int fdatasync(int fd) {
  return sync_logged("fdatasync", "fsync", fd);
}

extern "C" __attribute__((visibility("default"))) int syncfs(int fd) {
  return sync_logged("syncfs", "syncfs", fd);
}
