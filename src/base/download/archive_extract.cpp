#include "base/download/archive_extract.hpp"

#include "base/download/archive_links.hpp"
#include "base/download/libraries.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/system_error.hpp"

#include <sys/stat.h>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

struct ReadCloser {
  void operator()(archive* a) const { libarchive().archive_read_free(a); }
};
struct WriteCloser {
  void operator()(archive* a) const { libarchive().archive_write_free(a); }
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

// `path` without its first part when that is `member` (all of it when
// `member` is empty); nullopt when it lies elsewhere.
std::optional<fs::path> below_member(const fs::path& path, const std::string& member) {
  if (member.empty()) {
    return path;
  }
  auto part = path.begin();
  if (part == path.end() || *part != member) {
    return std::nullopt;
  }
  fs::path rest;
  for (++part; part != path.end(); ++part) {
    rest /= *part;
  }
  return rest;
}

// libarchive's reason for its last failure; it has none for some (a
// truncated compressed stream read to its end).
std::string reason_of(archive* handle) {
  const char* reason = libarchive().archive_error_string(handle);
  return reason != nullptr ? reason : "libarchive gives no reason";
}

const char* kind_of(mode_t type) {
  switch (type) {
    case AE_IFCHR:
      return "a character device";
    case AE_IFBLK:
      return "a block device";
    case AE_IFIFO:
      return "a FIFO";
    case AE_IFSOCK:
      return "a socket";
    default:
      return "an entry of an unknown type";
  }
}

}  // namespace

std::size_t extract_archive(const fs::path& archive_path, const fs::path& directory,
                            const std::string& member) {
  const fs::path root = fs::canonical(directory);  // no symlink in the prefix for the checks
  std::unique_ptr<archive, ReadCloser> reader(libarchive().archive_read_new());
  libarchive().archive_read_support_filter_all(reader.get());
  libarchive().archive_read_support_format_all(reader.get());
  std::unique_ptr<archive, WriteCloser> writer(libarchive().archive_write_disk_new());
  libarchive().archive_write_disk_set_options(
      writer.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                        ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  const std::string where = "the archive " + archive_path.string();
  auto unreadable = [&]() {
    return UnreadableArchive("cannot read " + where + ": " + reason_of(reader.get()));
  };
  // A write libarchive could not do: the system's reason when it has one (a
  // full disk with the size the entry needs), else libarchive's own refusal
  // (an entry through a symlink: its secure-symlinks check).
  auto fail_to_write = [&](const std::string& action, const fs::path& path, la_int64_t needed) {
    const int error_number = libarchive().archive_errno(writer.get());
    if (disk_full(error_number)) {
      throw system_error(action, path, error_number,
                         needed > 0 ? std::optional<std::uint64_t>(needed) : std::nullopt);
    }
    if (error_number > 0) {
      throw Error("cannot " + action + " " + path.string() + " from " + where + ": " +
                      reason_of(writer.get()) + " (" + std::strerror(error_number) + ")",
                  ErrorKind::local_io);
    }
    throw RefusedArchive("libarchive refused to " + action + " " + path.string() + " from " +
                         where + ": " + reason_of(writer.get()));
  };
  // A warning is a failure only when the disk is full (else it is a time or
  // a mode libarchive could not set).
  auto failed = [&](int status) {
    return status < ARCHIVE_WARN ||
           (status == ARCHIVE_WARN && disk_full(libarchive().archive_errno(writer.get())));
  };
  if (libarchive().archive_read_open_filename(reader.get(), archive_path.c_str(), 1 << 20) !=
      ARCHIVE_OK) {
    throw unreadable();
  }
  std::size_t written = 0;
  bool member_seen = member.empty();
  std::set<std::string> tops;  // what the archive holds outside `member`
  ArchiveLinks links;          // the symlinks unpacked so far, and where they lead
  while (true) {
    throw_if_stopped();
    archive_entry* entry = nullptr;
    const int status = libarchive().archive_read_next_header(reader.get(), &entry);
    if (status == ARCHIVE_EOF) {
      break;
    }
    if (status < ARCHIVE_WARN) {
      throw unreadable();
    }
    const char* raw_name = libarchive().archive_entry_pathname(entry);
    const fs::path name = raw_name != nullptr ? fs::path(raw_name) : fs::path();
    auto refuse = [&](const std::string& what, const std::string& why) {
      throw RefusedArchive(where + " holds " + what + ": '" + name.string() + "'; refused (" + why +
                           ")");
    };
    if (name.empty() || !stays_inside(name)) {
      refuse("an entry with an absolute path or a `..` part",
             "it would be written outside " + root.string());
    }
    const fs::path inside = plain_path(name);
    const auto relative = below_member(inside, member);
    if (!relative) {
      if (!inside.empty()) {
        tops.insert(inside.begin()->string());
      }
      continue;
    }
    member_seen = true;
    if (relative->empty()) {
      continue;  // the top directory itself: `directory`
    }
    const mode_t type = libarchive().archive_entry_filetype(entry);
    if (const char* hardlink = libarchive().archive_entry_hardlink(entry); hardlink != nullptr) {
      const auto linked =
          stays_inside(hardlink) ? below_member(plain_path(hardlink), member) : std::nullopt;
      if (!linked || linked->empty()) {
        refuse(std::string("a hard link to '") + hardlink + "'",
               "it would link to a file outside " + root.string());
      }
      if (const auto why = links.add_hard_link(*relative, *linked)) {
        refuse(std::string("a hard link to '") + hardlink + "'",
               *why + ", unpacking into " + root.string());
      }
      libarchive().archive_entry_set_hardlink(entry, (root / *linked).c_str());
    } else if (type == AE_IFLNK) {
      const char* target = libarchive().archive_entry_symlink(entry);
      if (target == nullptr) {
        refuse("a symlink without a target", "its target is empty");
      }
      if (const auto why = links.add_symlink(*relative, target)) {
        refuse(std::string("a symlink to '") + target + "'",
               *why + ", unpacking into " + root.string());
      }
    } else if (type != AE_IFREG && type != AE_IFDIR) {
      refuse(std::string(kind_of(type)) + " entry",
             "only files, directories and links are unpacked");
    } else if (const auto why = links.check_entry(*relative)) {
      refuse(type == AE_IFDIR ? "a directory" : "a file", *why);
    }
    // No setuid, setgid or sticky bit, nothing writable by group or others
    // (as Python's tarfile data filter): an archive run as root would
    // otherwise keep a uid-0 member's setuid bit.
    libarchive().archive_entry_set_perm(
        entry, libarchive().archive_entry_perm(entry) &
                   ~static_cast<mode_t>(S_ISUID | S_ISGID | S_ISVTX | S_IWGRP | S_IWOTH));
    const fs::path path = root / *relative;
    const la_int64_t size = libarchive().archive_entry_size(entry);
    libarchive().archive_entry_set_pathname(entry, path.c_str());
    if (failed(libarchive().archive_write_header(writer.get(), entry))) {
      fail_to_write("write", path, size);
    }
    if (size > 0) {
      const void* block = nullptr;
      size_t length = 0;
      la_int64_t offset = 0;
      while (true) {
        throw_if_stopped();  // an entry can be hundreds of MB
        const int read =
            libarchive().archive_read_data_block(reader.get(), &block, &length, &offset);
        if (read == ARCHIVE_EOF) {
          break;
        }
        if (read < ARCHIVE_WARN) {
          throw unreadable();
        }
        // libarchive reports a failed write(2) as a warning: every one counts.
        if (libarchive().archive_write_data_block(writer.get(), block, length, offset) !=
            ARCHIVE_OK) {
          fail_to_write("write", path, size);
        }
      }
    }
    if (failed(libarchive().archive_write_finish_entry(writer.get()))) {
      fail_to_write("write", path, size);
    }
    ++written;
  }
  if (failed(libarchive().archive_write_close(writer.get()))) {
    fail_to_write("finish the extraction into", root, 0);
  }
  if (!member_seen) {
    std::string held;
    for (const auto& top : tops) {
      held += (held.empty() ? "" : ", ") + top;
    }
    throw Error(where + " holds no directory " + member + " (it holds " +
                    (held.empty() ? std::string("nothing") : held) + ")",
                ErrorKind::bad_input);
  }
  return written;
}

}  // namespace ascend_setup
