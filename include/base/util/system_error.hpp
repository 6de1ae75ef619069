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

// For a tool that failed and said why only on its own output (cmake, ninja, a
// compiler, auditwheel): the disk-full Error ("the disk is full: cannot
// <action> <directory> (...)") of the first of `directories` whose file
// system is nearly full, else nullopt. Nearly full: less than
// nearly_full_bytes and less than 5 % of its size free (a write that did not
// fit is removed by the tool that failed, so some space is free again), or no
// free inode. A directory that does not exist counts by its nearest parent.
inline constexpr std::uint64_t nearly_full_bytes = std::uint64_t{256} << 20;
std::optional<Error> nearly_full_disk(const std::string& action,
                                      const std::vector<std::filesystem::path>& directories);

}  // namespace ascend_setup
