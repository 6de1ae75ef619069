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

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr std::string_view kMark = ".ascend-setup-";
constexpr std::string_view kOld = "-old";

std::string staged_prefix(const fs::path& target, const std::string& what) {
  return fmt::format(".{}{}{}-", target.filename().string(), kMark, what);
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// fsync of a regular file, syncfs of a directory's file system (one call for
// a tree of thousands of files).
void sync_staged(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    throw system_error("inspect", path, errno);
  }
  if (S_ISLNK(info.st_mode)) {
    return;
  }
  const UniqueFd fd(
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (S_ISDIR(info.st_mode) ? O_DIRECTORY : 0)));
  if (!fd) {
    throw system_error("open", path, errno);
  }
  if ((S_ISDIR(info.st_mode) ? ::syncfs(fd.get()) : ::fsync(fd.get())) != 0 && errno != EINVAL) {
    throw system_error("sync", path, errno);
  }
}

bool is_empty_directory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec)) && fs::is_empty(path, ec) && !ec;
}

}  // namespace

bool is_staged_name(std::string_view name) {
  if (name.ends_with(kOld)) {
    name.remove_suffix(kOld.size());
  }
  const size_t mark = name.rfind(kMark);
  const size_t dash = name.rfind('-');
  // ".<target>" before the mark, "<what>-<pid>" after it.
  return name.size() > 1 && name[0] == '.' && mark != std::string_view::npos && mark > 1 &&
         dash > mark + kMark.size() && all_digits(name.substr(dash + 1));
}

void sync_directory(const fs::path& directory) {
  const UniqueFd fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) {
    throw system_error("open the directory", directory, errno);
  }
  if (::fsync(fd.get()) != 0 && errno != EINVAL) {
    throw system_error("sync the directory", directory, errno);
  }
}

StagedReplacement::StagedReplacement(fs::path target, const std::string& what)
    : target_(std::move(target)) {
  if (target_.filename().empty()) {
    target_ = target_.parent_path();
  }
  staged_ = target_.parent_path() / (staged_prefix(target_, what) + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(target_.parent_path(), ec);
  if (ec) {
    throw system_error("create the directory", target_.parent_path(), ec.value());
  }
  fs::remove_all(staged_, ec);
}

StagedReplacement::~StagedReplacement() {
  if (!committed_) {
    std::error_code ignored;
    fs::remove_all(staged_, ignored);
  }
}

void StagedReplacement::commit() {
  sync_staged(staged_);
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
  if (errno != EEXIST && errno != EINVAL && errno != ENOSYS) {
    throw system_error("move " + staged_.string() + " to", target_, errno);
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
  // No renameat2 flags here (EINVAL): the old one aside, the new one in, the
  // old one back when that fails.
  const fs::path old = staged_.string() + std::string(kOld);
  fs::remove_all(old, ec);
  const bool had_old = fs::exists(fs::symlink_status(target_, ec));
  if (had_old && ::rename(target_.c_str(), old.c_str()) != 0) {
    throw system_error("move aside", target_, errno);
  }
  if (::rename(staged_.c_str(), target_.c_str()) != 0) {
    const int error_number = errno;
    if (had_old) {
      ::rename(old.c_str(), target_.c_str());
    }
    throw system_error("move " + staged_.string() + " to", target_, error_number);
  }
  committed_ = true;
  sync_directory(parent);
  fs::remove_all(old, ec);
}

void StagedReplacement::remove_leftovers(const fs::path& target, const std::string& what) {
  const std::string prefix = staged_prefix(target, what);
  std::error_code ec;
  for (fs::directory_iterator it(target.parent_path(), ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().filename().string().rfind(prefix, 0) == 0) {
      spdlog::debug("removing {}, left by a run that was stopped", it->path().string());
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

}  // namespace ascend_setup
