// The native wheel writer: what the wheel package's WheelFile.write_files()
// writes for a bdist directory, byte for byte in everything but the deflate
// streams (libdeflate's, in parallel: parallel_deflate.hpp):
//   - the files of os.walk(base_dir) order (directories sorted, files sorted
//     within each), symlinks to files followed, to directories not entered;
//     files of any directory ending in ".dist-info" deferred to the end,
//     sorted; a RECORD already there left out, and so is every file or
//     directory named as a staged copy (staged_replacement.hpp's
//     is_staged_name(): what a killed run left is never packed);
//   - each entry dated by SOURCE_DATE_EPOCH if given, else by the file's
//     mtime (UTC, clamped to 1980), external attributes (mode | type) << 16;
//   - RECORD last: every entry's sha256 and size in write order, then itself,
//     dated by SOURCE_DATE_EPOCH or now, attributes 0o664 << 16.
// Reuse: the writer records, in the file `digests` names, the digests of the
// wheel it wrote (wheel_digests.hpp: per 1 MiB chunk of each entry, of its
// content and of its bytes in the wheel). The next packing, when `previous`
// is that very wheel (its size and central directory are the recorded ones),
// copies an entry's bytes from it instead of compressing the file again when
// the name, method, size and RECORD hash are the previous entry's, each chunk
// of the new content hashes to the recorded content digest, and each chunk of
// the previous entry's bytes hashes to the recorded digest of its bytes.
// Nothing is inflated; every chunk is checked as a job of its own on the
// deflate workers, so the work spreads over entries and within a large one.
// Digests that do not belong to the previous wheel (another wheel's, an
// edited wheel, a truncated or malformed file) are ignored: every entry is
// compressed. Auditwheel's output (rezip_wheel) is the same, with a deflated
// entry's content known by the RECORD hash and CRC-32 of that output.
// The wheel is written beside the target (StagedReplacement "part":
// "<dir>/.<name>.ascend-setup-part-<pid>") and put in its place; on any
// failure or stop the partial file is removed and the previous wheel stays
// whole. A failed write names the wheel; a full disk says so with about what
// the wheel needs (its entries' sizes when stored, else the previous wheel's
// size). The compression runs on options.threads workers, which the caller
// sizes by the CPUs the build has.
#pragma once

#include "base/util/held_lock.hpp"
#include "base/wheel/zip_format.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace ascend_setup {

struct WheelWriteOptions {
  std::filesystem::path wheel;     // the target *.whl
  std::filesystem::path base_dir;  // write_files(): the bdist directory
  uint16_t method = zip_deflated;  // or zip_stored
  int level = 6;                   // libdeflate level
  unsigned threads = 1;            // deflate workers: the caller's CPU figure
  std::optional<int64_t> source_date_epoch;
  // Where unchanged entries may come from (normally the target itself).
  std::optional<std::filesystem::path> previous;
  // The digests of `previous`, read, and then those of the new wheel, written
  // (state_paths.hpp's wheel_digests_path); none: nothing is reused.
  std::optional<std::filesystem::path> digests;
};

struct WheelWriteStats {
  size_t entries = 0;     // RECORD included
  size_t compressed = 0;  // entries compressed (or stored) from their file
  size_t reused = 0;      // entries copied from the previous wheel
  uint64_t input_bytes = 0;
  uint64_t reused_bytes = 0;  // uncompressed bytes of the reused entries
  uint64_t wheel_size = 0;
  unsigned threads = 0;  // deflate workers the writer ran
  // The reuse checks: their jobs (one per chunk of a like entry), the bytes
  // of new content they hashed, the bytes of previous entries they hashed.
  size_t check_jobs = 0;
  uint64_t hashed_bytes = 0;
  uint64_t checked_bytes = 0;
  double seconds = 0;      // the writing's wall time
  double cpu_seconds = 0;  // the process's CPU time meanwhile (every thread)
};

// "<name>-<version>.dist-info/RECORD" for a wheel file name; Error for a
// name that is not one (as the wheel package's "Bad wheel filename").
std::string record_path_for(const std::filesystem::path& wheel);

// `held`: the lock that keeps other writers of the wheel out (the build lock).
WheelWriteStats write_wheel(const WheelWriteOptions& options, const HeldLock& held);

// Writes `source` (a ZIP, e.g. auditwheel's output written with stored
// entries) again as `options.wheel` with the same entries in the same order
// and the same metadata, every stored entry deflated (in parallel, reused from
// `options.previous` as above, by the RECORD of `source`); entries already
// deflated are copied as they are. base_dir and source_date_epoch are unused.
WheelWriteStats rezip_wheel(const std::filesystem::path& source, const WheelWriteOptions& options,
                            const HeldLock& held);

}  // namespace ascend_setup
