// The previous wheel in dist/ (ZIP, ZIP64) and its RECORD. The input is the
// bytes of a ZIP file. Invariants:
// - only Error refuses it (the reader, the RECORD parser, the writer);
// - a RECORD the reader finds parses, and formats back to the same rows;
// - a ZIP the reader accepts round-trips: written again (rezip_wheel), the
//   result holds the same entries, in the same order, with the same bytes;
// - as the previous wheel of a new wheel (read, then without digests of its
//   own nothing reused: wheel_digests' target fuzzes the digests), it never
//   changes what the new wheel holds: that wheel is the bdist directory's
//   files, byte for byte, whatever the previous wheel claims.
#include "base/wheel/record.hpp"
#include "base/wheel/wheel_writer.hpp"
#include "base/wheel/zip_reader.hpp"
#include "fuzz_support.hpp"

#include <map>
#include <memory>

using namespace ascend_setup;
namespace fs = std::filesystem;

namespace {

constexpr const char* kWheel = "demo-1.0-py3-none-any.whl";

// Entries up to this size are read back whole (the reader's read() is for
// small entries; a ZIP may claim any size).
constexpr std::uint64_t kReadLimit = 1 << 20;

// The bdist directory of the new wheel: a few files, RECORD's dist-info.
fs::path bdist_directory() {
  static const fs::path dir = [] {
    const fs::path root = fuzz::scratch() / "bdist";
    fs::create_directories(root / "demo");
    fs::create_directories(root / "demo-1.0.dist-info");
    fuzz::write_file(root / "demo" / "__init__.py", "VALUE = 1\n");
    fuzz::write_file(root / "demo" / "data.bin", std::string(3000, 'x') + "tail");
    fuzz::write_file(root / "demo-1.0.dist-info" / "METADATA",
                     "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n");
    fuzz::write_file(root / "demo-1.0.dist-info" / "WHEEL",
                     "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n");
    return root;
  }();
  return dir;
}

std::map<std::string, std::string> contents(const ZipReader& zip) {
  std::map<std::string, std::string> result;
  for (const ZipEntry& entry : zip.entries()) {
    result[entry.name] = zip.read(entry);
  }
  return result;
}

void check_record(const std::string& text) {
  const auto parsed = fuzz::parsed([&] { return parse_record(text); });
  if (!parsed) {
    return;
  }
  const std::map<std::string, RecordRow>& rows = *parsed;
  std::vector<RecordRow> list;
  for (const auto& [path, row] : rows) {
    list.push_back(row);
  }
  const auto again = parse_record(format_record(list));
  FUZZ_CHECK(again.size() == rows.size(), "RECORD rows lost when formatted again");
  for (const auto& [path, row] : rows) {
    const auto it = again.find(path);
    FUZZ_CHECK(it != again.end() && it->second.hash == row.hash && it->second.size == row.size,
               "RECORD row of " + path + " changed when formatted again");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path dir = fuzz::fresh_directory("run");
  const fs::path previous = dir / kWheel;
  fuzz::write_file(previous, fuzz::as_text(data, size));

  std::unique_ptr<ZipReader> zip;
  std::map<std::string, std::string> original;
  bool small = true;
  const bool readable = fuzz::accepts([&] {
    zip = std::make_unique<ZipReader>(previous);
    for (const ZipEntry& entry : zip->entries()) {
      small = small && entry.size <= kReadLimit;
    }
    if (small) {
      original = contents(*zip);
    }
  });
  if (readable && small) {
    if (const auto it = original.find("demo-1.0.dist-info/RECORD"); it != original.end()) {
      check_record(it->second);
    }
    // Written again: the same entries and bytes.
    WheelWriteOptions again;
    again.wheel = dir / "again" / kWheel;
    fs::create_directories(again.wheel.parent_path());
    if (fuzz::accepts([&] { rezip_wheel(previous, again, fuzz::writer_lock()); })) {
      const ZipReader reread(again.wheel);
      FUZZ_CHECK(reread.entries().size() == zip->entries().size(),
                 "rezip_wheel changed the number of entries");
      for (size_t i = 0; i < reread.entries().size(); ++i) {
        FUZZ_CHECK(reread.entries()[i].name == zip->entries()[i].name,
                   "rezip_wheel changed the order or names of the entries");
      }
      FUZZ_CHECK(contents(reread) == original, "rezip_wheel changed an entry's bytes");
    }
  }
  zip.reset();

  // The hostile file as the previous wheel of a new one.
  WheelWriteOptions options;
  options.wheel = previous;
  options.base_dir = bdist_directory();
  options.source_date_epoch = 315532800;
  options.previous = previous;
  options.digests = dir / "none.json";  // read as none: the ZIP is read, nothing reused
  FUZZ_CHECK(fuzz::accepts([&] { write_wheel(options, fuzz::writer_lock()); }),
             "a broken previous wheel stopped the new wheel's writing");
  const ZipReader written(previous);
  const auto files = contents(written);
  FUZZ_CHECK(files.at("demo/__init__.py") == "VALUE = 1\n", "a reused entry's bytes differ");
  FUZZ_CHECK(files.at("demo/data.bin") == std::string(3000, 'x') + "tail",
             "a reused entry's bytes differ");
  FUZZ_CHECK(files.size() == 5,
             "the new wheel does not hold the bdist directory's 4 files and RECORD");
  return 0;
}
