#include "base/wheel/wheel_digests.hpp"

#include "base/util/digest.hpp"
#include "base/wheel/parallel_deflate.hpp"
#include "base/wheel/zip_reader.hpp"

#include <nlohmann/json.hpp>

namespace ascend_setup {

namespace {

constexpr int format_version = 1;
constexpr size_t digest_size = 32;
// The most bytes a 1 MiB chunk becomes (libdeflate's bound for incompressible
// input is a few hundred bytes more than the chunk, the joining a few more):
// a larger claim is false, and no read is sized by it.
constexpr uint64_t chunk_bytes_limit = deflate_chunk_size + deflate_chunk_size / 16 + 4096;

bool utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

std::optional<std::string> digest_from(const nlohmann::json& value) {
  if (!value.is_string()) {
    return std::nullopt;
  }
  const std::string& text = value.get_ref<const std::string&>();
  if (text.size() != 2 * digest_size) {
    return std::nullopt;
  }
  return from_hex(text);
}

std::optional<uint64_t> number_from(const nlohmann::json& value) {
  if (!value.is_number_unsigned()) {
    return std::nullopt;
  }
  return value.get<uint64_t>();
}

}  // namespace

uint64_t chunk_count(uint16_t method, uint64_t size) {
  const uint64_t chunks = size / deflate_chunk_size + (size % deflate_chunk_size != 0 ? 1 : 0);
  return method == zip_stored ? chunks : std::max<uint64_t>(1, chunks);
}

std::string format_wheel_digests(const WheelDigests& digests) {
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& [name, entry] : digests.entries) {
    if (!utf8(name)) {
      continue;  // JSON could not name it: left out, so compressed again each time
    }
    nlohmann::json chunks = nlohmann::json::array();
    for (const auto& chunk : entry.chunks) {
      chunks.push_back({chunk.compressed_size, to_hex(chunk.content), to_hex(chunk.compressed)});
    }
    entries[name] = {{"method", entry.method},
                     {"size", entry.size},
                     {"compressed_size", entry.compressed_size},
                     {"hash", entry.hash},
                     {"chunks", std::move(chunks)}};
  }
  const nlohmann::json document = {{"format", format_version},
                                   {"chunk_size", deflate_chunk_size},
                                   {"wheel_size", digests.wheel_size},
                                   {"directory_sha256", to_hex(digests.directory)},
                                   {"entries", std::move(entries)}};
  return document.dump() + "\n";
}

std::optional<WheelDigests> parse_wheel_digests(std::string_view text) {
  const auto document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object() || document.value("format", nlohmann::json()) != format_version ||
      document.value("chunk_size", nlohmann::json()) != deflate_chunk_size) {
    return std::nullopt;
  }
  WheelDigests digests;
  const auto wheel_size = number_from(document.value("wheel_size", nlohmann::json()));
  const auto directory = digest_from(document.value("directory_sha256", nlohmann::json()));
  const auto entries = document.find("entries");
  if (!wheel_size || !directory || entries == document.end() || !entries->is_object()) {
    return std::nullopt;
  }
  digests.wheel_size = *wheel_size;
  digests.directory = *directory;
  for (const auto& [name, value] : entries->items()) {
    if (!value.is_object()) {
      return std::nullopt;
    }
    const auto method = number_from(value.value("method", nlohmann::json()));
    const auto size = number_from(value.value("size", nlohmann::json()));
    const auto compressed_size = number_from(value.value("compressed_size", nlohmann::json()));
    const auto hash = value.find("hash");
    const auto chunks = value.find("chunks");
    if (!method || (*method != zip_stored && *method != zip_deflated) || !size ||
        !compressed_size || hash == value.end() || !hash->is_string() || chunks == value.end() ||
        !chunks->is_array() ||
        chunks->size() != chunk_count(static_cast<uint16_t>(*method), *size)) {
      return std::nullopt;
    }
    EntryDigests entry;
    entry.method = static_cast<uint16_t>(*method);
    entry.size = *size;
    entry.compressed_size = *compressed_size;
    entry.hash = hash->get<std::string>();
    uint64_t total = 0;
    for (const auto& chunk : *chunks) {
      if (!chunk.is_array() || chunk.size() != 3) {
        return std::nullopt;
      }
      const auto length = number_from(chunk[0]);
      auto content = digest_from(chunk[1]);
      auto compressed = digest_from(chunk[2]);
      if (!length || !content || !compressed || *length > chunk_bytes_limit ||
          *length > entry.compressed_size - total) {
        return std::nullopt;
      }
      total += *length;
      entry.chunks.push_back({*length, std::move(*content), std::move(*compressed)});
    }
    if (total != entry.compressed_size) {
      return std::nullopt;
    }
    digests.entries.emplace(name, std::move(entry));
  }
  return digests;
}

std::string directory_digest(const ZipReader& zip) {
  Sha256 sha;
  for (uint64_t at = zip.directory_offset(); at < zip.size();) {
    const size_t length =
        static_cast<size_t>(std::min<uint64_t>(deflate_chunk_size, zip.size() - at));
    sha.update(read_at(zip.fd(), at, length, zip.path()));
    at += length;
  }
  return sha.digest();
}

bool matches(const WheelDigests& digests, const ZipReader& zip) {
  if (digests.wheel_size != zip.size() || digests.directory != directory_digest(zip)) {
    return false;
  }
  for (const auto& [name, entry] : digests.entries) {
    const ZipEntry* found = zip.find(name);
    if (found == nullptr || found->method != entry.method || found->size != entry.size ||
        found->compressed_size != entry.compressed_size) {
      return false;
    }
  }
  return true;
}

}  // namespace ascend_setup
