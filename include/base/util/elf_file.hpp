// ELF files as the dynamic loader sees them: whether a file is one, and the
// shared libraries it names (its DT_NEEDED entries), read from its program
// headers and dynamic section without loading or running it. Only ELF64 in
// this machine's byte order is read (the targets: x86_64, aarch64).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

// True when `file` starts with the ELF magic (false when it cannot be read).
bool is_elf_file(const std::filesystem::path& file);

// The DT_NEEDED names of the ELF image `image` (a whole file's bytes), in
// the dynamic section's order; an empty list for a file with no dynamic
// section (a static executable). nullopt when `image` is not ELF64 in this
// machine's byte order or is malformed (a header, the dynamic section or a
// name outside the image, a string table no loaded segment holds, more than
// 1024 names or one longer than 4096 bytes). Never throws.
std::optional<std::vector<std::string>> elf_needed(std::string_view image);

// The same for a file, mapped read-only, so that only the pages holding the
// headers, the dynamic section and the names are read; nullopt also when it
// cannot be opened or mapped (absent, unreadable, not a regular file).
std::optional<std::vector<std::string>> elf_needed_of_file(const std::filesystem::path& file);

}  // namespace ascend_setup
