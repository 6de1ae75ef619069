// The ZIP records as Python's zipfile writes them (the writer of the wheel
// package's WheelFile): a local header rewritten once CRC and sizes are known
// (no data descriptor), the ZIP64 extra in the local header when the entry's
// size * 1.05 passes 2^31 - 1, ZIP64 fields in the central directory for
// sizes and offsets past 2^31 - 1, the ZIP64 end records when the central
// directory's offset or size passes it or there are more than 65535 entries.
// Same thresholds and versions (20, 45 with ZIP64), create_system 3 (Unix),
// flag 0x800 for a non-ASCII name, so the same entries give the same bytes.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace ascend_setup {

inline constexpr uint64_t zip64_limit = (uint64_t{1} << 31) - 1;
inline constexpr uint16_t zip_stored = 0;
inline constexpr uint16_t zip_deflated = 8;

struct ZipEntry {
  std::string name;
  uint16_t dos_time = 0;
  uint16_t dos_date = 0;
  uint16_t method = zip_deflated;
  uint32_t external_attr = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t header_offset = 0;
  uint8_t create_version = 20;
  uint8_t create_system = 3;
  uint8_t extract_version = 20;
  uint16_t flag_bits = 0;  // 0x800 added for a non-ASCII name
  uint16_t internal_attr = 0;
  // Decided before the data is written, as zipfile does: size * 1.05 > limit.
  bool local_zip64 = false;
};

// zipfile's choice for an entry of `size` bytes.
bool local_zip64_for(uint64_t size);

// The DOS date and time of `seconds` since the epoch, in UTC (as
// time.gmtime), clamped to 1980-01-01 as the wheel package does.
void set_dos_time(ZipEntry& entry, int64_t seconds);

// The local header (with name and extra) for the entry's current fields; its
// length does not depend on CRC or sizes.
std::string local_header(const ZipEntry& entry);

// The central directory, ZIP64 end records where needed, and the end record,
// for entries whose data ends at `directory_offset`.
std::string central_directory(const std::vector<ZipEntry>& entries, uint64_t directory_offset);

}  // namespace ascend_setup
