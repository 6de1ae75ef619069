// Reading an existing ZIP (a previous wheel, auditwheel's output): its central
// directory (ZIP64 included), each entry's data offset checked against its
// local header, small entries read whole (stored or deflated). A file that is
// not a well-formed ZIP throws Error naming it.
#pragma once

#include "base/util/unique_fd.hpp"
#include "base/wheel/zip_format.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

class ZipReader {
 public:
  explicit ZipReader(const std::filesystem::path& path);
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;
  ~ZipReader();

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(const std::string& name) const;
  // Where the entry's data starts (its local header read and checked).
  uint64_t data_offset(const ZipEntry& entry) const;
  // The entry's uncompressed bytes (for small entries: RECORD, WHEEL).
  std::string read(const ZipEntry& entry) const;
  int fd() const { return fd_.get(); }
  uint64_t size() const { return file_size_; }
  // Where the central directory starts (the ZIP64 end records and the end
  // record follow it to the end of the file).
  uint64_t directory_offset() const { return directory_offset_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
  uint64_t file_size_ = 0;
  uint64_t directory_offset_ = 0;
  std::vector<ZipEntry> entries_;
  std::map<std::string, size_t> by_name_;
};

// pread of exactly `size` bytes at `offset`; throws Error naming `path`.
std::string read_at(int fd, uint64_t offset, size_t size, const std::filesystem::path& path);

}  // namespace ascend_setup
