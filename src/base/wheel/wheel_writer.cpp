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
#include "base/wheel/zip_reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <future>
#include <map>
#include <memory>

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
  explicit PartFile(const fs::path& target)
      : staging_(target, "part"), path_(staging_.staged()), target_(target) {
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
  // Drops everything after `offset` (an entry given up midway).
  void truncate(uint64_t offset) {
    flush();
    if (::ftruncate(fd_.get(), static_cast<off_t>(offset)) != 0) {
      throw system_error("truncate", path_, errno);
    }
    position_ = offset;
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

// The previous wheel and its RECORD, when readable.
struct Previous {
  std::unique_ptr<ZipReader> zip;
  std::map<std::string, RecordRow> record;
};

std::optional<Previous> open_previous(const std::optional<fs::path>& path) {
  if (!path || !fs::is_regular_file(*path)) {
    return std::nullopt;
  }
  try {
    Previous previous;
    previous.zip = std::make_unique<ZipReader>(*path);
    for (const auto& entry : previous.zip->entries()) {
      if (ends_with(entry.name, ".dist-info/RECORD")) {
        previous.record = parse_record(previous.zip->read(entry));
        break;
      }
    }
    return previous;
  } catch (const Error& error) {
    spdlog::warn("the previous wheel is not read, nothing is reused from it: {}", error.what());
    return std::nullopt;
  }
}

// Whether the entry's data in `zip` inflates to `crc` and `size` (read in
// blocks, nothing kept).
bool inflates_to(const ZipReader& zip, const ZipEntry& entry, uint64_t offset) {
  uint32_t crc = 0;
  uint64_t produced = 0;
  if (entry.method == zip_stored) {
    for (uint64_t done = 0; done < entry.compressed_size;) {
      if (stop_signal() != 0) {
        return false;
      }
      const size_t length =
          static_cast<size_t>(std::min<uint64_t>(io_block, entry.compressed_size - done));
      const std::string block = read_at(zip.fd(), offset + done, length, zip.path());
      crc = libdeflate_crc32(crc, block.data(), block.size());
      done += length;
    }
    return crc == entry.crc && entry.compressed_size == entry.size;
  }
  z_stream inflater{};
  if (inflateInit2(&inflater, -15) != Z_OK) {
    return false;
  }
  std::string out(io_block, '\0');
  int result = Z_OK;
  for (uint64_t done = 0; done < entry.compressed_size && result != Z_STREAM_END;) {
    if (stop_signal() != 0) {
      break;
    }
    const size_t length =
        static_cast<size_t>(std::min<uint64_t>(io_block, entry.compressed_size - done));
    std::string block = read_at(zip.fd(), offset + done, length, zip.path());
    done += length;
    inflater.next_in = reinterpret_cast<Bytef*>(block.data());
    inflater.avail_in = static_cast<uInt>(block.size());
    do {
      inflater.next_out = reinterpret_cast<Bytef*>(out.data());
      inflater.avail_out = static_cast<uInt>(out.size());
      result = inflate(&inflater, Z_NO_FLUSH);
      const size_t have = out.size() - inflater.avail_out;
      crc = libdeflate_crc32(crc, out.data(), have);
      produced += have;
    } while (result == Z_OK && inflater.avail_out == 0);
    if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) {
      break;
    }
    if (result == Z_STREAM_END && (inflater.avail_in != 0 || done != entry.compressed_size)) {
      result = Z_DATA_ERROR;  // data after the end of the stream
    }
  }
  inflateEnd(&inflater);
  return result == Z_STREAM_END && produced == entry.size && crc == entry.crc;
}

// Reads a byte range of a file in order, as it is or inflated (a deflate
// stream of `compressed` bytes that gives the content).
class RangeReader {
 public:
  RangeReader(int fd, uint64_t offset, uint64_t compressed, bool inflated, const fs::path& path)
      : fd_(fd), offset_(offset), compressed_(compressed), inflated_(inflated), path_(path) {
    if (inflated_ && inflateInit2(&inflater_, -15) != Z_OK) {
      throw Error("zlib's inflateInit2 failed");
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
          throw Error(path_.string() + ": a deflate stream ends early");
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
        throw Error(path_.string() + ": a deflate stream ends early");
      }
      if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) {
        throw Error(path_.string() + ": a broken deflate stream (zlib " + std::to_string(result) +
                    ")");
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
  EntryWriter(const WheelWriteOptions& options)
      : part_(options.wheel),
        previous_(open_previous(options.previous)),
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
    const uint64_t data_start = part_.position();
    ++stats_.entries;
    stats_.input_bytes += entry.size;

    std::optional<std::string> hash = source.known_hash;
    std::optional<uint32_t> crc;
    if (const auto reused = reuse(entry, source, hash, crc)) {
      entry.crc = reused->crc;
      entry.compressed_size = reused->compressed_size;
      ++stats_.reused;
      stats_.reused_bytes += entry.size;
      spdlog::debug("wheel: reused {} from the previous wheel", entry.name);
    } else {
      part_.truncate(data_start);
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
              static_cast<size_t>(std::min<uint64_t>(io_block, source.size - done));
          const std::string block = reader.read(length);
          on_input(block);
          part_.write(block);
          done += length;
        }
        entry.compressed_size = source.size;
      } else {
        entry.compressed_size = deflater_.deflate(
            source.size, [&reader](size_t length) { return reader.read(length); }, on_input,
            [this](std::string_view bytes) { part_.write(bytes); });
      }
      if (source.known_crc && *source.known_crc != running) {
        throw Error(source.path.string() + ": " + entry.name +
                    " does not match the CRC-32 its archive gives");
      }
      entry.crc = running;
      if (!hash) {
        hash = "sha256=" + urlsafe_b64_nopad(sha.digest());
      }
      ++stats_.compressed;
      spdlog::debug("wheel: compressed {}", entry.name);
    }
    part_.write_at(entry.header_offset, local_header(entry));
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
    part_.write(central_directory(entries_, directory_offset));
    stats_.wheel_size = part_.position();
    part_.commit();
    return stats_;
  }

 private:
  struct Reused {
    uint32_t crc;
    uint64_t compressed_size;
  };

  // Copies the previous wheel's bytes for the entry when its content is the
  // same; `hash` and `crc` are filled when the content was read for it.
  std::optional<Reused> reuse(const ZipEntry& entry, const Source& source,
                              std::optional<std::string>& hash, std::optional<uint32_t>& crc) {
    if (!previous_) {
      return std::nullopt;
    }
    const ZipEntry* old = previous_->zip->find(entry.name);
    const auto row = previous_->record.find(entry.name);
    if (old == nullptr || row == previous_->record.end() || old->method != entry.method ||
        old->size != source.size || row->second.size != std::to_string(source.size) ||
        row->second.hash.rfind("sha256=", 0) != 0) {
      spdlog::trace("wheel: {} has no like entry in the previous wheel", entry.name);
      return std::nullopt;
    }
    uint64_t offset = 0;
    try {
      offset = previous_->zip->data_offset(*old);
    } catch (const Error& error) {
      spdlog::warn("wheel: {} not reused: {}", entry.name, error.what());
      return std::nullopt;
    }
    // The old bytes are checked while the new content is hashed.
    const ZipReader& zip = *previous_->zip;
    auto checked = std::async(std::launch::async, [&zip, old, offset] {
      try {
        return inflates_to(zip, *old, offset);
      } catch (const Error&) {
        return false;
      }
    });
    if (!hash || !source.known_crc) {
      Sha256 sha;
      uint32_t running = 0;
      RangeReader reader(source.fd, source.offset, source.compressed, source.inflated, source.path);
      for (uint64_t done = 0; done < source.size;) {
        if (stop_signal() != 0) {
          break;
        }
        const size_t length = static_cast<size_t>(std::min<uint64_t>(io_block, source.size - done));
        const std::string block = reader.read(length);
        sha.update(block);
        running = libdeflate_crc32(running, block.data(), block.size());
        done += length;
      }
      if (!hash) {
        hash = "sha256=" + urlsafe_b64_nopad(sha.digest());
      }
      crc = running;
    } else {
      crc = source.known_crc;
    }
    const bool intact = checked.get();
    throw_if_stopped();
    if (*hash != row->second.hash || *crc != old->crc) {
      spdlog::debug("wheel: {} changed since the previous wheel", entry.name);
      if (!source.known_hash) {
        hash = std::nullopt;  // hashed again while compressing
      }
      return std::nullopt;
    }
    if (!intact) {
      spdlog::warn("wheel: {} in {} does not inflate to its CRC-32 and size: compressed again",
                   entry.name, zip.path().string());
      return std::nullopt;
    }
    part_.copy_from(zip.fd(), offset, old->compressed_size, zip.path());
    return Reused{old->crc, old->compressed_size};
  }

  PartFile part_;
  std::optional<Previous> previous_;
  ParallelDeflater deflater_;
  std::vector<ZipEntry> entries_;
  WheelWriteStats stats_;
};

struct WalkedFile {
  std::string path;     // as os.path.normpath(os.path.join(root, name))
  std::string arcname;  // relative, '/'-separated
};

bool is_dir_following(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// os.walk(base_dir) top-down with sorted directory and file names.
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
    if (name == "." || name == "..") {
      continue;
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
    (dist_info ? deferred : files).push_back({path, arcname});
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
    throw Error("Bad wheel filename '" + name + "'");
  }
  return parts[0] + "-" + parts[1] + ".dist-info/RECORD";
}

WheelWriteStats write_wheel(const WheelWriteOptions& options) {
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
  EntryWriter writer(options);
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

WheelWriteStats rezip_wheel(const fs::path& source, const WheelWriteOptions& options) {
  ZipReader input(source);
  std::map<std::string, RecordRow> record;
  for (const auto& entry : input.entries()) {
    if (ends_with(entry.name, ".dist-info/RECORD")) {
      record = parse_record(input.read(entry));
    }
  }
  EntryWriter writer(options);
  std::error_code ec;
  const uint64_t source_size = fs::file_size(source, ec);
  writer.expect(previous_size(options).value_or(ec ? 0 : source_size));
  for (const auto& from : input.entries()) {
    // Stored, or deflated at level 0 (stored blocks: auditwheel -z 0): deflated
    // here; really deflated entries and directories are copied as they are.
    const bool uncompressed =
        from.method == zip_stored ||
        (from.method == zip_deflated && from.size > 0 && from.compressed_size >= from.size);
    if (!uncompressed || options.method == zip_stored || ends_with(from.name, "/")) {
      writer.copy_raw(from, input);
      continue;
    }
    ZipEntry entry = from;
    entry.method = zip_deflated;
    const auto row = record.find(from.name);
    std::optional<std::string> hash;
    if (row != record.end() && row->second.hash.rfind("sha256=", 0) == 0 &&
        row->second.size == std::to_string(from.size)) {
      hash = row->second.hash;
    }
    writer.add(entry, {input.fd(), input.data_offset(from), from.size, input.path(),
                       from.method == zip_deflated, from.compressed_size, hash, from.crc});
  }
  return writer.finish();
}

}  // namespace ascend_setup
