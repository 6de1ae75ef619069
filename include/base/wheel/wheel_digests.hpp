// The digests the wheel writer records beside a wheel it wrote, so that the
// next packing can reuse the wheel's entries without inflating them: for each
// entry it compressed or reused, per 1 MiB chunk of content (deflate_chunk_size,
// the chunks parallel_deflate.hpp compresses on their own), the SHA-256 of
// the chunk's content and of the bytes it became in the wheel, with the
// entry's RECORD hash; and the wheel they belong to, by its size and the
// SHA-256 of its central directory (everything from the directory's offset to
// the end: every entry's name, CRC, sizes and offset). The wheel itself stays
// as Python's zipfile writes it: the digests live in a file of their own (in
// the tree's state directory, state_paths.hpp), JSON.
//
// An entry whose name is not UTF-8 is left out (JSON cannot name it): it is
// compressed each time.
//
// The file is outside input: parse_wheel_digests() gives nullopt for anything
// malformed (not JSON, another format, a digest that is not 64 hex digits, a
// number out of range, a chunk of more bytes than deflate makes of 1 MiB,
// chunks that do not add up); matches() says whether it belongs to the exact
// wheel open. A file that does not is ignored (every entry compressed again), never
// trusted: reuse also needs each chunk's bytes in the wheel to hash to the
// recorded digest.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

class ZipReader;

struct ChunkDigest {
  uint64_t compressed_size = 0;  // the chunk's bytes in the wheel
  std::string content;           // SHA-256 (32 raw bytes) of the chunk's content
  std::string compressed;        // SHA-256 (32 raw bytes) of its bytes in the wheel
};

struct EntryDigests {
  uint16_t method = 0;
  uint64_t size = 0;
  uint64_t compressed_size = 0;
  std::string hash;  // the RECORD hash: "sha256=..."
  std::vector<ChunkDigest> chunks;
};

struct WheelDigests {
  uint64_t wheel_size = 0;
  std::string directory;  // SHA-256 (32 raw bytes) of the central directory to the end
  std::map<std::string, EntryDigests> entries;
};

// How many chunks an entry of `size` bytes has: deflated, at least one (an
// empty file is one empty chunk); stored, none for an empty file.
uint64_t chunk_count(uint16_t method, uint64_t size);

std::string format_wheel_digests(const WheelDigests& digests);
std::optional<WheelDigests> parse_wheel_digests(std::string_view text);

// SHA-256 of the wheel's bytes from its central directory to its end.
std::string directory_digest(const ZipReader& zip);

// Whether `digests` were recorded for the wheel `zip` reads: its size and
// directory digest, and each recorded entry consistent with the wheel's entry
// of that name (method, sizes, chunk count, the chunks' sizes adding up).
bool matches(const WheelDigests& digests, const ZipReader& zip);

}  // namespace ascend_setup
