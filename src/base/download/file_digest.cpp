#include "base/download/file_digest.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace ascend_setup {

namespace {

constexpr std::uint64_t kBlock = std::uint64_t{1} << 20;

}  // namespace

void FileDigest::written(std::uint64_t offset, std::string_view data) {
  if (offset <= hashed_ && offset + data.size() > hashed_) {
    sha_.update(data.substr(hashed_ - offset));
    hashed_ = offset + data.size();
  }
}

void FileDigest::read_back(int fd, const std::filesystem::path& path, std::uint64_t until,
                           std::uint64_t budget) {
  std::vector<char> block;
  while (hashed_ < until && budget > 0) {
    throw_if_stopped();
    const std::uint64_t wanted = std::min({until - hashed_, budget, kBlock});
    block.resize(wanted);
    const ssize_t n = ::pread(fd, block.data(), wanted, static_cast<off_t>(hashed_));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw system_error("read", path, errno);
    }
    if (n == 0) {
      throw system_error("read", path, EIO);  // shorter than what was written
    }
    sha_.update(std::string_view(block.data(), static_cast<std::size_t>(n)));
    hashed_ += static_cast<std::uint64_t>(n);
    budget -= std::min(budget, static_cast<std::uint64_t>(n));
  }
}

void FileDigest::restart() {
  sha_ = Sha256();
  hashed_ = 0;
}

std::string file_sha256(const std::filesystem::path& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0) {
    throw system_error("open", path, errno);
  }
  FileDigest digest;
  digest.read_back(fd.get(), path, static_cast<std::uint64_t>(info.st_size));
  return digest.hex();
}

}  // namespace ascend_setup
