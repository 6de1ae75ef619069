// The symlinks an archive has unpacked so far, and where they lead: each
// link target is resolved the way the kernel resolves it, component by
// component, through the links unpacked before it (`c/b -> ..` makes
// `c/b/c/b/../..` climb two levels above `c`), so that a chain of links
// inside a package cannot point outside it. Paths are relative to the
// directory being unpacked into, without `.` parts.
//
// A link may point at a link unpacked after it (`libLLVM.so -> libLLVM.so.17`
// then `libLLVM.so.17 -> libLLVM-17.so`): when a new link appears, every link
// whose resolution walked through its path is resolved again, and the new one
// is refused when any of them would then leave the directory.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ascend_setup {

class ArchiveLinks {
 public:
  // nullopt when a symlink at `link` to `target` may be unpacked (and it is
  // then remembered), else why not: an empty or absolute target, one that
  // resolves outside, a loop, or an earlier link it would redirect outside.
  std::optional<std::string> add_symlink(const std::filesystem::path& link,
                                         const std::string& target);
  // nullopt when an entry that is not a symlink may be unpacked at `path`,
  // else why not: it would replace a link unpacked before it (what the links
  // through it resolve to would change).
  std::optional<std::string> check_entry(const std::filesystem::path& path) const;

  // nullopt when a hard link at `path` to the entry at `linked` may be
  // unpacked, else why not: its target passes through a symlink, or it
  // replaces one. A hard link to a symlink is a second symlink with the same
  // text, read from its own directory, and is checked as one.
  std::optional<std::string> add_hard_link(const std::filesystem::path& path,
                                           const std::filesystem::path& linked);

  // The links' count, for tests.
  std::size_t size() const { return targets_.size(); }

 private:
  using Parts = std::vector<std::string>;
  // Where `target`, read in the directory `from`, leads; nullopt (with
  // `why` set) when it leaves the root or loops. Every path it walks through
  // is recorded as walked by `link`.
  std::optional<Parts> resolve(const Parts& from, const std::string& target, const std::string& link,
                               std::string& why);
  void forget_walks_of(const std::string& link);

  std::map<std::string, std::string> targets_;  // link path -> its target, as written
  std::map<std::string, std::set<std::string>> walked_by_;  // path -> links resolved through it
  std::map<std::string, std::set<std::string>> walks_of_;   // link -> paths its resolution walked
};

// The path without `.` and empty parts ("./pkg/lib/" is "pkg/lib"): the form
// in which an archive's names and links are compared.
std::filesystem::path plain_path(const std::filesystem::path& path);

}  // namespace ascend_setup
