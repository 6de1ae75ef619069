#include "base/util/staged_replacement.hpp"

#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"

#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <vector>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr std::string_view kMark = ".ascend-setup-";
constexpr std::string_view kAsideSuffix = "-old";

std::string staged_prefix(const fs::path& target, const std::string& what) {
  return fmt::format(".{}{}{}-", target.filename().string(), kMark, what);
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "dir/" names the directory itself.
fs::path without_trailing_slash(fs::path target) {
  return target.filename().empty() ? target.parent_path() : target;
}

// fsync of one file or directory; EINVAL (a file system that cannot sync)
// is not a failure.
void sync_one(const fs::path& path, bool directory) {
  const UniqueFd fd(
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (directory ? O_DIRECTORY : 0)));
  if (!fd) {
    if (errno == EACCES) {
      return;  // a file its archive made unreadable: written, but not ours to open
    }
    throw system_error("open", path, errno);
  }
  if (::fsync(fd.get()) != 0 && errno != EINVAL) {
    throw system_error("sync", path, errno);
  }
}

// fsync of a file, or of every file and directory under a directory (the
// directory's own entries last); symbolic links are recorded by their
// directory's fsync.
void sync_tree(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    throw system_error("inspect", path, errno);
  }
  if (S_ISREG(info.st_mode)) {
    sync_one(path, false);
  }
  if (!S_ISDIR(info.st_mode)) {
    return;
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_type type = it->symlink_status(ec).type();
    if (type == fs::file_type::regular || type == fs::file_type::directory) {
      sync_one(it->path(), type == fs::file_type::directory);
    }
  }
  if (ec) {
    throw system_error("read the directory", path, ec.value());
  }
  sync_one(path, true);
}

bool is_empty_directory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec)) && fs::is_empty(path, ec) && !ec;
}

bool exists_unfollowed(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

}  // namespace

bool is_staged_name(std::string_view name) {
  if (name.ends_with(kAsideSuffix)) {
    name.remove_suffix(kAsideSuffix.size());
  }
  const size_t mark = name.rfind(kMark);
  const size_t dash = name.rfind('-');
  // ".<target>" before the mark, "<what>-<pid>" after it.
  return name.size() > 1 && name[0] == '.' && mark != std::string_view::npos && mark > 1 &&
         dash > mark + kMark.size() && all_digits(name.substr(dash + 1));
}

void sync_directory(const fs::path& directory) { sync_one(directory, true); }

void point_symlink_at(const fs::path& link, const fs::path& target) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(link, ec)) && fs::read_symlink(link, ec) == target && !ec) {
    return;
  }
  const fs::path staged =
      link.parent_path() / (staged_prefix(link, "link") + std::to_string(::getpid()));
  try {
    fs::create_directories(link.parent_path());
    fs::remove(staged);
    fs::create_directory_symlink(target, staged);
    fs::rename(staged, link);
  } catch (const fs::filesystem_error& error) {
    fs::remove(staged, ec);
    throw system_error(error);
  }
}

StagedReplacement::StagedReplacement(const HeldLock& held, fs::path target, const std::string& what)
    : target_(without_trailing_slash(std::move(target))) {
  staged_ = target_.parent_path() / (staged_prefix(target_, what) + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(target_.parent_path(), ec);
  if (ec) {
    throw system_error("create the directory", target_.parent_path(), ec.value());
  }
  remove_leftovers(held, target_, what);
}

StagedReplacement::~StagedReplacement() {
  if (!committed_) {
    std::error_code ignored;
    fs::remove_all(staged_, ignored);
  }
}

void StagedReplacement::commit() {
  sync_tree(staged_);
  const fs::path parent = target_.parent_path();
  std::error_code ec;
  // An empty directory (a submodule's placeholder) simply makes way.
  if (is_empty_directory(target_)) {
    fs::remove(target_, ec);
  }
  if (::renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) == 0) {
    committed_ = true;
    sync_directory(parent);
    return;
  }
  if (errno == EEXIST &&
      ::renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    // staged_ now holds the old one, which the destructor's removal would also
    // take; removed here so that the old content is gone when commit() returns.
    committed_ = true;
    sync_directory(parent);
    fs::remove_all(staged_, ec);
    return;
  }
  if (errno != EINVAL && errno != ENOSYS) {
    throw system_error("move " + staged_.string() + " to", target_, errno);
  }
  replace_without_flags();
}

// renameat2 without its flags (see the top): one rename(2) wherever that is
// atomic, else the old one aside, the new one in, the old one removed.
void StagedReplacement::replace_without_flags() {
  const fs::path parent = target_.parent_path();
  if (::rename(staged_.c_str(), target_.c_str()) == 0) {
    committed_ = true;
    sync_directory(parent);
    return;
  }
  if (errno != ENOTEMPTY && errno != EEXIST && errno != EISDIR && errno != ENOTDIR) {
    throw system_error("move " + staged_.string() + " to", target_, errno);
  }
  const fs::path aside = staged_.string() + std::string(kAsideSuffix);
  std::error_code ec;
  fs::remove_all(aside, ec);
  if (::rename(target_.c_str(), aside.c_str()) != 0) {
    throw system_error("move aside", target_, errno);
  }
  if (::rename(staged_.c_str(), target_.c_str()) != 0) {
    const int error_number = errno;
    ::rename(aside.c_str(), target_.c_str());
    throw system_error("move " + staged_.string() + " to", target_, error_number);
  }
  committed_ = true;
  sync_directory(parent);
  fs::remove_all(aside, ec);
}

void StagedReplacement::remove_leftovers(const HeldLock& held, const fs::path& target_given,
                                         const std::string& what) {
  const fs::path target = without_trailing_slash(target_given);
  const std::string prefix = staged_prefix(target, what);
  std::vector<fs::path> leftovers;
  std::optional<fs::path> aside;
  std::error_code ec;
  for (fs::directory_iterator it(target.parent_path(), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) {
      continue;
    }
    if (!aside && name.ends_with(kAsideSuffix) && !exists_unfollowed(target)) {
      aside = it->path();
    } else {
      leftovers.push_back(it->path());
    }
  }
  if (aside) {
    spdlog::info("putting {} back in place: a run that was stopped had moved it aside to {}",
                 target.string(), aside->string());
    if (::rename(aside->c_str(), target.c_str()) != 0) {
      throw system_error("put back " + aside->string() + " to", target, errno);
    }
    sync_directory(target.parent_path());
  }
  for (const fs::path& leftover : leftovers) {
    spdlog::debug("removing {}, left by a run that was stopped (under {})", leftover.string(),
                  held.lock_path().string());
    std::error_code ignored;
    fs::remove_all(leftover, ignored);
  }
}

}  // namespace ascend_setup
