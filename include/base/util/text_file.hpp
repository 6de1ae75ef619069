// Reading a whole file as bytes: the one helper every unit uses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

// The file's bytes, or nullopt when it cannot be opened.
std::optional<std::string> read_text_file(const std::filesystem::path& path);

// Writes all of `bytes` to `fd` (short writes and EINTR retried); throws
// Error naming `path` and the system's reason.
void write_fully(int fd, std::string_view bytes, const std::filesystem::path& path);

// Creates or truncates `path` (and its parent directories) and writes
// `bytes`; throws Error naming the path and the system's reason.
void write_text_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace ascend_setup
