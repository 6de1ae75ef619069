// A failed system call as the one Error type: "cannot <action> <path>: <the
// system's own text for the error>". Capture errno right after the failed
// call, before any cleanup can overwrite it, and pass it here.
#pragma once

#include "base/util/error.hpp"

#include <filesystem>
#include <string>

namespace ascend_setup {

Error system_error(const std::string& action, const std::filesystem::path& path, int error_number);

}  // namespace ascend_setup
