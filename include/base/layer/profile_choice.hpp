// Which profile a run uses (doc/profile.md). In order: --profile FILE;
// the tree's own ascend-setup.toml; else the tree's upstream version picks
// among the profiles of each --profile-dir and the built-in ones
// (profiles/*.toml) that fit the tree's layer (fitting_layer(): a profile
// with [layer] markers is for a tree holding one of them, and comes first):
// the one made for that version, else one of the same major.minor, else the
// nearest (below first). The reason is kept in
// Profile::chosen_because for --doctor and the log: a warning when no profile
// is made for the tree's version, info when it was chosen among several,
// debug otherwise (so a plain run's stderr is setup.py's own).
#pragma once

#include "base/layer/profile.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

struct ProfileRequest {
  std::optional<std::filesystem::path> file;       // --profile
  std::vector<std::filesystem::path> directories;  // --profile-dir, in order
};

// The upstream version a tree carries, and where it was read.
struct TreeVersion {
  std::string version;   // "1.2.3"
  std::string found_in;  // "setup.py's TRITON_VERSION", "version.txt"
};

// "1.2.3+git1234" -> "1.2.3": the leading dotted digits.
std::string release_part(const std::string& version);

// The string literal a profile's [upstream] version_variable is assigned at
// module level of setup.py (`TRITON_VERSION = "1.2.3" + suffix`; a line scan,
// before any interpreter starts, where the doctor reads the same literal with
// `ast`), else the release part of the profile's [version] file at the tree
// root. The candidates' variable and file names are tried in order, each once.
std::optional<TreeVersion> read_tree_version(const std::vector<Profile>& candidates,
                                             const std::filesystem::path& tree_root,
                                             const std::filesystem::path& setup_py);

struct ProfileChoice {
  Profile profile;
  bool fits = false;  // made for the tree's upstream version (or named by the user)
  std::size_t candidates =
      0;  // how many fitting the tree's layer it was chosen among (0: named by the user)
  // How many of those came from a --profile-dir (the user's alternatives to
  // the built-in ones).
  std::size_t from_directories = 0;
};

// Picks among `candidates` (an earlier one wins a tie) for `version`; with no
// version, `fallback`. Sets chosen_because.
ProfileChoice choose_profile(const std::vector<Profile>& candidates,
                             const std::optional<TreeVersion>& version, const Profile& fallback);

// The first of the profile's [layer] markers the tree holds (a path it holds, or
// a marker_texts file holding its text), if any.
std::optional<std::string> layer_marker_held(const Profile& profile,
                                             const std::filesystem::path& tree_root);

// The candidates that fit the tree's layer, in order: first those with a
// marker the tree holds, then those without markers; one whose markers the
// tree does not hold is dropped (all are kept when none would be left).
std::vector<Profile> fitting_layer(std::vector<Profile> candidates,
                                   const std::filesystem::path& tree_root);

// The whole rule above. Throws Error (exit 3) for an unreadable or malformed
// profile or profile directory, naming it.
ProfileChoice select_profile(const ProfileRequest& request, const std::filesystem::path& tree_root,
                             const std::filesystem::path& setup_py);

}  // namespace ascend_setup
