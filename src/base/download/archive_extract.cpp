#include "base/download/archive_extract.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/error.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <string>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

struct ReadCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteCloser {
  void operator()(archive* a) const { archive_write_free(a); }
};

// A relative path without `..` (after removing `.` parts); empty when it has none.
bool stays_inside(const fs::path& relative) {
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    return false;
  }
  for (const auto& part : relative) {
    if (part == "..") {
      return false;
    }
  }
  return true;
}

// A symlink at `link` (relative to the directory) pointing at `target`
// resolves inside the directory (lexically: every `..` is counted).
bool link_stays_inside(const fs::path& link, const fs::path& target) {
  if (target.is_absolute()) {
    return false;
  }
  int depth = 0;
  for (const auto& part : link.parent_path()) {
    if (part != "." && !part.empty()) {
      ++depth;
    }
  }
  for (const auto& part : target) {
    if (part == "..") {
      if (--depth < 0) {
        return false;
      }
    } else if (part != "." && !part.empty()) {
      ++depth;
    }
  }
  return true;
}

}  // namespace

std::size_t extract_archive(const fs::path& archive_path, const fs::path& directory) {
  const fs::path root = fs::canonical(directory);  // no symlink in the prefix for the checks
  std::unique_ptr<archive, ReadCloser> reader(archive_read_new());
  archive_read_support_filter_all(reader.get());
  archive_read_support_format_all(reader.get());
  std::unique_ptr<archive, WriteCloser> writer(archive_write_disk_new());
  archive_write_disk_set_options(writer.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                   ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                                   ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  const std::string where = "the archive " + archive_path.string();
  if (archive_read_open_filename(reader.get(), archive_path.c_str(), 1 << 20) != ARCHIVE_OK) {
    throw Error("cannot read " + where + ": " + archive_error_string(reader.get()));
  }
  std::size_t written = 0;
  while (true) {
    throw_if_stopped();
    archive_entry* entry = nullptr;
    const int status = archive_read_next_header(reader.get(), &entry);
    if (status == ARCHIVE_EOF) {
      break;
    }
    if (status < ARCHIVE_WARN) {
      throw Error("cannot read " + where + ": " + archive_error_string(reader.get()));
    }
    const char* raw_name = archive_entry_pathname(entry);
    const fs::path name = raw_name != nullptr ? fs::path(raw_name) : fs::path();
    auto refuse = [&](const std::string& why) {
      throw Error(where + " holds " + why + ": '" + name.string() +
                  "'; nothing of it is used (it would be written outside " + root.string() + ")");
    };
    if (name.empty() || !stays_inside(name)) {
      refuse("an entry with an absolute path or a `..` part");
    }
    const mode_t type = archive_entry_filetype(entry);
    if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
      refuse("a device, FIFO or socket entry");
    }
    if (const char* hardlink = archive_entry_hardlink(entry); hardlink != nullptr) {
      if (!stays_inside(hardlink)) {
        refuse("a hard link to a path outside the archive");
      }
      archive_entry_set_hardlink(entry, (root / hardlink).c_str());
    }
    if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(entry);
      if (target == nullptr || !link_stays_inside(name, target)) {
        refuse(std::string("a symlink pointing outside the archive (to '") +
               (target ? target : "") + "')");
      }
    }
    archive_entry_set_pathname(entry, (root / name).c_str());
    if (archive_write_header(writer.get(), entry) < ARCHIVE_WARN) {
      refuse(std::string("an entry libarchive refused (") + archive_error_string(writer.get()) +
             ")");
    }
    if (archive_entry_size(entry) > 0) {
      const void* block = nullptr;
      size_t size = 0;
      la_int64_t offset = 0;
      while (true) {
        const int read = archive_read_data_block(reader.get(), &block, &size, &offset);
        if (read == ARCHIVE_EOF) {
          break;
        }
        if (read < ARCHIVE_WARN) {
          throw Error("cannot read " + where + ": " + archive_error_string(reader.get()));
        }
        if (archive_write_data_block(writer.get(), block, size, offset) < ARCHIVE_WARN) {
          throw Error("cannot write " + (root / name).string() + ": " +
                      archive_error_string(writer.get()));
        }
      }
    }
    if (archive_write_finish_entry(writer.get()) < ARCHIVE_WARN) {
      throw Error("cannot write " + (root / name).string() + ": " +
                  archive_error_string(writer.get()));
    }
    ++written;
  }
  if (archive_write_close(writer.get()) < ARCHIVE_WARN) {
    throw Error("cannot finish the extraction into " + root.string() + ": " +
                archive_error_string(writer.get()));
  }
  return written;
}

}  // namespace ascend_setup
