// A failed system call as the one Error type: "cannot <action> <path>: <the
// system's own text for the error>", of kind local_io. Capture errno right
// after the failed call, before any cleanup can overwrite it, and pass it here.
// A full disk (ENOSPC, EDQUOT) says so first, with where and how much is free:
// "the disk is full: cannot write <path> (<free> free on <mount point>; the step
// needs about <needed>)" when the caller knows what the step needs.
#pragma once

#include "base/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

Error system_error(const std::string& action, const std::filesystem::path& path, int error_number,
                   std::optional<std::uint64_t> needed_bytes = std::nullopt);

// std::filesystem's error (its action, paths and errno) as system_error's.
Error system_error(const std::filesystem::filesystem_error& error);

// True for the errors of a full disk or an exhausted quota.
bool disk_full(int error_number) noexcept;

}  // namespace ascend_setup
