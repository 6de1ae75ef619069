#include "base/tree/tree_transaction.hpp"

#include "base/process/stop_signals.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "base/util/staged_replacement.hpp"
#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"
#include "base/util/whole_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <iterator>

namespace fs = std::filesystem;

namespace ascend_setup {

enum class OldKind { regular, absent, link };

struct TreeTransaction::Entry {
  std::string file;  // tree-relative, as staged: for messages
  fs::path path;     // what is written: the file itself or its link's target
  fs::path temp;     // the temporary renamed over `path`, in its directory
  OldKind old_kind = OldKind::absent;
  unsigned old_mode = 0644;
  int old_uid = -1;
  int old_gid = -1;
  std::string old_link;                // the target, when old_kind == link
  std::string old_sha256;              // when old_kind == regular
  std::optional<std::string> content;  // nullopt: removed
  unsigned new_mode = 0644;
};

namespace {

constexpr int journal_format = 1;

// `bytes` into `temp` (created fresh, synced, with `mode` and the owner when
// given), then renamed over `path` and the directory synced. `temp` is gone
// whatever happens.
void replace_atomically(const fs::path& path, const fs::path& temp, const std::string& bytes,
                        unsigned mode, int uid, int gid) {
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd && errno == EEXIST) {
    ::unlink(temp.c_str());  // left by a killed run with the same pid
    fd.reset(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  }
  if (!fd) {
    throw system_error("write", path, errno);
  }
  try {
    if (uid >= 0 && ::geteuid() == 0 && ::fchown(fd.get(), uid, gid) != 0) {
      throw system_error("keep the owner of", path, errno);
    }
    if (::fchmod(fd.get(), mode) != 0) {
      throw system_error("keep the mode of", path, errno);
    }
    write_fully(fd.get(), bytes, path);
    if (::fsync(fd.get()) != 0 || !fd.close()) {
      throw system_error("write", path, errno);
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      throw system_error("replace", path, errno);
    }
  } catch (...) {
    fd.reset();
    ::unlink(temp.c_str());
    throw;
  }
  sync_directory(path.parent_path());
}

void write_synced(const fs::path& path, const std::string& bytes) {
  replace_atomically(path, path.string() + ".tmp", bytes, 0644, -1, -1);
}

// Follows `path` through symlinks to the file to write; empty when a link
// leads outside `root`.
fs::path resolve_inside(const fs::path& root, fs::path path) {
  for (int hops = 0; hops < 40 && fs::is_symlink(path); ++hops) {
    const fs::path target = fs::read_symlink(path);
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  const fs::path resolved = fs::weakly_canonical(path);
  const fs::path canonical_root = fs::weakly_canonical(root);
  const auto relative = resolved.lexically_relative(canonical_root);
  if (relative.empty() || *relative.begin() == "..") {
    return {};
  }
  return resolved;
}

// `file` (tree-relative) below `root` with each directory on its way that is
// a symlink resolved: one leading inside the tree is followed, one leading
// outside is refused (Error naming the file and the link), so that nothing is
// written through it. The last component is left to the caller.
fs::path through_directories(const fs::path& root, const std::string& file) {
  const fs::path relative = fs::path(file).relative_path();
  fs::path current = root;
  fs::path walked;
  for (auto part = relative.begin(); part != relative.end(); ++part) {
    if (std::next(part) == relative.end()) {
      return current / *part;
    }
    current /= *part;
    walked /= *part;
    std::error_code ec;
    if (!fs::is_symlink(current, ec)) {
      continue;
    }
    const fs::path inside = resolve_inside(root, current);
    if (inside.empty()) {
      throw Error(file + ": its directory " + walked.string() + " is a symlink to " +
                      fs::weakly_canonical(current, ec).string() + ", outside the tree " +
                      root.string() +
                      ": ascend-setup does not write through it; nothing was written",
                  ErrorKind::bad_input);
    }
    current = inside;
  }
  return current;
}

nlohmann::json to_json(const TreeTransaction::Entry& entry, size_t index) {
  static const char* kinds[] = {"regular", "absent", "link"};
  return {{"file", entry.file},          {"path", entry.path.string()},
          {"temp", entry.temp.string()}, {"old", kinds[static_cast<int>(entry.old_kind)]},
          {"mode", entry.old_mode},      {"uid", entry.old_uid},
          {"gid", entry.old_gid},        {"link", entry.old_link},
          {"sha256", entry.old_sha256},  {"backup", std::to_string(index)}};
}

// Puts one file back as the journal saved it; nothing when it already is.
void roll_back(const nlohmann::json& entry, const fs::path& journal_dir) {
  const fs::path path = entry.at("path").get<std::string>();
  const fs::path temp = entry.at("temp").get<std::string>();
  ::unlink(temp.c_str());
  const std::string old = entry.at("old").get<std::string>();
  struct stat info {};
  const bool exists = ::lstat(path.c_str(), &info) == 0;
  if (old == "absent") {
    if (exists && ::unlink(path.c_str()) != 0) {
      throw system_error("remove", path, errno);
    }
    return;
  }
  if (old == "link") {
    const std::string target = entry.at("link").get<std::string>();
    std::error_code ec;
    if (exists && S_ISLNK(info.st_mode) && fs::read_symlink(path, ec).string() == target) {
      return;
    }
    if (exists && ::unlink(path.c_str()) != 0) {
      throw system_error("remove", path, errno);
    }
    if (::symlink(target.c_str(), path.c_str()) != 0) {
      throw system_error("restore the symlink", path, errno);
    }
    return;
  }
  if (exists && S_ISREG(info.st_mode)) {
    const auto current = read_whole_file(path);
    if (current && sha256_hex(*current) == entry.at("sha256").get<std::string>()) {
      return;
    }
  }
  const fs::path backup = journal_dir / "backup" / entry.at("backup").get<std::string>();
  const auto bytes = read_whole_file(backup);
  if (!bytes || sha256_hex(*bytes) != entry.at("sha256").get<std::string>()) {
    throw Error(
        "the saved copy " + backup.string() + " of " + path.string() + " is missing or damaged",
        ErrorKind::local_io);
  }
  const auto mode = entry.at("mode").get<unsigned>();
  const int uid = entry.at("uid").get<int>();
  const int gid = entry.at("gid").get<int>();
  // The saved copy itself goes back in one rename: no new space is needed,
  // which matters when the disk is what failed.
  if (::chmod(backup.c_str(), mode) == 0 &&
      (uid < 0 || ::geteuid() != 0 || ::chown(backup.c_str(), uid, gid) == 0) &&
      ::rename(backup.c_str(), path.c_str()) == 0) {
    sync_directory(path.parent_path());
    return;
  }
  replace_atomically(path, temp, *bytes, mode, uid, gid);  // another file system
}

// Rolls every entry back, the last written first; the journal goes only
// when all of them are back.
void roll_back_all(const nlohmann::json& journal, const fs::path& journal_dir) {
  std::string failures;
  const auto& entries = journal.at("entries");
  for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) {
    try {
      roll_back(*entry, journal_dir);
    } catch (const std::exception& error) {
      failures += (failures.empty() ? "" : "; ") + std::string(error.what());
    }
  }
  if (!failures.empty()) {
    throw Error("could not put the tree back (" + failures + "); the journal " +
                    (journal_dir / journal_file_name).string() + " stays, the next run tries again",
                ErrorKind::local_io);
  }
  std::error_code ec;
  fs::remove(journal_dir / journal_file_name, ec);
  fs::remove_all(journal_dir / "backup", ec);
}

}  // namespace

TreeTransaction::TreeTransaction(fs::path tree_root, fs::path journal_dir)
    : tree_root_(std::move(tree_root)), journal_dir_(std::move(journal_dir)) {}

TreeTransaction::~TreeTransaction() {
  if (!written_) {
    return;
  }
  try {
    const auto text = read_whole_file(journal_dir_ / journal_file_name);
    if (text) {
      roll_back_all(nlohmann::json::parse(*text), journal_dir_);
      spdlog::warn("the source tree was put back as it was: no file changed");
    }
  } catch (const std::exception& error) {
    spdlog::error("{}", error.what());
  }
}

void TreeTransaction::stage(const std::string& file, std::optional<std::string> content,
                            unsigned new_file_mode) {
  Entry entry;
  entry.file = file;
  entry.content = std::move(content);
  entry.new_mode = new_file_mode;
  std::error_code ec;
  const fs::path in_tree = through_directories(tree_root_, file);
  if (fs::is_symlink(in_tree, ec) && entry.content) {
    entry.path = resolve_inside(tree_root_, in_tree);
    if (entry.path.empty()) {
      throw Error(file + " is a symlink to " + fs::weakly_canonical(in_tree, ec).string() +
                      ", outside the tree " + tree_root_.string() +
                      ": ascend-setup does not write through it; nothing was written",
                  ErrorKind::bad_input);
    }
  } else {
    entry.path = in_tree;  // a link to remove goes itself, its target stays
  }
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict inside
  // the operator+ chain this once was.
  std::string temp_name = ".";
  temp_name.append(entry.path.filename().string());
  temp_name.append(".ascend-setup-");
  temp_name.append(std::to_string(::getpid()));
  temp_name.append(".tmp");
  entry.temp = entry.path.parent_path() / temp_name;
  struct stat info {};
  if (::lstat(entry.path.c_str(), &info) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      throw system_error("inspect", entry.path, errno);
    }
    entry.old_kind = OldKind::absent;
  } else if (S_ISLNK(info.st_mode)) {
    entry.old_kind = OldKind::link;
    entry.old_link = fs::read_symlink(entry.path).string();
  } else if (S_ISREG(info.st_mode)) {
    entry.old_kind = OldKind::regular;
    entry.old_mode = info.st_mode & 07777;
    entry.old_uid = static_cast<int>(info.st_uid);
    entry.old_gid = static_cast<int>(info.st_gid);
    entry.new_mode = entry.old_mode;
  } else {
    throw Error(file + " is not a regular file: ascend-setup does not replace it",
                ErrorKind::bad_input);
  }
  entries_.push_back(std::move(entry));
}

void TreeTransaction::write() {
  if (entries_.empty()) {
    return;
  }
  throw_if_stopped();
  recover(journal_dir_);
  // 1. The old state, synced, before the first file changes.
  std::error_code ec;
  fs::remove_all(journal_dir_ / "backup", ec);
  fs::create_directories(journal_dir_ / "backup", ec);
  if (ec) {
    throw system_error("create the directory", journal_dir_ / "backup", ec.value());
  }
  nlohmann::json journal = {{"format", journal_format},
                            {"pid", ::getpid()},
                            {"tree", tree_root_.string()},
                            {"entries", nlohmann::json::array()}};
  try {
    for (size_t i = 0; i < entries_.size(); ++i) {
      Entry& entry = entries_[i];
      if (entry.old_kind == OldKind::regular) {
        const auto bytes = read_whole_file(entry.path);
        if (!bytes) {
          throw Error(entry.path.string() + " vanished while it was being patched",
                      ErrorKind::bad_input);
        }
        entry.old_sha256 = sha256_hex(*bytes);
        write_synced(journal_dir_ / "backup" / std::to_string(i), *bytes);
      }
      journal["entries"].push_back(to_json(entry, i));
    }
    write_synced(journal_dir_ / journal_file_name, journal.dump(1) + "\n");
  } catch (...) {
    fs::remove_all(journal_dir_ / "backup", ec);  // the tree is untouched
    throw;
  }
  written_ = true;

  // 2. File by file, each in one rename; any failure puts all of them back.
  try {
    for (const Entry& entry : entries_) {
      throw_if_stopped();
      if (!entry.content) {
        if (::unlink(entry.path.c_str()) != 0 && errno != ENOENT) {
          throw system_error("remove", entry.path, errno);
        }
        sync_directory(entry.path.parent_path());
        continue;
      }
      fs::create_directories(entry.path.parent_path(), ec);
      if (ec) {
        throw system_error("create the directory", entry.path.parent_path(), ec.value());
      }
      replace_atomically(entry.path, entry.temp, *entry.content, entry.new_mode, entry.old_uid,
                         entry.old_gid);
    }
    throw_if_stopped();
  } catch (...) {
    written_ = false;
    try {
      roll_back_all(journal, journal_dir_);
    } catch (const Error& error) {
      spdlog::error("{}", error.what());
    }
    throw;
  }
}

void TreeTransaction::finish() {
  if (!written_) {
    return;
  }
  std::error_code ec;
  fs::remove(journal_dir_ / journal_file_name, ec);
  if (ec) {
    throw system_error("remove the journal", journal_dir_ / journal_file_name, ec.value());
  }
  written_ = false;
  fs::remove_all(journal_dir_ / "backup", ec);
}

bool TreeTransaction::recover(const fs::path& journal_dir) {
  const auto text = read_whole_file(journal_dir / journal_file_name);
  if (!text) {
    std::error_code ec;
    fs::remove_all(journal_dir / "backup", ec);  // saved before a journal was written
    return false;
  }
  nlohmann::json journal;
  try {
    journal = nlohmann::json::parse(*text);
    if (journal.at("format").get<int>() != journal_format) {
      throw Error("unknown format", ErrorKind::bad_input);
    }
  } catch (const std::exception& error) {
    throw Error("the patch journal " + (journal_dir / journal_file_name).string() +
                    " is unreadable (" + error.what() +
                    "): check the files it names, then delete it",
                ErrorKind::bad_input);
  }
  spdlog::warn("a run (pid {}) was stopped while it patched {}: putting the files back",
               journal.value("pid", 0), journal.value("tree", std::string("the tree")));
  roll_back_all(journal, journal_dir);
  return true;
}

}  // namespace ascend_setup
