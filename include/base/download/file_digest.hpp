// The SHA-256 of a file, as the downloads record it. FileDigest follows a
// file written in any order (parallel ranges): a write that continues the
// hashed prefix is hashed from the caller's buffer, bytes written ahead of it
// are read back (just written, from the page cache) once everything before
// them is there. So a finished download has its digest without another pass
// over the file. A read-back checks for a stop signal between blocks
// (throw_if_stopped) and throws the system's Error when a read fails.
#pragma once

#include "base/util/digest.hpp"

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

namespace ascend_setup {

class FileDigest {
 public:
  // Bytes [offset, offset + data.size()) were written: hashed now when they
  // continue the hashed prefix, else left for read_back().
  void written(std::uint64_t offset, std::string_view data);

  // Reads back from `fd` (the file `path`, for messages) and hashes the bytes
  // from the prefix's end up to `until` (every byte before it written), at
  // most `budget` of them.
  void read_back(int fd, const std::filesystem::path& path, std::uint64_t until,
                 std::uint64_t budget = std::numeric_limits<std::uint64_t>::max());

  // The bytes hashed: the prefix [0, hashed()).
  std::uint64_t hashed() const { return hashed_; }

  // Forgets everything (the file is written again from byte 0).
  void restart();

  // The digest of the prefix as lowercase hex; call once.
  std::string hex() { return sha_.hex(); }

 private:
  Sha256 sha_;
  std::uint64_t hashed_ = 0;
};

// The SHA-256 of the whole file `path` as lowercase hex, read in blocks.
std::string file_sha256(const std::filesystem::path& path);

}  // namespace ascend_setup
