// Finding a program on PATH: the one lookup every unit uses, with execvp's
// rules, so that the program found is the one a spawn of the bare name runs.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

// The list searched when PATH is unset, as glibc's execvp.
inline constexpr std::string_view kDefaultSearchPath = "/bin:/usr/bin";

// `name` containing a '/' is returned as it is (not checked). A bare name is
// looked for in each directory of `path_list` (colon-separated; nullopt: PATH
// unset, kDefaultSearchPath) in order; an empty entry is the current
// directory (POSIX, execvp), giving "./name". The first candidate that is a
// regular file (symbolic links followed) this process may execute wins: a
// directory or an unexecutable file of that name is passed over. nullopt
// when none is, or `name` is empty.
std::optional<std::filesystem::path> find_executable(std::string_view name,
                                                     const std::optional<std::string>& path_list);

}  // namespace ascend_setup
