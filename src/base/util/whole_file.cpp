#include "base/util/whole_file.hpp"

#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace ascend_setup {

std::optional<std::string> read_whole_file(const std::filesystem::path& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return std::nullopt;  // absent: the one case a caller may take as "not there"
    }
    throw system_error("read", path, errno);
  }
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw system_error("read", path, errno);  // EISDIR for a directory where a file should be
    }
    if (n == 0) {
      break;
    }
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}

void write_fully(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw system_error("write", path, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void write_whole_file(const std::filesystem::path& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw system_error("create the directory", path.parent_path(), ec.value());
  }
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) {
    throw system_error("write", path, errno);
  }
  write_fully(fd.get(), bytes, path);
  if (!fd.close()) {  // a write error may show only here
    throw system_error("write", path, errno);
  }
}

bool holds_content(const std::filesystem::path& directory) {
  std::error_code ec;
  return std::filesystem::is_directory(directory, ec) && !std::filesystem::is_empty(directory, ec);
}

}  // namespace ascend_setup
