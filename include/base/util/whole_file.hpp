// Whole files as bytes (no text decoding, no line handling): read, written,
// and the full write of a buffer to an fd; the one home every unit uses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

// The file's bytes, or nullopt when it does not exist (ENOENT, ENOTDIR). Any
// other failure (no permission, a directory, an I/O error) throws Error with
// the path and the system's reason: it is never taken for "absent".
std::optional<std::string> read_whole_file(const std::filesystem::path& path);

// Writes all of `bytes` to `fd` (short writes and EINTR retried); throws
// Error naming `path` and the system's reason.
void write_fully(int fd, std::string_view bytes, const std::filesystem::path& path);

// Creates or truncates `path` (and its parent directories) and writes
// `bytes`; throws Error naming the path and the system's reason.
void write_whole_file(const std::filesystem::path& path, const std::string& bytes);

// `directory` exists and holds something: a checked-out submodule, not the
// empty directory git leaves for one that was never checked out.
bool holds_content(const std::filesystem::path& directory);

}  // namespace ascend_setup
