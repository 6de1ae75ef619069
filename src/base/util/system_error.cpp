#include "base/util/system_error.hpp"

#include <cstring>

namespace ascend_setup {

Error system_error(const std::string& action, const std::filesystem::path& path, int error_number) {
  return Error("cannot " + action + " " + path.string() + ": " + std::strerror(error_number));
}

}  // namespace ascend_setup
