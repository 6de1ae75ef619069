#include "base/wheel/zip_reader.hpp"

#include "base/util/error.hpp"
#include "base/util/system_error.hpp"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

uint64_t get(const std::string& bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) {
    value = value << 8 | static_cast<unsigned char>(bytes.at(at + i));
  }
  return value;
}

}  // namespace

std::string read_at(int fd, uint64_t offset, size_t size, const fs::path& path) {
  std::string bytes(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t n =
        ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw system_error("read", path, errno);
    }
    if (n == 0) {
      throw Error(path.string() + " ends early: not a complete ZIP archive", ErrorKind::bad_input);
    }
    done += static_cast<size_t>(n);
  }
  return bytes;
}

ZipReader::ZipReader(const fs::path& path) : path_(path) {
  fd_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd_) {
    throw system_error("open", path, errno);
  }
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) {
    throw system_error("stat", path, errno);
  }
  file_size_ = static_cast<uint64_t>(st.st_size);
  const auto bad = [&](const std::string& why) {
    return Error(path.string() + " is not a valid ZIP archive: " + why, ErrorKind::bad_input);
  };
  const uint64_t tail_size = std::min<uint64_t>(file_size_, 22 + 65535 + 20);
  const std::string tail = read_at(fd_.get(), file_size_ - tail_size, tail_size, path);
  size_t end = std::string::npos;
  for (size_t at = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; at-- > 0;) {
    if (get(tail, at, 4) == 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end == std::string::npos) {
    throw bad("no end of central directory record");
  }
  uint64_t count = get(tail, end + 10, 2);
  uint64_t directory_size = get(tail, end + 12, 4);
  uint64_t directory_offset = get(tail, end + 16, 4);
  if (end >= 20 && get(tail, end - 20, 4) == 0x07064b50) {
    const uint64_t record_offset = get(tail, end - 20 + 8, 8);
    const std::string record = read_at(fd_.get(), record_offset, 56, path);
    if (get(record, 0, 4) != 0x06064b50) {
      throw bad("a ZIP64 locator without its end record");
    }
    count = get(record, 32, 8);
    directory_size = get(record, 40, 8);
    directory_offset = get(record, 48, 8);
  }
  if (directory_size > file_size_ || directory_offset > file_size_ - directory_size) {
    throw bad("the central directory lies past the end");
  }
  directory_offset_ = directory_offset;
  const std::string directory = read_at(fd_.get(), directory_offset, directory_size, path);
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (at + 46 > directory.size() || get(directory, at, 4) != 0x02014b50) {
      throw bad("a broken central directory entry");
    }
    ZipEntry entry;
    entry.create_version = static_cast<uint8_t>(get(directory, at + 4, 1));
    entry.create_system = static_cast<uint8_t>(get(directory, at + 5, 1));
    entry.extract_version = static_cast<uint8_t>(get(directory, at + 6, 1));
    entry.flag_bits = static_cast<uint16_t>(get(directory, at + 8, 2) & ~0x800u);
    entry.method = static_cast<uint16_t>(get(directory, at + 10, 2));
    entry.dos_time = static_cast<uint16_t>(get(directory, at + 12, 2));
    entry.dos_date = static_cast<uint16_t>(get(directory, at + 14, 2));
    entry.crc = static_cast<uint32_t>(get(directory, at + 16, 4));
    entry.compressed_size = get(directory, at + 20, 4);
    entry.size = get(directory, at + 24, 4);
    const size_t name_length = get(directory, at + 28, 2);
    const size_t extra_length = get(directory, at + 30, 2);
    const size_t comment_length = get(directory, at + 32, 2);
    entry.internal_attr = static_cast<uint16_t>(get(directory, at + 36, 2));
    entry.external_attr = static_cast<uint32_t>(get(directory, at + 38, 4));
    entry.header_offset = get(directory, at + 42, 4);
    if (at + 46 + name_length + extra_length + comment_length > directory.size()) {
      throw bad("a central directory entry runs past the directory");
    }
    entry.name = directory.substr(at + 46, name_length);
    const std::string extra = directory.substr(at + 46 + name_length, extra_length);
    for (size_t field = 0; field + 4 <= extra.size();) {
      const uint64_t id = get(extra, field, 2);
      const uint64_t length = get(extra, field + 2, 2);
      if (id == 1) {
        size_t value = field + 4;
        auto next = [&]() {
          if (value + 8 > field + 4 + length) {
            throw bad("a short ZIP64 field in " + entry.name);
          }
          const uint64_t v = get(extra, value, 8);
          value += 8;
          return v;
        };
        if (entry.size == 0xffffffff) entry.size = next();
        if (entry.compressed_size == 0xffffffff) entry.compressed_size = next();
        if (entry.header_offset == 0xffffffff) entry.header_offset = next();
      }
      field += 4 + length;
    }
    entry.local_zip64 = local_zip64_for(entry.size);
    by_name_.emplace(entry.name, entries_.size());
    entries_.push_back(std::move(entry));
    at += 46 + name_length + extra_length + comment_length;
  }
}

ZipReader::~ZipReader() = default;

const ZipEntry* ZipReader::find(const std::string& name) const {
  const auto found = by_name_.find(name);
  return found == by_name_.end() ? nullptr : &entries_[found->second];
}

uint64_t ZipReader::data_offset(const ZipEntry& entry) const {
  const std::string header = read_at(fd_.get(), entry.header_offset, 30, path_);
  if (get(header, 0, 4) != 0x04034b50) {
    throw Error(path_.string() + ": no local header for " + entry.name, ErrorKind::bad_input);
  }
  const uint64_t name_length = get(header, 26, 2);
  const uint64_t extra_length = get(header, 28, 2);
  if (read_at(fd_.get(), entry.header_offset + 30, name_length, path_) != entry.name) {
    throw Error(path_.string() + ": the local header of " + entry.name + " names another file",
                ErrorKind::bad_input);
  }
  const uint64_t offset = entry.header_offset + 30 + name_length + extra_length;
  if (offset + entry.compressed_size > file_size_) {
    throw Error(path_.string() + ": the data of " + entry.name + " runs past the end",
                ErrorKind::bad_input);
  }
  return offset;
}

std::string ZipReader::read(const ZipEntry& entry) const {
  const std::string data = read_at(fd_.get(), data_offset(entry), entry.compressed_size, path_);
  if (entry.method == zip_stored) {
    return data;
  }
  if (entry.method != zip_deflated) {
    throw Error(path_.string() + ": " + entry.name + " uses compression method " +
                    std::to_string(entry.method) + ", not stored or deflated",
                ErrorKind::bad_input);
  }
  // Deflate gives at most 1032 bytes a compressed byte: a larger claim is
  // false, and no buffer is sized by it.
  if (entry.size / 1032 > entry.compressed_size) {
    throw Error(path_.string() + ": " + entry.name + " claims " + std::to_string(entry.size) +
                    " bytes from " + std::to_string(entry.compressed_size) +
                    " compressed, more than deflate gives",
                ErrorKind::bad_input);
  }
  std::string out(entry.size, '\0');
  libdeflate_decompressor* decompressor = libdeflate_alloc_decompressor();
  size_t actual = 0;
  const auto result = libdeflate_deflate_decompress(decompressor, data.data(), data.size(),
                                                    out.data(), out.size(), &actual);
  libdeflate_free_decompressor(decompressor);
  if (result != LIBDEFLATE_SUCCESS || actual != entry.size ||
      libdeflate_crc32(0, out.data(), out.size()) != entry.crc) {
    throw Error(path_.string() + ": " + entry.name + " does not decompress to its CRC and size",
                ErrorKind::bad_input);
  }
  return out;
}

}  // namespace ascend_setup
