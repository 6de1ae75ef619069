#include "base/util/unique_fd.hpp"

#include <unistd.h>

namespace ascend_setup {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0 && fd_ != fd) {
    ::close(fd_);
  }
  fd_ = fd;
}

bool UniqueFd::close() noexcept {
  const int fd = release();
  return fd < 0 || ::close(fd) == 0;
}

bool UniqueFile::close() noexcept {
  std::FILE* file = std::exchange(file_, nullptr);
  return file == nullptr || std::fclose(file) == 0;
}

}  // namespace ascend_setup
