#include "base/util/executable_search.hpp"

#include <unistd.h>

namespace ascend_setup {

std::optional<std::filesystem::path> find_executable(std::string_view name,
                                                     const std::optional<std::string>& path_list) {
  if (name.empty()) {
    return std::nullopt;
  }
  if (name.find('/') != std::string_view::npos) {
    return std::filesystem::path(name);
  }
  const std::string_view dirs = path_list ? std::string_view(*path_list) : kDefaultSearchPath;
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string_view dir = dirs.substr(start, end - start);
    start = end + 1;
    const std::filesystem::path candidate =
        std::filesystem::path(dir.empty() ? std::string_view(".") : dir) / name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

}  // namespace ascend_setup
