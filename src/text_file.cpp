#include "ascend_setup/text_file.hpp"

#include "ascend_setup/system_error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fstream>
#include <sstream>

namespace ascend_setup {

std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text_file(const std::filesystem::path& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw system_error("create the directory", path.parent_path(), ec.value());
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw system_error("write", path, errno);
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int error_number = errno;
      ::close(fd);
      throw system_error("write", path, error_number);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    throw system_error("write", path, errno);
  }
}

}  // namespace ascend_setup
