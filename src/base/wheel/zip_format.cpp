#include "base/wheel/zip_format.hpp"

#include <algorithm>

namespace ascend_setup {

namespace {

constexpr uint8_t zip64_version = 45;
constexpr uint16_t utf8_name_flag = 0x800;
constexpr int64_t minimum_timestamp = 315532800;  // 1980-01-01 00:00:00 UTC

void put16(std::string& out, uint64_t value) {
  out += static_cast<char>(value & 0xff);
  out += static_cast<char>((value >> 8) & 0xff);
}
void put32(std::string& out, uint64_t value) {
  put16(out, value & 0xffff);
  put16(out, (value >> 16) & 0xffff);
}
void put64(std::string& out, uint64_t value) {
  put32(out, value & 0xffffffff);
  put32(out, value >> 32);
}

uint16_t name_flags(const ZipEntry& entry) {
  const bool ascii = std::all_of(entry.name.begin(), entry.name.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  return ascii ? entry.flag_bits : static_cast<uint16_t>(entry.flag_bits | utf8_name_flag);
}

}  // namespace

bool local_zip64_for(uint64_t size) {
  return static_cast<double>(size) * 1.05 > static_cast<double>(zip64_limit);
}

void set_dos_time(ZipEntry& entry, int64_t seconds) {
  const time_t clamped = static_cast<time_t>(std::max(seconds, minimum_timestamp));
  struct tm utc {};
  gmtime_r(&clamped, &utc);
  entry.dos_date =
      static_cast<uint16_t>((utc.tm_year + 1900 - 1980) << 9 | (utc.tm_mon + 1) << 5 | utc.tm_mday);
  entry.dos_time = static_cast<uint16_t>(utc.tm_hour << 11 | utc.tm_min << 5 | (utc.tm_sec / 2));
}

std::string local_header(const ZipEntry& entry) {
  const bool large = entry.size > zip64_limit || entry.compressed_size > zip64_limit;
  const uint8_t extract =
      large ? std::max(zip64_version, entry.extract_version) : entry.extract_version;
  std::string extra;
  if (entry.local_zip64) {
    put16(extra, 1);
    put16(extra, 16);
    put64(extra, entry.size);
    put64(extra, entry.compressed_size);
  }
  std::string out;
  put32(out, 0x04034b50);
  out += static_cast<char>(extract);
  out += '\0';  // reserved
  put16(out, name_flags(entry));
  put16(out, entry.method);
  put16(out, entry.dos_time);
  put16(out, entry.dos_date);
  put32(out, entry.crc);
  put32(out, large ? 0xffffffff : entry.compressed_size);
  put32(out, large ? 0xffffffff : entry.size);
  put16(out, entry.name.size());
  put16(out, extra.size());
  return out + entry.name + extra;
}

std::string central_directory(const std::vector<ZipEntry>& entries, uint64_t directory_offset) {
  std::string out;
  for (const auto& entry : entries) {
    std::vector<uint64_t> zip64;
    const bool large = entry.size > zip64_limit || entry.compressed_size > zip64_limit;
    if (large) {
      zip64.push_back(entry.size);
      zip64.push_back(entry.compressed_size);
    }
    const bool far = entry.header_offset > zip64_limit;
    if (far) {
      zip64.push_back(entry.header_offset);
    }
    std::string extra;
    if (!zip64.empty()) {
      put16(extra, 1);
      put16(extra, 8 * zip64.size());
      for (const uint64_t value : zip64) {
        put64(extra, value);
      }
    }
    const uint8_t minimum = zip64.empty() ? 0 : zip64_version;
    put32(out, 0x02014b50);
    out += static_cast<char>(std::max(minimum, entry.create_version));
    out += static_cast<char>(entry.create_system);
    out += static_cast<char>(std::max(minimum, entry.extract_version));
    out += '\0';  // reserved
    put16(out, name_flags(entry));
    put16(out, entry.method);
    put16(out, entry.dos_time);
    put16(out, entry.dos_date);
    put32(out, entry.crc);
    put32(out, large ? 0xffffffff : entry.compressed_size);
    put32(out, large ? 0xffffffff : entry.size);
    put16(out, entry.name.size());
    put16(out, extra.size());
    put16(out, 0);  // comment
    put16(out, 0);  // disk
    put16(out, entry.internal_attr);
    put32(out, entry.external_attr);
    put32(out, far ? 0xffffffff : entry.header_offset);
    out += entry.name;
    out += extra;
  }
  const uint64_t count = entries.size();
  const uint64_t size = out.size();
  const uint64_t end_of_directory = directory_offset + size;
  if (count > 0xffff || directory_offset > zip64_limit || size > zip64_limit) {
    put32(out, 0x06064b50);
    put64(out, 44);
    put16(out, 45);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, count);
    put64(out, count);
    put64(out, size);
    put64(out, directory_offset);
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, end_of_directory);
    put32(out, 1);
  }
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, std::min<uint64_t>(count, 0xffff));
  put16(out, std::min<uint64_t>(count, 0xffff));
  put32(out, std::min<uint64_t>(size, 0xffffffff));
  put32(out, std::min<uint64_t>(directory_offset, 0xffffffff));
  put16(out, 0);  // comment
  return out;
}

}  // namespace ascend_setup
