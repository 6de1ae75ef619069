// The sources of the distributed part (a plain clone, or a registered
// submodule), made ready before setup.py is loaded when the
// distributed switch is on:
// - directory missing (or an empty placeholder): cloned from the profile's URL
//   and branch with libgit2; a registered submodule there is initialised from
//   .gitmodules instead;
// - in a git checkout of the tree, the clone is then held at the profile's pin:
//   nothing to do at the pin; elsewhere the pin is checked out (fetched first
//   when unknown), but only when the clone has no local changes: those are
//   never discarded (Error patch_conflict naming the files);
// - in a source archive (the tree is no git checkout) the directory is used as
//   it is.
// Offline with no usable clone: Error(bad_input) naming the URL, the directory,
// the pin and the commands that provide the clone by hand. No git
// configuration is ever written.
#pragma once

#include "base/layer/profile.hpp"

#include <filesystem>

namespace ascend_setup {

void ensure_distributed_sources(const std::filesystem::path& tree_root, const Profile& profile);

}  // namespace ascend_setup
