#include "base/util/system_error.hpp"

#include "base/util/strings.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

// The nearest existing directory of `path`, then the top of its file system
// (the last parent on the same device).
fs::path mount_point(fs::path path) {
  struct stat info {};
  while (!path.empty() && ::stat(path.c_str(), &info) != 0) {
    if (path == path.parent_path()) {
      return path;
    }
    path = path.parent_path();
  }
  for (fs::path parent = path.parent_path(); parent != path; parent = path.parent_path()) {
    struct stat above {};
    if (::stat(parent.c_str(), &above) != 0 || above.st_dev != info.st_dev) {
      break;
    }
    path = parent;
  }
  return path;
}

std::string disk_full_message(const std::string& action, const fs::path& path,
                              std::optional<std::uint64_t> needed_bytes) {
  const fs::path absolute = path.is_absolute() ? path : fs::absolute(path);
  const fs::path mount = mount_point(absolute);
  std::string where = "on " + mount.string();
  struct statvfs disk {};
  if (::statvfs(mount.c_str(), &disk) == 0) {
    where = human_bytes(double(disk.f_bavail) * double(disk.f_frsize)) + " free of " +
            human_bytes(double(disk.f_blocks) * double(disk.f_frsize)) + " " + where;
  }
  if (needed_bytes) {
    where += "; the step needs about " + human_bytes(double(*needed_bytes));
  }
  return "the disk is full: cannot " + action + " " + path.string() + " (" + where + ")";
}

}  // namespace

bool disk_full(int error_number) noexcept {
  return error_number == ENOSPC || error_number == EDQUOT;
}

Error system_error(const std::string& action, const fs::path& path, int error_number,
                   std::optional<std::uint64_t> needed_bytes) {
  if (disk_full(error_number)) {
    return Error(disk_full_message(action, path, needed_bytes), ErrorKind::local_io);
  }
  return Error("cannot " + action + " " + path.string() + ": " + std::strerror(error_number),
               ErrorKind::local_io);
}

Error system_error(const fs::filesystem_error& error) {
  // libstdc++ says "filesystem error: cannot <action>: <reason> [<path1>] [<path2>]".
  std::string action = error.what();
  for (const char* prefix : {"filesystem error: ", "cannot "}) {
    if (action.rfind(prefix, 0) == 0) {
      action.erase(0, std::strlen(prefix));
    }
  }
  action = action.substr(0, action.find(':'));
  if (action.empty()) {
    action = "use";
  }
  const int error_number = error.code().category() == std::generic_category() ||
                                   error.code().category() == std::system_category()
                               ? error.code().value()
                               : EIO;
  std::string paths = error.path1().string();
  if (!error.path2().empty()) {
    paths += " to " + error.path2().string();
  }
  return system_error(action, paths.empty() ? fs::path(".") : fs::path(paths), error_number);
}

}  // namespace ascend_setup
