// The digests the wheel writer recorded for the previous wheel
// (build/ascend-setup/wheel-digests/<wheel>.json), as outside input: the input
// is that file's text. Invariants:
// - parse_wheel_digests() never throws; what it accepts holds together
//   (each entry's chunk count is its size's, the chunks' sizes add up to the
//   entry's) and formats back to text that parses to the same;
// - as the digests of a previous wheel, both as they are and with the input's
//   fields laid over the wheel's true digests (so that the chunk checks are
//   reached: a JSON object's keys replace the true ones, "{}" is the true
//   digests), they never make writing the new wheel fail, nor change what
//   it holds: the bdist directory's files, byte for byte, CRCs right.
#include "base/wheel/wheel_digests.hpp"
#include "base/wheel/wheel_writer.hpp"
#include "base/wheel/zip_reader.hpp"
#include "fuzz_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <map>

using namespace ascend_setup;
namespace fs = std::filesystem;

namespace {

constexpr const char* kWheel = "demo-1.0-py3-none-any.whl";

const std::map<std::string, std::string>& files() {
  static const std::map<std::string, std::string> contents = {
      {"demo/__init__.py", "VALUE = 1\n"},
      {"demo/data.bin", std::string(3000, 'x') + "tail"},
      {"demo/empty.txt", ""},
      {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
      {"demo-1.0.dist-info/WHEEL",
       "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
  };
  return contents;
}

WheelWriteOptions options_in(const fs::path& dir) {
  static const fs::path base = [] {
    const fs::path root = fuzz::scratch() / "bdist";
    for (const auto& [name, content] : files()) {
      fs::create_directories((root / name).parent_path());
      fuzz::write_file(root / name, content);
    }
    return root;
  }();
  WheelWriteOptions options;
  options.wheel = dir / "dist" / kWheel;
  options.base_dir = base;
  options.source_date_epoch = 315532800;
  options.previous = options.wheel;
  options.digests = dir / "state" / (std::string(kWheel) + ".json");
  return options;
}

// The previous wheel and its true digests, written once.
const std::pair<std::string, std::string>& previous() {
  static const std::pair<std::string, std::string> written = [] {
    const WheelWriteOptions options = options_in(fuzz::fresh_directory("previous"));
    fs::create_directories(options.wheel.parent_path());
    write_wheel(options, fuzz::writer_lock());
    std::ifstream wheel(options.wheel, std::ios::binary);
    std::ifstream digests(*options.digests, std::ios::binary);
    return std::pair<std::string, std::string>(
        std::string(std::istreambuf_iterator<char>(wheel), {}),
        std::string(std::istreambuf_iterator<char>(digests), {}));
  }();
  return written;
}

void write_with_digests(const std::string& digests) {
  const fs::path dir = fuzz::fresh_directory("run");
  const WheelWriteOptions options = options_in(dir);
  fs::create_directories(options.wheel.parent_path());
  fs::create_directories(options.digests->parent_path());
  fuzz::write_file(options.wheel, previous().first);
  fuzz::write_file(*options.digests, digests);
  WheelWriteStats stats;
  FUZZ_CHECK(fuzz::accepts([&] { stats = write_wheel(options, fuzz::writer_lock()); }),
             "the previous wheel's digests stopped the new wheel's writing");
  const ZipReader written(options.wheel);
  FUZZ_CHECK(written.entries().size() == files().size() + 1,
             "the new wheel does not hold the bdist directory's files and RECORD");
  for (const auto& [name, content] : files()) {
    const ZipEntry* entry = written.find(name);
    FUZZ_CHECK(entry != nullptr && written.read(*entry) == content,
               name + " in the new wheel is not the bdist directory's file");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  std::optional<WheelDigests> digests;
  FUZZ_CHECK(fuzz::accepts([&] { digests = parse_wheel_digests(text); }),
             "parse_wheel_digests threw");
  if (digests) {
    for (const auto& [name, entry] : digests->entries) {
      uint64_t total = 0;
      for (const auto& chunk : entry.chunks) {
        total += chunk.compressed_size;
      }
      FUZZ_CHECK(entry.chunks.size() == chunk_count(entry.method, entry.size) &&
                     total == entry.compressed_size,
                 name + ": chunks that do not hold together were accepted");
    }
    const std::string formatted = format_wheel_digests(*digests);
    const auto again = parse_wheel_digests(formatted);
    FUZZ_CHECK(again && format_wheel_digests(*again) == formatted,
               "accepted digests read otherwise when formatted again");
  }
  write_with_digests(text);
  const auto input = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (input.is_object()) {
    auto laid = nlohmann::json::parse(previous().second);
    for (const auto& [key, value] : input.items()) {
      laid[key] = value;
    }
    write_with_digests(laid.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return 0;
}
