#include "base/wheel/wheel_writer.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "base/util/staged_replacement.hpp"
#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"
#include "base/util/whole_file.hpp"
#include "base/wheel/parallel_deflate.hpp"
#include "base/wheel/record.hpp"
#include "base/wheel/wheel_digests.hpp"
#include "base/wheel/zip_reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <set>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr size_t io_block = size_t{1} << 20;

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// The partial wheel: buffered writes, headers patched in place, put in place
// of the target by commit(), removed otherwise. Every write is positional; a
// failed one names the wheel (a full disk with what the wheel needs, when the
// caller said it).
class PartFile {
 public:
  PartFile(const HeldLock& held, const fs::path& target)
      : staging_(held, target, "part"), path_(staging_.staged()), target_(target) {
    fd_.reset(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd_) {
      throw system_error("create", path_, errno);
    }
  }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;
  ~PartFile() = default;

  // About how large the wheel will be, for the message of a full disk.
  void expect(std::optional<uint64_t> size) { expected_ = size; }
  uint64_t position() const { return position_; }
  void write(std::string_view bytes) {
    buffer_.append(bytes);
    position_ += bytes.size();
    if (buffer_.size() >= io_block) {
      flush();
    }
  }
  void flush() {
    write_at_offset(position_ - buffer_.size(), buffer_);
    buffer_.clear();
  }
  void write_at(uint64_t offset, std::string_view bytes) {
    flush();
    write_at_offset(offset, bytes);
  }
  // Appends `length` bytes of `source` from `offset` (in the kernel).
  void copy_from(int source, uint64_t offset, uint64_t length, const fs::path& source_path) {
    flush();
    loff_t in = static_cast<loff_t>(offset);
    loff_t out = static_cast<loff_t>(position_);
    uint64_t left = length;
    while (left > 0) {
      throw_if_stopped();
      const ssize_t n =
          ::copy_file_range(source, &in, fd_.get(), &out,
                            static_cast<size_t>(std::min<uint64_t>(left, 64 * io_block)), 0);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
        const std::string bytes =
            read_at(source, static_cast<uint64_t>(in),
                    static_cast<size_t>(std::min<uint64_t>(left, io_block)), source_path);
        write_at_offset(static_cast<uint64_t>(out), bytes);
        in += static_cast<loff_t>(bytes.size());
        out += static_cast<loff_t>(bytes.size());
        left -= bytes.size();
        continue;
      }
      if (n <= 0) {
        failed(n < 0 ? errno : EIO);
      }
      left -= static_cast<uint64_t>(n);
    }
    position_ += length;
  }
  void commit() {
    flush();
    if (!fd_.close()) {
      failed(errno);
    }
    staging_.commit();
  }

 private:
  [[noreturn]] void failed(int error_number) const {
    throw system_error("write the wheel", target_, error_number, expected_);
  }
  void write_at_offset(uint64_t offset, std::string_view bytes) const {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::pwrite(fd_.get(), bytes.data() + done, bytes.size() - done,
                                 static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        failed(n < 0 ? errno : EIO);
      }
      done += static_cast<size_t>(n);
    }
  }

  StagedReplacement staging_;
  fs::path path_;
  fs::path target_;
  UniqueFd fd_;
  uint64_t position_ = 0;
  std::string buffer_;
  std::optional<uint64_t> expected_;
};

// The largest digests file read: far more than a wheel of 100 GiB in 1 MiB
// chunks needs (about 150 bytes a chunk).
constexpr uint64_t digests_limit = uint64_t{64} << 20;

// The previous wheel, its RECORD and the digests recorded when it was
// written, when all three are there and agree (wheel_digests.hpp).
struct Previous {
  std::unique_ptr<ZipReader> zip;
  std::map<std::string, RecordRow> record;
  WheelDigests digests;
};

// Whether the entry's bytes in `zip` (from `offset`) hash chunk by chunk to
// the recorded digests.
bool hashes_to(const ZipReader& zip, uint64_t offset, const EntryDigests& recorded) {
  for (const auto& chunk : recorded.chunks) {
    const std::string bytes =
        read_at(zip.fd(), offset, static_cast<size_t>(chunk.compressed_size), zip.path());
    if (Sha256().update(bytes).digest() != chunk.compressed) {
      return false;
    }
    offset += chunk.compressed_size;
  }
  return true;
}

std::optional<Previous> open_previous(const WheelWriteOptions& options) {
  if (!options.previous || !options.digests || !fs::is_regular_file(*options.previous)) {
    return std::nullopt;
  }
  const fs::path& wheel = *options.previous;
  const fs::path& digests_path = *options.digests;
  try {
    Previous previous;
    previous.zip = std::make_unique<ZipReader>(wheel);
    std::error_code ec;
    const auto size = fs::file_size(digests_path, ec);
    const auto text = ec || size > digests_limit ? std::nullopt : read_whole_file(digests_path);
    if (!text) {
      spdlog::info("no digests recorded for the previous wheel {}: every entry is compressed",
                   wheel.string());
      return std::nullopt;
    }
    auto digests = parse_wheel_digests(*text);
    if (!digests || !matches(*digests, *previous.zip)) {
      spdlog::info(
          "{} are not the digests of the previous wheel {}: ignored, every entry is "
          "compressed",
          digests_path.string(), wheel.string());
      return std::nullopt;
    }
    previous.digests = std::move(*digests);
    // RECORD's bytes are vouched for too: its hashes name the reused contents.
    for (const auto& entry : previous.zip->entries()) {
      if (!ends_with(entry.name, ".dist-info/RECORD")) {
        continue;
      }
      const auto recorded = previous.digests.entries.find(entry.name);
      if (recorded == previous.digests.entries.end() ||
          !hashes_to(*previous.zip, previous.zip->data_offset(entry), recorded->second)) {
        spdlog::info(
            "{} in the previous wheel {} is not the one recorded: every entry is "
            "compressed",
            entry.name, wheel.string());
        return std::nullopt;
      }
      previous.record = parse_record(previous.zip->read(entry));
      break;
    }
    return previous;
  } catch (const Error& error) {
    spdlog::warn("the previous wheel is not read, nothing is reused from it: {}", error.what());
    return std::nullopt;
  }
}

// An entry that may be reused, before it is written: its content is a file
// (`path`), a range of an open file (`fd`), or known only by its RECORD hash
// and CRC-32 (auditwheel's output, whose RECORD names it).
struct Candidate {
  std::string name;
  uint16_t method = zip_deflated;
  uint64_t size = 0;
  fs::path path;  // the file, or the open file's name
  int fd = -1;    // -1: `path` is opened
  uint64_t offset = 0;
  std::optional<std::string> known_hash;
  std::optional<uint32_t> known_crc;
};

// Reads a byte range of a file in order, as it is or inflated (a deflate
// stream of `compressed` bytes that gives the content).
class RangeReader {
 public:
  RangeReader(int fd, uint64_t offset, uint64_t compressed, bool inflated, const fs::path& path)
      : fd_(fd), offset_(offset), compressed_(compressed), inflated_(inflated), path_(path) {
    if (inflated_ && inflateInit2(&inflater_, -15) != Z_OK) {
      throw Error("zlib's inflateInit2 failed", ErrorKind::internal);
    }
  }
  RangeReader(const RangeReader&) = delete;
  RangeReader& operator=(const RangeReader&) = delete;
  ~RangeReader() {
    if (inflated_) {
      inflateEnd(&inflater_);
    }
  }
  // Exactly `length` bytes (Error when the range ends first).
  std::string read(size_t length) {
    if (!inflated_) {
      std::string bytes = read_at(fd_, offset_ + done_, length, path_);
      done_ += length;
      return bytes;
    }
    std::string out(length, '\0');
    size_t produced = 0;
    while (produced < length) {
      if (inflater_.avail_in == 0) {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(io_block, compressed_ - done_));
        if (take == 0) {
          throw Error(path_.string() + ": a deflate stream ends early", ErrorKind::bad_input);
        }
        block_ = read_at(fd_, offset_ + done_, take, path_);
        done_ += take;
        inflater_.next_in = reinterpret_cast<Bytef*>(block_.data());
        inflater_.avail_in = static_cast<uInt>(block_.size());
      }
      inflater_.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
      inflater_.avail_out = static_cast<uInt>(length - produced);
      const int result = inflate(&inflater_, Z_NO_FLUSH);
      produced = length - inflater_.avail_out;
      if (result == Z_STREAM_END && produced < length) {
        throw Error(path_.string() + ": a deflate stream ends early", ErrorKind::bad_input);
      }
      if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) {
        throw Error(
            path_.string() + ": a broken deflate stream (zlib " + std::to_string(result) + ")",
            ErrorKind::bad_input);
      }
    }
    return out;
  }

 private:
  int fd_;
  uint64_t offset_;
  uint64_t compressed_;
  bool inflated_;
  const fs::path& path_;
  uint64_t done_ = 0;
  z_stream inflater_{};
  std::string block_;
};

// Writes the entries one by one: header, data (reused, deflated or stored),
// header patched with CRC and sizes.
class EntryWriter {
 public:
  EntryWriter(const WheelWriteOptions& options, const HeldLock& held)
      : held_(held),
        part_(held, options.wheel),
        digests_path_(options.digests),
        previous_(open_previous(options)),
        deflater_(options.threads, options.level) {
    stats_.threads = deflater_.threads();
  }

  struct Source {
    int fd;
    uint64_t offset;
    uint64_t size;
    const fs::path& path;
    // The range is a deflate stream of `compressed` bytes giving the content.
    bool inflated = false;
    uint64_t compressed = 0;
    // The content's RECORD hash when known without reading it (rezip).
    std::optional<std::string> known_hash;
    std::optional<uint32_t> known_crc;
  };

  // Returns "sha256=..." of the content.
  std::string add(ZipEntry entry, const Source& source) {
    throw_if_stopped();
    entry.size = source.size;
    entry.local_zip64 = local_zip64_for(entry.size);
    entry.header_offset = part_.position();
    part_.write(local_header(entry));
    ++stats_.entries;
    stats_.input_bytes += entry.size;

    std::optional<std::string> hash = source.known_hash;
    EntryDigests digests{entry.method, entry.size, 0, "", {}};
    const auto vouched = vouched_.find(entry.name);
    if (vouched != vouched_.end() && vouched->second.old->size == source.size) {
      const Vouched& old = vouched->second;
      part_.copy_from(previous_->zip->fd(), old.offset, old.old->compressed_size,
                      previous_->zip->path());
      entry.crc = old.old->crc;
      entry.compressed_size = old.old->compressed_size;
      hash = old.recorded->hash;
      digests.chunks = old.recorded->chunks;
      ++stats_.reused;
      stats_.reused_bytes += entry.size;
      spdlog::debug("wheel: reused {} from the previous wheel", entry.name);
    } else {
      Sha256 sha;
      uint32_t running = 0;
      const auto on_input = [&](std::string_view bytes) {
        if (!hash) {
          sha.update(bytes);
        }
        running = libdeflate_crc32(running, bytes.data(), bytes.size());
      };
      RangeReader reader(source.fd, source.offset, source.compressed, source.inflated, source.path);
      if (entry.method == zip_stored) {
        for (uint64_t done = 0; done < source.size;) {
          throw_if_stopped();
          const size_t length =
              static_cast<size_t>(std::min<uint64_t>(deflate_chunk_size, source.size - done));
          const std::string block = reader.read(length);
          on_input(block);
          part_.write(block);
          const std::string digest = Sha256().update(block).digest();
          digests.chunks.push_back({length, digest, digest});
          done += length;
        }
        entry.compressed_size = source.size;
      } else {
        entry.compressed_size = deflater_.deflate(
            source.size, [&reader](size_t length) { return reader.read(length); }, on_input,
            [this](std::string_view bytes) { part_.write(bytes); }, digests.chunks);
      }
      if (source.known_crc && *source.known_crc != running) {
        throw Error(source.path.string() + ": " + entry.name +
                        " does not match the CRC-32 its archive gives",
                    ErrorKind::bad_input);
      }
      entry.crc = running;
      if (!hash) {
        hash = "sha256=" + urlsafe_b64_nopad(sha.digest());
      }
      ++stats_.compressed;
      spdlog::debug("wheel: compressed {}", entry.name);
    }
    part_.write_at(entry.header_offset, local_header(entry));
    digests.compressed_size = entry.compressed_size;
    digests.hash = *hash;
    if (!digests_.emplace(entry.name, std::move(digests)).second) {
      duplicates_.insert(entry.name);
    }
    entries_.push_back(entry);
    return *hash;
  }

  // An entry copied as it is from another archive (already deflated).
  void copy_raw(const ZipEntry& from, const ZipReader& zip) {
    throw_if_stopped();
    ZipEntry entry = from;
    entry.local_zip64 = local_zip64_for(entry.size);
    entry.header_offset = part_.position();
    part_.write(local_header(entry));
    part_.copy_from(zip.fd(), zip.data_offset(from), from.compressed_size, zip.path());
    entries_.push_back(entry);
    ++stats_.entries;
    ++stats_.compressed;
    stats_.input_bytes += entry.size;
  }

  // About the wheel's size, said when the disk is full.
  void expect(std::optional<uint64_t> size) { part_.expect(size); }

  WheelWriteStats finish() {
    const uint64_t directory_offset = part_.position();
    const std::string directory = central_directory(entries_, directory_offset);
    part_.write(directory);
    stats_.wheel_size = part_.position();
    part_.commit();
    record_digests(directory);
    stats_.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    stats_.cpu_seconds = cpu_seconds() - start_cpu_;
    return stats_;
  }

  // Decides which candidates are copied from the previous wheel: those whose
  // name, method, size and RECORD hash are the previous entry's, whose
  // content hashes chunk by chunk to the recorded content digests (or whose
  // known RECORD hash and CRC-32 are the previous entry's), and whose bytes in
  // the previous wheel hash chunk by chunk to the recorded digests. Every
  // chunk is a job of its own on the deflate workers: the work is spread by
  // entry and within a large entry. Nothing is inflated.
  void vouch(const std::vector<Candidate>& candidates) {
    if (!previous_) {
      return;
    }
    const ZipReader& zip = *previous_->zip;
    struct Check {
      const Candidate* candidate;
      Vouched found;
      std::vector<uint64_t> starts;  // each chunk's offset in the entry's bytes
      std::atomic<bool> failed{false};
      std::atomic<bool> damaged{false};  // the previous bytes are not the recorded ones
    };
    std::vector<std::unique_ptr<Check>> checks;
    std::vector<std::function<void()>> jobs;
    std::atomic<uint64_t> hashed{0};
    std::atomic<uint64_t> checked{0};
    for (const auto& candidate : candidates) {
      const ZipEntry* old = zip.find(candidate.name);
      const auto recorded = previous_->digests.entries.find(candidate.name);
      const auto row = previous_->record.find(candidate.name);
      if (old == nullptr || recorded == previous_->digests.entries.end() ||
          row == previous_->record.end() || old->method != candidate.method ||
          old->size != candidate.size || row->second.size != std::to_string(candidate.size) ||
          row->second.hash.rfind("sha256=", 0) != 0 || row->second.hash != recorded->second.hash ||
          (candidate.known_hash && *candidate.known_hash != row->second.hash) ||
          (candidate.known_crc && *candidate.known_crc != old->crc) ||
          (!candidate.known_hash && candidate.path.empty())) {
        spdlog::trace("wheel: {} has no like entry in the previous wheel", candidate.name);
        continue;
      }
      auto check = std::make_unique<Check>();
      check->candidate = &candidate;
      check->found = {old, &recorded->second, 0};
      try {
        check->found.offset = zip.data_offset(*old);
      } catch (const Error& error) {
        spdlog::warn("wheel: {} not reused: {}", candidate.name, error.what());
        continue;
      }
      uint64_t start = 0;
      for (const auto& chunk : recorded->second.chunks) {
        check->starts.push_back(start);
        start += chunk.compressed_size;
      }
      for (size_t i = 0; i < check->starts.size(); ++i) {
        jobs.push_back([&zip, &hashed, &checked, check = check.get(), i] {
          check_chunk(zip, *check->candidate, check->found, check->starts[i], i, check->failed,
                      check->damaged, hashed, checked);
        });
      }
      checks.push_back(std::move(check));
    }
    stats_.check_jobs += jobs.size();
    deflater_.run(std::move(jobs));
    for (const auto& check : checks) {
      if (check->damaged) {
        spdlog::warn(
            "wheel: {} in {} is not what was recorded when it was written: compressed again",
            check->candidate->name, zip.path().string());
      } else if (check->failed) {
        spdlog::debug("wheel: {} changed since the previous wheel", check->candidate->name);
      } else {
        vouched_.emplace(check->candidate->name, check->found);
      }
    }
    stats_.hashed_bytes += hashed;
    stats_.checked_bytes += checked;
  }

 private:
  // A previous entry vouched for: copied as it is.
  struct Vouched {
    const ZipEntry* old = nullptr;
    const EntryDigests* recorded = nullptr;
    uint64_t offset = 0;  // its data in the previous wheel
  };

  // One chunk of a candidate: its content against the recorded content
  // digest (unless the content is known by its hash), its bytes in the
  // previous wheel against the recorded digest. A mismatch, or anything that
  // cannot be read, sets `failed` (and `damaged` for the previous bytes); the
  // other chunks of the entry then stop. Runs on a worker: nothing is logged.
  static void check_chunk(const ZipReader& zip, const Candidate& candidate, const Vouched& found,
                          uint64_t start, size_t index, std::atomic<bool>& failed,
                          std::atomic<bool>& damaged, std::atomic<uint64_t>& hashed,
                          std::atomic<uint64_t>& checked) {
    if (failed || stop_signal() != 0) {
      failed = true;
      return;
    }
    try {
      const ChunkDigest& chunk = found.recorded->chunks[index];
      if (!candidate.known_hash) {
        const uint64_t at = index * deflate_chunk_size;
        const size_t length =
            static_cast<size_t>(std::min<uint64_t>(deflate_chunk_size, candidate.size - at));
        std::string content;
        if (candidate.fd >= 0) {
          content = read_at(candidate.fd, candidate.offset + at, length, candidate.path);
        } else {
          const UniqueFd file(::open(candidate.path.c_str(), O_RDONLY | O_CLOEXEC));
          if (!file) {
            failed = true;
            return;
          }
          content = read_at(file.get(), at, length, candidate.path);
        }
        hashed += length;
        if (Sha256().update(content).digest() != chunk.content) {
          failed = true;
          return;
        }
      }
      const std::string bytes = read_at(zip.fd(), found.offset + start,
                                        static_cast<size_t>(chunk.compressed_size), zip.path());
      checked += bytes.size();
      if (Sha256().update(bytes).digest() != chunk.compressed) {
        damaged = true;
        failed = true;
      }
    } catch (const Error&) {
      failed = true;
    }
  }

  static double cpu_seconds() {
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }

  // The new wheel's digests, beside it for the next packing. A failure only
  // costs the next packing its reuse: the digests left there belong to
  // another wheel and are ignored.
  void record_digests(const std::string& directory) {
    if (!digests_path_) {
      return;
    }
    WheelDigests digests;
    digests.wheel_size = stats_.wheel_size;
    digests.directory = Sha256().update(directory).digest();
    for (auto& [name, entry] : digests_) {
      if (duplicates_.count(name) == 0) {
        digests.entries.emplace(name, std::move(entry));
      }
    }
    try {
      fs::create_directories(digests_path_->parent_path());
      StagedReplacement staging(held_, *digests_path_, "part");
      write_whole_file(staging.staged(), format_wheel_digests(digests));
      staging.commit();
    } catch (const fs::filesystem_error& error) {
      spdlog::warn(
          "the wheel's digests are not recorded (the next packing compresses every "
          "entry): {}",
          system_error(error).what());
    } catch (const Error& error) {
      spdlog::warn(
          "the wheel's digests are not recorded (the next packing compresses every "
          "entry): {}",
          error.what());
    }
  }

  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  const double start_cpu_ = cpu_seconds();
  const HeldLock& held_;
  PartFile part_;
  std::optional<std::filesystem::path> digests_path_;
  std::optional<Previous> previous_;
  ParallelDeflater deflater_;
  std::map<std::string, Vouched> vouched_;
  std::map<std::string, EntryDigests> digests_;
  std::set<std::string> duplicates_;
  std::vector<ZipEntry> entries_;
  WheelWriteStats stats_;
};

struct WalkedFile {
  std::string path;     // as os.path.normpath(os.path.join(root, name))
  std::string arcname;  // relative, '/'-separated
  uint64_t size = 0;    // when walked
};

bool is_dir_following(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// os.walk(base_dir) top-down with sorted directory and file names, staged
// copies left out.
void walk(const std::string& root, const std::string& relative, const std::string& record_path,
          std::vector<WalkedFile>& files, std::vector<WalkedFile>& deferred) {
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) {
    if (relative.empty()) {
      throw system_error("read the directory", root, errno);
    }
    return;  // os.walk skips what it cannot list
  }
  std::vector<std::string> directories;
  std::vector<std::string> names;
  while (const dirent* item = ::readdir(dir)) {
    const std::string name = item->d_name;
    if (name == "." || name == ".." || is_staged_name(name)) {
      continue;  // a staged copy a killed run left is no content
    }
    (is_dir_following(root + "/" + name) ? directories : names).push_back(name);
  }
  ::closedir(dir);
  std::sort(directories.begin(), directories.end());
  std::sort(names.begin(), names.end());
  const bool dist_info = ends_with(root, ".dist-info");
  for (const auto& name : names) {
    const std::string path = root + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      continue;  // os.path.isfile
    }
    const std::string arcname = relative.empty() ? name : relative + "/" + name;
    if (arcname == record_path) {
      continue;
    }
    (dist_info ? deferred : files).push_back({path, arcname, static_cast<uint64_t>(st.st_size)});
  }
  for (const auto& name : directories) {
    const std::string path = root + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      continue;  // followlinks=False
    }
    walk(path, relative.empty() ? name : relative + "/" + name, record_path, files, deferred);
  }
}

int64_t now_seconds() { return static_cast<int64_t>(::time(nullptr)); }

// The size of the previous wheel, when there is one: about what a new one takes.
std::optional<uint64_t> previous_size(const WheelWriteOptions& options) {
  std::error_code ec;
  const auto size = options.previous ? fs::file_size(*options.previous, ec) : 0;
  return options.previous && !ec ? std::optional<uint64_t>(size) : std::nullopt;
}

}  // namespace

std::string record_path_for(const fs::path& wheel) {
  const std::string name = wheel.filename().string();
  std::vector<std::string> parts;
  if (ends_with(name, ".whl")) {
    size_t start = 0;
    const std::string stem = name.substr(0, name.size() - 4);
    for (size_t dash; (dash = stem.find('-', start)) != std::string::npos; start = dash + 1) {
      parts.push_back(stem.substr(start, dash - start));
    }
    parts.push_back(stem.substr(start));
  }
  // Blanks and control characters (a NUL included) are in no wheel's name.
  const bool spaces = std::any_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == '\x7f';
  });
  if (parts.size() < 5 || parts.size() > 6 || spaces ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }) ||
      (parts.size() == 6 && !std::isdigit(static_cast<unsigned char>(parts[2][0])))) {
    throw Error("Bad wheel filename '" + name + "'", ErrorKind::bad_input);
  }
  return parts[0] + "-" + parts[1] + ".dist-info/RECORD";
}

WheelWriteStats write_wheel(const WheelWriteOptions& options, const HeldLock& held) {
  const std::string record_path = record_path_for(options.wheel);
  std::string root = options.base_dir.string();
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  std::vector<WalkedFile> files;
  std::vector<WalkedFile> deferred;
  walk(root, "", record_path, files, deferred);
  std::sort(deferred.begin(), deferred.end(),
            [](const WalkedFile& a, const WalkedFile& b) { return a.path < b.path; });
  files.insert(files.end(), deferred.begin(), deferred.end());

  spdlog::info("creating '{}' and adding '{}' to it (native writer)", options.wheel.string(),
               options.base_dir.string());
  EntryWriter writer(options, held);
  if (options.method == zip_stored) {
    uint64_t total = 0;  // the data and each entry's two headers
    for (const auto& file : files) {
      std::error_code ec;
      const uint64_t size = fs::file_size(file.path, ec);
      total += (ec ? 0 : size) + 2 * (46 + file.arcname.size() + 20);
    }
    writer.expect(total);
  } else {
    writer.expect(previous_size(options));
  }
  std::vector<Candidate> candidates;
  for (const auto& file : files) {
    candidates.push_back(
        {file.arcname, options.method, file.size, file.path, -1, 0, std::nullopt, std::nullopt});
  }
  writer.vouch(candidates);
  std::vector<RecordRow> record;
  for (const auto& file : files) {
    const UniqueFd fd(::open(file.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
      throw system_error("open", file.path, errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
      throw system_error("stat", file.path, errno);
    }
    ZipEntry entry;
    entry.name = file.arcname;
    entry.method = options.method;
    entry.external_attr = static_cast<uint32_t>((st.st_mode & 07777) | (st.st_mode & S_IFMT)) << 16;
    const bool zero_mtime = st.st_mtim.tv_sec == 0 && st.st_mtim.tv_nsec == 0;
    set_dos_time(entry,
                 options.source_date_epoch
                     ? *options.source_date_epoch
                     : (zero_mtime ? now_seconds() : static_cast<int64_t>(st.st_mtim.tv_sec)));
    const fs::path path = file.path;
    const std::string hash = writer.add(entry, {fd.get(), 0, static_cast<uint64_t>(st.st_size),
                                                path, false, 0, std::nullopt, std::nullopt});
    record.push_back({file.arcname, hash, std::to_string(st.st_size)});
  }
  record.push_back({record_path, "", ""});
  const std::string record_text = format_record(record);

  // RECORD through a pipe-free path: a temporary file would be a write more;
  // it is compressed from memory (it is small).
  ZipEntry entry;
  entry.name = record_path;
  entry.method = options.method;
  entry.external_attr = 0664u << 16;
  set_dos_time(entry, options.source_date_epoch.value_or(now_seconds()));
  char memory_name[] = "ascend-setup-record";
  const UniqueFd memory(::memfd_create(memory_name, MFD_CLOEXEC));
  if (memory.get() < 0) {
    throw system_error("create a memory file for", record_path, errno);
  }
  write_fully(memory.get(), record_text, record_path);
  const fs::path record_source = record_path;
  writer.add(entry, {memory.get(), 0, record_text.size(), record_source, false, 0, std::nullopt,
                     std::nullopt});
  return writer.finish();
}

WheelWriteStats rezip_wheel(const fs::path& source, const WheelWriteOptions& options,
                            const HeldLock& held) {
  ZipReader input(source);
  std::map<std::string, RecordRow> record;
  for (const auto& entry : input.entries()) {
    if (ends_with(entry.name, ".dist-info/RECORD")) {
      record = parse_record(input.read(entry));
    }
  }
  EntryWriter writer(options, held);
  std::error_code ec;
  const uint64_t source_size = fs::file_size(source, ec);
  writer.expect(previous_size(options).value_or(ec ? 0 : source_size));
  // Stored, or deflated at level 0 (stored blocks: auditwheel -z 0): deflated
  // here; really deflated entries and directories are copied as they are.
  const auto deflated_here = [&](const ZipEntry& from) {
    const bool uncompressed =
        from.method == zip_stored ||
        (from.method == zip_deflated && from.size > 0 && from.compressed_size >= from.size);
    return uncompressed && options.method != zip_stored && !ends_with(from.name, "/");
  };
  const auto known_hash = [&](const ZipEntry& from) -> std::optional<std::string> {
    const auto row = record.find(from.name);
    if (row != record.end() && row->second.hash.rfind("sha256=", 0) == 0 &&
        row->second.size == std::to_string(from.size)) {
      return row->second.hash;
    }
    return std::nullopt;
  };
  std::vector<Candidate> candidates;
  for (const auto& from : input.entries()) {
    if (deflated_here(from)) {
      // A stored entry's content is read where it lies; a deflated one's is
      // known by the RECORD of auditwheel's output only.
      const bool stored = from.method == zip_stored;
      candidates.push_back({from.name, zip_deflated, from.size, stored ? input.path() : fs::path(),
                            stored ? input.fd() : -1, stored ? input.data_offset(from) : 0,
                            known_hash(from), from.crc});
    }
  }
  writer.vouch(candidates);
  for (const auto& from : input.entries()) {
    if (!deflated_here(from)) {
      writer.copy_raw(from, input);
      continue;
    }
    ZipEntry entry = from;
    entry.method = zip_deflated;
    writer.add(entry,
               {input.fd(), input.data_offset(from), from.size, input.path(),
                from.method == zip_deflated, from.compressed_size, known_hash(from), from.crc});
  }
  return writer.finish();
}

}  // namespace ascend_setup
