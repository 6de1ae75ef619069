// Unpacks an archive (any format and filter libarchive reads: .tar.gz,
// .tar.xz, .zip, ...) into an existing directory, and nowhere else. Each
// refusal says what it refuses, naming the archive and the entry, as
// RefusedArchive (bad input):
// - an entry with an absolute path or a `..` component, a hard link whose
//   target leaves the directory: it would be written outside the directory;
// - a symlink whose target is absolute or, resolved as the kernel resolves it
//   through the links unpacked before and after it (archive_links.hpp),
//   points outside the directory, or loops; an entry that would replace a
//   symlink;
// - a device, FIFO or socket entry: which of them it is;
// - an entry libarchive itself refuses (one reached through a symlink: its
//   secure-symlinks check): libarchive's own reason.
// A failed write says the system's reason (system_error.hpp, Error(local_io)):
// a full disk says "the disk is full", where, and the size of the entry being
// written. An archive libarchive cannot read (corrupt, truncated) throws
// UnreadableArchive. Setuid, setgid and sticky bits and group and others'
// write permission are dropped from every entry. What was written before the failure stays inside
// `directory` (the caller's staging directory, removed on failure). A stop
// signal throws the stop's Error at the next entry or block of data.
#pragma once

#include "base/util/error.hpp"

#include <filesystem>
#include <string>

namespace ascend_setup {

// The archive's bytes are not an archive libarchive can read to its end.
class UnreadableArchive : public Error {
 public:
  explicit UnreadableArchive(const std::string& message) : Error(message, ErrorKind::bad_input) {}
};

// The archive holds an entry that is never unpacked (one that leaves the
// directory, a link that points outside it, a device): nothing of such an
// archive is worth keeping.
class RefusedArchive : public Error {
 public:
  explicit RefusedArchive(const std::string& message) : Error(message, ErrorKind::bad_input) {}
};

// Returns the number of entries written. `member`: when not empty, only the
// entries under the archive's top directory `member`/ are written, with that
// prefix taken off (`directory` becomes that top directory); the others are
// skipped. An archive holding nothing under `member` is refused, naming what
// it holds.
std::size_t extract_archive(const std::filesystem::path& archive,
                            const std::filesystem::path& directory, const std::string& member = {});

}  // namespace ascend_setup
