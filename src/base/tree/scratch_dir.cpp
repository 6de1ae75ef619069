#include "base/tree/scratch_dir.hpp"

#include "base/util/numbers.hpp"
#include "base/util/system_error.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
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
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    const auto pid =
        parse_integer<pid_t>(rest.substr(0, rest.find('-')), 1, std::numeric_limits<pid_t>::max());
    if (!pid || rest.find('-') == std::string_view::npos || *pid == ::getpid()) {
      continue;
    }
    if (::kill(*pid, 0) != 0 && errno == ESRCH) {
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
    throw Error("no usable temporary directory: " + ec.message(), ErrorKind::local_io);
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
