// Unpacks an archive (any format and filter libarchive reads: .tar.gz,
// .tar.xz, .zip, ...) into an existing directory, and nowhere else: an entry
// with an absolute path or a `..` component, a hard link or symlink whose
// target leaves the directory, an entry reached through a symlink (libarchive's
// secure-symlinks check) or a device/FIFO entry stops the extraction with
// Error(bad_input) naming the archive and the entry. What was written before
// the bad entry stays inside `directory` (the caller's staging directory,
// removed on failure).
#pragma once

#include <filesystem>

namespace ascend_setup {

// Returns the number of entries written.
std::size_t extract_archive(const std::filesystem::path& archive,
                            const std::filesystem::path& directory);

}  // namespace ascend_setup
