// The native wheel writer (base/wheel) against the wheel package's own
// WheelFile and Python's zipfile, with real files: the same bytes when both
// store, the same entries, metadata and RECORD when deflating, reproducible
// with SOURCE_DATE_EPOCH, ZIP64 past 4 GiB (a sparse file), reuse of
// unchanged entries only, vouched for by the digests recorded with the
// previous wheel (digests that do not belong to it are ignored), and
// auditwheel's level-0 output deflated again.
#include "base/wheel/wheel_writer.hpp"
#include "base/util/error.hpp"
#include "base/wheel/parallel_deflate.hpp"
#include "base/wheel/record.hpp"
#include "base/wheel/wheel_digests.hpp"
#include "base/wheel/zip_reader.hpp"

#include "test_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

using namespace ascend_setup;
using namespace test_support;

namespace {

const std::string wheel_name = "demo_pkg-1.0-cp311-cp311-linux_x86_64.whl";

// Text-like and binary-like bytes that compress as code does, not as zeros.
std::string compressible(size_t size, unsigned seed) {
  std::mt19937 random(seed);
  static const char* words[] = {"return ", "self.",  "module",   "(x, y)", "\n    ", "= None",
                                "import ", "0x7f3a", "\x00\x01", "triton", "_C.so",  "llvm::"};
  std::string out;
  while (out.size() < size) {
    out += words[random() % 12];
    if (random() % 7 == 0) {
      out += static_cast<char>(random() & 0xff);
    }
  }
  out.resize(size);
  return out;
}

// The start of this test binary (code and debug info: compressible as a
// built extension is).
std::string binary_bytes(size_t size) {
  std::string bytes = read_file("/proc/self/exe");
  bytes.resize(std::min(size, bytes.size()));
  return bytes;
}

// A bdist directory as bdist_wheel leaves it before packing.
fs::path make_bdist(const fs::path& dir) {
  const fs::path base = dir / "bdist";
  write_file(base / "demo" / "__init__.py", "from .core import run\n");
  write_file(base / "demo" / "core.py", compressible(40000, 1));
  write_file(base / "demo" / "_C" / "libdemo.so", binary_bytes(3 * deflate_chunk_size + 12345));
  write_file(base / "demo" / "empty.txt", "");
  write_file(base / "demo" / "with,comma.txt", "comma\n");
  write_file(base / "demo" / "ünïcode.txt", "non-ascii name\n");
  write_file(base / "demo" / "tool", "#!/bin/sh\necho tool\n");
  fs::permissions(base / "demo" / "tool", fs::perms(0755));
  fs::create_symlink("core.py", base / "demo" / "core_link.py");
  fs::create_directories(base / "demo" / "data");
  fs::create_directory_symlink("../demo/data", base / "demo" / "dir_link");
  write_file(base / "a_first.py", "x = 1\n");
  write_file(base / "demo_pkg-1.0.dist-info" / "METADATA",
             "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n");
  write_file(base / "demo_pkg-1.0.dist-info" / "WHEEL",
             "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: "
             "cp311-cp311-linux_x86_64\n");
  write_file(base / "demo_pkg-1.0.dist-info" / "top_level.txt", "demo\n");
  write_file(base / "demo_pkg-1.0.dist-info" / "RECORD", "stale,,\n");  // left out, as by WheelFile
  return base;
}

// The wheel package's own writer on the same directory.
void python_write(const fs::path& base, const fs::path& wheel, bool stored,
                  const std::optional<std::string>& epoch) {
  fs::create_directories(wheel.parent_path());
  must_run({SYSTEM_PYTHON, "-c",
            "import sys, zipfile\n"
            "from wheel.wheelfile import WheelFile\n"
            "with WheelFile(sys.argv[2], 'w', zipfile.ZIP_STORED if sys.argv[3] == '1' else "
            "zipfile.ZIP_DEFLATED) as wf:\n"
            "    wf.write_files(sys.argv[1])\n",
            base.string(), wheel.string(), stored ? "1" : "0"},
           base, {{"SOURCE_DATE_EPOCH", epoch}});
}

// Where the tests keep a wheel's digests: a state directory beside its dist
// directory, one for each.
fs::path digests_of(const fs::path& wheel) {
  return fs::path(wheel.parent_path().string() + ".state") / (wheel.filename().string() + ".json");
}

WheelWriteStats native_write(const fs::path& base, const fs::path& wheel, uint16_t method,
                             std::optional<int64_t> epoch, bool reuse = false,
                             unsigned threads = 2) {
  WheelWriteOptions options;
  options.wheel = wheel;
  options.base_dir = base;
  options.method = method;
  options.source_date_epoch = epoch;
  options.threads = threads;
  if (reuse) {
    options.previous = wheel;
    options.digests = digests_of(wheel);
  }
  return write_wheel(options, test_writer_lock());
}

// The sum of the entries' sizes and compressed sizes, RECORD left out.
std::pair<uint64_t, uint64_t> sizes_but_record(const fs::path& wheel) {
  const ZipReader zip(wheel);
  uint64_t size = 0;
  uint64_t compressed = 0;
  for (const auto& entry : zip.entries()) {
    if (!entry.name.ends_with("/RECORD")) {
      size += entry.size;
      compressed += entry.compressed_size;
    }
  }
  return {size, compressed};
}

// Overwrites `length` bytes at `at` with `byte`.
void overwrite(const fs::path& file, uint64_t at, size_t length, char byte) {
  const std::string bytes(length, byte);
  const int fd = ::open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)),
            static_cast<ssize_t>(length));
  ::close(fd);
}

// Every entry's metadata (not the compressed bytes) and content hash, and
// RECORD, as Python's zipfile reads them; also checks every CRC and that
// each RECORD hash verifies (wheel's WheelFile does in read mode).
std::string describe(const fs::path& wheel) {
  return must_run(
      {SYSTEM_PYTHON, "-c",
       "import sys, zipfile, hashlib\n"
       "from wheel.wheelfile import WheelFile\n"
       "with WheelFile(sys.argv[1]) as wf:\n"
       "    assert wf.testzip() is None\n"
       "    for i in wf.infolist():\n"
       "        data = wf.read(i)\n"  // WheelFile checks RECORD's hash on read
       "        print(i.filename, i.date_time, oct(i.external_attr), i.create_system,\n"
       "              i.create_version, i.extract_version, i.flag_bits, i.compress_type,\n"
       "              i.file_size, hex(i.CRC), hashlib.sha256(data).hexdigest()[:16])\n"
       "    print(wf.read(wf.record_path).decode())\n",
       wheel.string()},
      wheel.parent_path());
}

}  // namespace

TEST(WheelWriter, StoredWheelIsByteIdenticalToTheWheelPackages) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  python_write(base, dir.path() / "python" / wheel_name, true, "1700000000");
  native_write(base, dir.path() / "native" / wheel_name, zip_stored, 1700000000);
  EXPECT_TRUE(read_file(dir.path() / "native" / wheel_name) ==
              read_file(dir.path() / "python" / wheel_name));
}

TEST(WheelWriter, DeflatedWheelHasTheWheelPackagesEntriesMetadataAndRecord) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  python_write(base, dir.path() / "python" / wheel_name, false, "1700000000");
  const auto stats =
      native_write(base, dir.path() / "native" / wheel_name, zip_deflated, 1700000000);
  const std::string native = describe(dir.path() / "native" / wheel_name);
  EXPECT_EQ(native, describe(dir.path() / "python" / wheel_name));
  EXPECT_TRUE(contains(native, "demo/ünïcode.txt"));
  EXPECT_TRUE(contains(native, "\"demo/with,comma.txt\",sha256="));
  EXPECT_FALSE(contains(native, "stale"));
  EXPECT_FALSE(contains(native, "dir_link"));
  EXPECT_EQ(stats.entries, 13u);
  // Within 2% of zlib -6's size (libdeflate -6 in 1 MiB chunks).
  const double ratio = static_cast<double>(fs::file_size(dir.path() / "native" / wheel_name)) /
                       static_cast<double>(fs::file_size(dir.path() / "python" / wheel_name));
  EXPECT_LE(ratio, 1.02);
  must_run({SYSTEM_PYTHON, "-m", "zipfile", "-t", (dir.path() / "native" / wheel_name).string()},
           dir.path());
}

TEST(WheelWriter, FileDatesWithoutSourceDateEpochAreTheMtimes) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  for (const auto& entry : fs::recursive_directory_iterator(base)) {
    if (entry.is_regular_file() && !entry.is_symlink()) {
      fs::last_write_time(entry.path(),
                          fs::file_time_type::clock::now() - std::chrono::hours(24 * 400));
    }
  }
  native_write(base, dir.path() / "native" / wheel_name, zip_deflated, std::nullopt);
  python_write(base, dir.path() / "python" / wheel_name, false, std::nullopt);
  // RECORD is dated "now" by both: compare the other entries.
  const auto entries = [&](const fs::path& wheel) {
    std::string out;
    const ZipReader reader(wheel);
    for (const auto& e : reader.entries()) {
      if (!e.name.ends_with("RECORD")) {
        out += e.name + " " + std::to_string(e.dos_date) + " " + std::to_string(e.dos_time) + "\n";
      }
    }
    return out;
  };
  EXPECT_EQ(entries(dir.path() / "native" / wheel_name),
            entries(dir.path() / "python" / wheel_name));
}

TEST(WheelWriter, TheSameInputWithSourceDateEpochGivesAByteIdenticalWheel) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  native_write(base, dir.path() / "one" / wheel_name, zip_deflated, 1600000000);
  fs::last_write_time(base / "demo" / "core.py", fs::file_time_type::clock::now());
  native_write(base, dir.path() / "two" / wheel_name, zip_deflated, 1600000000);
  EXPECT_TRUE(read_file(dir.path() / "one" / wheel_name) ==
              read_file(dir.path() / "two" / wheel_name));
}

// The deflate runs on the threads the caller gives (the build's CPU figure,
// never the host's core count; 0 counts as 1), and their number does not
// change a byte of the wheel.
TEST(WheelWriter, TheCallersThreadFigureIsWhatRunsAndDoesNotChangeTheBytes) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  write_file(base / "demo" / "big.bin", compressible(5 * deflate_chunk_size + 7, 7));
  std::string first;
  for (const unsigned threads : {1u, 3u, 0u}) {
    WheelWriteOptions options;
    options.wheel = dir.path() / std::to_string(threads) / wheel_name;
    options.base_dir = base;
    options.source_date_epoch = 1600000000;
    options.threads = threads;
    const WheelWriteStats stats = write_wheel(options, test_writer_lock());
    EXPECT_EQ(stats.threads, std::max(1u, threads));
    const std::string bytes = read_file(options.wheel);
    if (first.empty()) {
      first = bytes;
    }
    EXPECT_TRUE(bytes == first) << threads << " threads";
  }
  EXPECT_EQ(ParallelDeflater(2, 6).threads(), 2u);
}

TEST(WheelWriter, UnchangedEntriesAreCopiedFromThePreviousWheelChangedOnesCompressed) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  const fs::path wheel = dir.path() / "dist" / wheel_name;
  const auto first = native_write(base, wheel, zip_deflated, 1600000000, true);
  EXPECT_EQ(first.reused, 0u);
  EXPECT_TRUE(fs::exists(digests_of(wheel)));
  const std::string before = read_file(wheel);
  const auto second = native_write(base, wheel, zip_deflated, 1600000000, true);
  EXPECT_EQ(second.reused, second.entries - 1);  // all but RECORD (it has no hash of its own)
  EXPECT_TRUE(read_file(wheel) == before);

  write_file(base / "demo" / "core.py", compressible(40000, 9));
  const auto third = native_write(base, wheel, zip_deflated, 1600000000, true);
  EXPECT_EQ(third.compressed, 3u);  // core.py, core_link.py (a link to it) and RECORD
  EXPECT_EQ(third.reused, third.entries - 3);
  EXPECT_EQ(describe(wheel), [&] {
    python_write(base, dir.path() / "python" / wheel_name, false, "1600000000");
    return describe(dir.path() / "python" / wheel_name);
  }());
  // No stray partial file.
  for (const auto& entry : fs::directory_iterator(dir.path() / "dist")) {
    EXPECT_EQ(entry.path().filename(), wheel_name);
  }
}

// A bdist directory packed once with its digests recorded (threads: 2).
class WheelReuse : public ::testing::Test {
 protected:
  void SetUp() override {
    native_write(base, wheel, zip_deflated, 1600000000, true, threads);
    first = read_file(wheel);
  }
  WheelWriteStats pack() {
    return native_write(base, wheel, zip_deflated, 1600000000, true, threads);
  }

  unsigned threads = 2;
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  const fs::path wheel = dir.path() / "dist" / wheel_name;
  std::string first;  // the first pack's bytes
};

// The no-op's work is hashing only: every byte of the new contents once and
// every byte of the previous entries once (nothing inflated, nothing
// compressed but RECORD), in one job per 1 MiB chunk, so a large entry is
// spread over the threads too; the wheel is the first pack's, byte for byte.
TEST_F(WheelReuse, ANoOpReusesEveryEntryByHashingOnlyChunkByChunk) {
  const auto [content, compressed] = sizes_but_record(wheel);
  threads = 3;
  const auto noop = pack();
  EXPECT_TRUE(read_file(wheel) == first);
  EXPECT_EQ(noop.reused, noop.entries - 1);
  EXPECT_EQ(noop.compressed, 1u);  // RECORD
  EXPECT_EQ(noop.threads, 3u);     // the first pack ran 2: the digests do not depend on it
  EXPECT_EQ(noop.hashed_bytes, content);
  EXPECT_EQ(noop.checked_bytes, compressed);
  // libdemo.so alone is 4 chunks; the 11 other files one each (symlinked core_link.py too).
  EXPECT_EQ(noop.check_jobs, 4u + 11u);
  EXPECT_GE(noop.cpu_seconds, 0.0);
  // A stored wheel the same way.
  const fs::path stored = dir.path() / "stored" / wheel_name;
  native_write(base, stored, zip_stored, 1600000000, true);
  const auto again = native_write(base, stored, zip_stored, 1600000000, true);
  EXPECT_EQ(again.reused, again.entries - 1);
  python_write(base, dir.path() / "python" / wheel_name, true, "1600000000");
  EXPECT_TRUE(read_file(stored) == read_file(dir.path() / "python" / wheel_name));
}

// A change within one chunk of a large file, its size kept (so name, size
// and method all match): only that file is compressed again, and the wheel is
// what a first pack of the changed directory gives.
TEST_F(WheelReuse, AFileChangedInOneChunkWithItsSizeKeptIsCompressedAgain) {
  overwrite(base / "demo" / "_C" / "libdemo.so", 2 * deflate_chunk_size + 100, 1, '\x42');
  const auto changed = pack();
  EXPECT_EQ(changed.compressed, 2u);  // libdemo.so and RECORD
  EXPECT_EQ(changed.reused, changed.entries - 2);
  native_write(base, dir.path() / "fresh" / wheel_name, zip_deflated, 1600000000);
  EXPECT_TRUE(read_file(wheel) == read_file(dir.path() / "fresh" / wheel_name));
}

TEST_F(WheelReuse, APreviousEntryWhoseBytesAreNotTheRecordedOnesIsCompressedAgain) {
  // Damage the big entry's compressed bytes, leaving its directory record
  // (and so the wheel's size and central directory).
  uint64_t at = 0;
  {
    ZipReader zip(wheel);
    const ZipEntry* entry = zip.find("demo/_C/libdemo.so");
    ASSERT_NE(entry, nullptr);
    at = zip.data_offset(*entry) + entry->compressed_size / 2;
  }
  overwrite(wheel, at, 16, '\x55');
  const auto stats = pack();
  EXPECT_EQ(stats.compressed, 2u);  // libdemo.so again, and RECORD (never reused: no hash)
  EXPECT_TRUE(read_file(wheel) == first);
}

// Digests that are not the previous wheel's: none, cut short, malformed,
// another wheel's, or the wheel rewritten by another writer since. Each time
// every entry is compressed, and the wheel is the first pack's.
TEST_F(WheelReuse, DigestsThatDoNotBelongToThePreviousWheelAreIgnored) {
  const std::string recorded = read_file(digests_of(wheel));
  // Another wheel of the same name, and its digests.
  const fs::path other_base = dir.path() / "other";
  write_file(other_base / "demo" / "core.py", compressible(40000, 1));
  write_file(other_base / "demo_pkg-1.0.dist-info" / "METADATA", "Name: demo-pkg\n");
  const fs::path other = dir.path() / "other-dist" / wheel_name;
  native_write(other_base, other, zip_deflated, 1600000000, true);

  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"none", [&] { fs::remove(digests_of(wheel)); }},
      {"cut short",
       [&] { write_file(digests_of(wheel), recorded.substr(0, recorded.size() / 2)); }},
      {"not JSON", [&] { write_file(digests_of(wheel), "\x89PNG\r\n"); }},
      {"another wheel's", [&] { write_file(digests_of(wheel), read_file(digests_of(other))); }},
      {"the wheel rewritten by the wheel package",
       [&] {
         python_write(base, wheel, false, "1600000000");
         write_file(digests_of(wheel), recorded);
       }},
      {"a CRC-32 in the wheel's central directory edited",
       [&] {
         const ZipReader zip(wheel);
         const auto at = first.find("demo/_C/libdemo.so", zip.directory_offset());
         ASSERT_NE(at, std::string::npos);
         overwrite(wheel, at - 46 + 16, 1, static_cast<char>(first[at - 46 + 16] ^ 1));
         write_file(digests_of(wheel), recorded);
       }},
      {"the wheel cut short",
       [&] {
         write_file(wheel, first.substr(0, first.size() - 1));
         write_file(digests_of(wheel), recorded);
       }},
  };
  for (const auto& [what, spoil] : cases) {
    pack();  // the digests are back
    spoil();
    const auto stats = pack();
    EXPECT_EQ(stats.reused, 0u) << what;
    EXPECT_EQ(stats.compressed, stats.entries) << what;
    EXPECT_TRUE(read_file(wheel) == first) << what;
    // ... and the digests recorded again: the next no-op reuses.
    EXPECT_EQ(pack().reused, stats.entries - 1) << what;
  }
}

// One entry's recorded content digest edited in otherwise matching digests:
// that entry is compressed again (its content does not hash to it); a
// recorded digest of the previous bytes edited: likewise. The other entries,
// a link to the same file among them, are reused.
TEST_F(WheelReuse, AnEditedDigestCostsItsEntryItsReuseAndNothingElse) {
  for (const int field : {1, 2}) {
    pack();
    auto digests = parse_wheel_digests(read_file(digests_of(wheel)));
    ASSERT_TRUE(digests);
    ChunkDigest& chunk = digests->entries.at("demo/core.py").chunks.at(0);
    std::string& digest = field == 1 ? chunk.content : chunk.compressed;
    digest[0] = static_cast<char>(digest[0] ^ 1);
    write_file(digests_of(wheel), format_wheel_digests(*digests));
    const auto stats = pack();
    EXPECT_EQ(stats.compressed, 2u)
        << field;  // core.py (not core_link.py: its own digests), RECORD
    EXPECT_TRUE(read_file(wheel) == first) << field;
  }
}

// The digests file as outside input: anything malformed reads as none.
TEST_F(WheelReuse, MalformedDigestsReadAsNone) {
  const std::string text = read_file(digests_of(wheel));
  const auto digests = parse_wheel_digests(text);
  ASSERT_TRUE(digests);
  EXPECT_EQ(format_wheel_digests(*digests), text);
  EXPECT_EQ(digests->entries.at("demo/_C/libdemo.so").chunks.size(), 4u);
  EXPECT_TRUE(matches(*digests, ZipReader(wheel)));
  const auto edited = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return std::string(text).replace(at, from.size(), to);
  };
  for (const std::string& bad : {
           std::string(),
           std::string("{}"),
           std::string("[]"),
           text.substr(0, 100),
           edited("\"format\":1", "\"format\":2"),
           edited("\"chunk_size\":1048576", "\"chunk_size\":65536"),
           edited("\"wheel_size\":", "\"wheel_size\":-"),
           edited("\"directory_sha256\":\"", "\"directory_sha256\":\"zz"),
           edited("\"method\":8", "\"method\":12"),
           edited("\"compressed_size\":", "\"compressed_size\":1"),
           edited("\"chunks\":[[", "\"chunks\":[[1,\"00\",\"00\"],["),
       }) {
    EXPECT_FALSE(parse_wheel_digests(bad)) << bad.substr(0, 200);
  }
  // A chunk claiming more bytes than deflate makes of 1 MiB; then a true one.
  WheelDigests claims;
  claims.directory = std::string(32, 'd');
  claims.entries["a"] = {zip_deflated,
                         1,
                         uint64_t{2} << 20,
                         "sha256=x",
                         {{uint64_t{2} << 20, std::string(32, 'a'), std::string(32, 'b')}}};
  EXPECT_FALSE(parse_wheel_digests(format_wheel_digests(claims)));
  claims.entries["a"].compressed_size = claims.entries["a"].chunks[0].compressed_size = 9;
  EXPECT_TRUE(parse_wheel_digests(format_wheel_digests(claims)));
  // A name that is not UTF-8 (JSON cannot hold it) is left out, the rest kept.
  claims.entries["\xff\xfe"] = claims.entries["a"];
  const auto kept = parse_wheel_digests(format_wheel_digests(claims));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->entries.size(), 1u);
  EXPECT_EQ(chunk_count(zip_deflated, 0), 1u);
  EXPECT_EQ(chunk_count(zip_stored, 0), 0u);
  EXPECT_EQ(chunk_count(zip_stored, deflate_chunk_size + 1), 2u);
}

TEST(WheelWriter, ChunksJoinIntoOneStreamThatZlibReads) {
  for (const size_t size : {size_t{0}, size_t{1}, deflate_chunk_size - 1, deflate_chunk_size,
                            deflate_chunk_size + 1, 5 * deflate_chunk_size + 7}) {
    TempDir dir;
    write_file(dir.path() / "bdist" / "f.bin", compressible(size, static_cast<unsigned>(size)));
    native_write(dir.path() / "bdist", dir.path() / wheel_name, zip_deflated, 1600000000);
    must_run({SYSTEM_PYTHON, "-m", "zipfile", "-t", (dir.path() / wheel_name).string()},
             dir.path());
  }
}

// A sparse 4.1 GiB file: ZIP64 sizes in the local header and the central
// directory; Python's zipfile reads it back (CRC checked) and finds the entry
// after it.
TEST(WheelWriter, Zip64PastFourGibibytesFromASparseFile) {
  TempDir dir;
  const fs::path base = dir.path() / "bdist";
  fs::create_directories(base / "big");
  const uint64_t size = (uint64_t{41} << 30) / 10;
  {
    const int fd = ::open((base / "big" / "huge.bin").c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    ASSERT_EQ(::pwrite(fd, "end", 3, static_cast<off_t>(size - 3)), 3);
    ::close(fd);
  }
  write_file(base / "z_after.txt", "after the big one\n");
  WheelWriteOptions options;
  options.wheel = dir.path() / wheel_name;
  options.base_dir = base;
  options.level = 1;
  options.source_date_epoch = 1600000000;
  options.threads = 2;  // as many as CI's cores: the 4 GiB of zeros in half the time of one
  write_wheel(options, test_writer_lock());
  EXPECT_LT(fs::file_size(options.wheel), uint64_t{64} << 20);
  const std::string out =
      must_run({SYSTEM_PYTHON, "-c",
                "import sys, zipfile, zlib\n"
                "with zipfile.ZipFile(sys.argv[1]) as z:\n"
                "    big = z.getinfo('big/huge.bin')\n"
                "    crc = 0\n"
                "    with z.open(big) as f:\n"  // reads it all: the CRC is checked at the end
                "        while True:\n"
                "            block = f.read(1 << 24)\n"
                "            if not block: break\n"
                "            tail = block[-3:]\n"
                "    print(big.file_size, tail.decode(), z.read('z_after.txt').decode().strip())\n",
                options.wheel.string()},
               dir.path());
  EXPECT_EQ(out, std::to_string(size) + " end after the big one\n");
  ZipReader zip(options.wheel);
  ASSERT_NE(zip.find("big/huge.bin"), nullptr);
  EXPECT_EQ(zip.find("big/huge.bin")->size, size);
  EXPECT_EQ(zip.find("big/huge.bin")->extract_version, 45);
  EXPECT_EQ(zip.find("z_after.txt")->extract_version, 20);
}

// The central directory's ZIP64 records for offsets past 2 GiB, as zipfile
// writes them (checked by reading them back with the reader).
TEST(WheelWriter, CentralDirectoryUsesZip64ForOffsetsPastTheLimit) {
  std::vector<ZipEntry> entries(2);
  entries[0].name = "a";
  entries[0].size = 10;
  entries[0].compressed_size = 10;
  entries[1].name = "b";
  entries[1].size = 5;
  entries[1].compressed_size = 5;
  entries[1].header_offset = uint64_t{5} << 30;
  const std::string directory = central_directory(entries, uint64_t{6} << 30);
  // zip64 end record and locator precede the end record
  EXPECT_NE(directory.find(std::string("PK\x06\x06", 4)), std::string::npos);
  EXPECT_NE(directory.find(std::string("PK\x06\x07", 4)), std::string::npos);
  // The second entry: versions 45, offset 0xffffffff with the real one in the extra.
  const size_t second = directory.find(std::string("PK\x01\x02", 4), 4);
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(directory[second + 4], 45);
  EXPECT_EQ(directory.substr(second + 42, 4), std::string("\xff\xff\xff\xff", 4));
}

TEST(WheelWriter, RecordFieldsAreQuotedAsCsvDoes) {
  const std::string text = format_record({{"a,b.py", "sha256=x", "1"}, {"q\"q", "", ""}});
  EXPECT_EQ(text, "\"a,b.py\",sha256=x,1\n\"q\"\"q\",,\n");
  const auto rows = parse_record(text);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at("a,b.py").hash, "sha256=x");
  EXPECT_EQ(rows.at("q\"q").size, "");
  EXPECT_EQ(urlsafe_b64_nopad(std::string("\xfb\xff", 2)), "-_8");
}

TEST(WheelWriter, ABadWheelNameIsRefusedAsTheWheelPackageDoes) {
  EXPECT_THROW(record_path_for("notawheel.zip"), Error);
  EXPECT_THROW(record_path_for("name-1.0.whl"), Error);
  EXPECT_EQ(record_path_for("/d/triton_ascend-3.6.0-cp311-cp311-linux_x86_64.whl"),
            "triton_ascend-3.6.0.dist-info/RECORD");
  EXPECT_EQ(record_path_for("a-1-2build-py3-none-any.whl"), "a-1.dist-info/RECORD");
}

// What killed runs left in the bdist directory (install_lib copies hidden
// directories too): a payload's staged copy and a partial file, named by
// StagedReplacement. Neither is packed; other hidden names are, as the
// wheel package packs them.
TEST(WheelWriter, StagedCopiesAKilledRunLeftAreNeverPacked) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  const fs::path payload = base / "demo" / "backend" / "bishengir";
  write_file(payload / "bin" / "bishengir-opt", "whole\n");
  write_file(base / "demo" / ".hidden", "packed\n");
  const fs::path staged = leave_staged_copy(payload, "staged", "bin/bishengir-opt");
  const fs::path partial = leave_staged_copy(base / "demo" / "core.py", "part");
  ASSERT_TRUE(fs::is_directory(staged));
  ASSERT_TRUE(fs::is_regular_file(partial));
  const fs::path wheel = dir.path() / "native" / wheel_name;
  const auto stats = native_write(base, wheel, zip_deflated, 1700000000);
  std::vector<std::string> names;
  const ZipReader zip(wheel);
  for (const auto& entry : zip.entries()) {
    names.push_back(entry.name);
  }
  EXPECT_TRUE(contains(names, "demo/backend/bishengir/bin/bishengir-opt"));
  EXPECT_TRUE(contains(names, "demo/.hidden"));
  for (const auto& name : names) {
    EXPECT_FALSE(contains(name, "ascend-setup-")) << name;
  }
  EXPECT_EQ(stats.entries, 15u);  // make_bdist's 13, the payload's file, .hidden
}

// A job on the deflate workers that fails (a file that cannot be read while
// a previous entry is checked) reaches the caller as it was thrown: its
// kind, hence its exit code, kept.
TEST(WheelWriter, AFailedJobOnTheWorkersKeepsItsKind) {
  ParallelDeflater deflater(2, 6);
  try {
    deflater.run(
        {[] {}, [] { throw Error("cannot read x: Permission denied", ErrorKind::local_io); }});
    ADD_FAILURE() << "nothing thrown";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::local_io);
    EXPECT_STREQ(error.what(), "cannot read x: Permission denied");
  }
}

// auditwheel -z 0 writes deflate streams of stored blocks (and directory
// entries): they are deflated again; the entries, order and metadata stay.
TEST(WheelWriter, AuditwheelsLevelZeroOutputIsDeflatedAgainWithTheSameEntries) {
  TempDir dir;
  const fs::path base = make_bdist(dir.path());
  const fs::path native = dir.path() / "native" / wheel_name;
  native_write(base, native, zip_deflated, 1600000000);
  // As auditwheel -z 0 writes it: a directory entry, every file deflated at level 0.
  const fs::path stored = dir.path() / "repair" / wheel_name;
  must_run(
      {SYSTEM_PYTHON, "-c",
       "import os, sys, zipfile\n"
       "source, out = sys.argv[1], sys.argv[2]\n"
       "os.makedirs(os.path.dirname(out))\n"
       "with zipfile.ZipFile(source) as s, zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:\n"
       "    d = zipfile.ZipInfo('demo/', (2020, 1, 1, 0, 0, 0))\n"
       "    d.external_attr = 0o40755 << 16\n"
       "    z.writestr(d, b'')\n"
       "    for i in s.infolist():\n"
       "        z.writestr(i, s.read(i), compresslevel=0)\n",
       native.string(), stored.string()},
      dir.path());
  WheelWriteOptions options;
  options.wheel = dir.path() / "dist" / wheel_name;
  options.previous = options.wheel;
  options.digests = digests_of(options.wheel);
  const auto first = rezip_wheel(stored, options, test_writer_lock());
  EXPECT_EQ(first.reused, 0u);
  EXPECT_LT(fs::file_size(options.wheel), fs::file_size(stored) / 2);
  const auto listing = [&](const fs::path& wheel) {
    return must_run({SYSTEM_PYTHON, "-c",
                     "import sys, zipfile, hashlib\n"
                     "with zipfile.ZipFile(sys.argv[1]) as z:\n"
                     "    assert z.testzip() is None\n"
                     "    for i in z.infolist():\n"
                     "        print(i.filename, i.date_time, oct(i.external_attr), i.file_size,\n"
                     "              hex(i.CRC), hashlib.sha256(z.read(i)).hexdigest()[:16])\n",
                     wheel.string()},
                    dir.path());
  };
  EXPECT_EQ(listing(options.wheel), listing(stored));
  const std::string deflated = read_file(options.wheel);
  const auto second = rezip_wheel(stored, options, test_writer_lock());
  // Every file but RECORD and the empty one (copied as it is, as the directory).
  EXPECT_EQ(second.reused, 11u);
  EXPECT_EQ(second.hashed_bytes, 0u);  // the contents known by auditwheel's RECORD
  EXPECT_TRUE(read_file(options.wheel) == deflated);
}
