#include "base/tree/scratch_dir.hpp"

#include "base/util/system_error.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr std::string_view prefix = "ascend-setup-patch-";

// Scratch directories of runs that were killed (SIGKILL, power loss).
void remove_abandoned(const fs::path& temp) {
  std::error_code ec;
  for (fs::directory_iterator it(temp, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) {
      continue;
    }
    char* end_of_pid = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end_of_pid, 10);
    if (pid <= 0 || *end_of_pid != '-' || pid == ::getpid()) {
      continue;
    }
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

}  // namespace

ScratchDir::ScratchDir() {
  std::error_code ec;
  const fs::path temp = fs::temp_directory_path(ec);
  if (ec) {
    throw Error("no usable temporary directory: " + ec.message());
  }
  remove_abandoned(temp);
  std::string pattern =
      (temp / (std::string(prefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw system_error("create a scratch directory under", temp, errno);
  }
  path_ = pattern;
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!path_.empty()) {
    fs::remove_all(path_, ec);
  }
}

}  // namespace ascend_setup
