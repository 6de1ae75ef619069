// The Ascend patch files a profile names, in application order: those one
// build mode applies (main; dev too in a dev build; then the nested ones,
// each inside its checkout, in every mode), or all of them for the checks
// that look at every patch (the engine's undo, the doctor).
#pragma once

#include "base/layer/build_mode.hpp"
#include "base/layer/profile.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

struct ProfilePatchFile {
  std::string role;                // "main", "dev" or "nested"
  const PatchFile* entry;          // the profile's entry (file name, optional)
  std::filesystem::path relative;  // <patches.directory>/<file>, tree-relative
};

// `mode` nullopt: every patch file of the profile.
std::vector<ProfilePatchFile> profile_patch_files(const Profile& profile,
                                                  std::optional<BuildMode> mode);

}  // namespace ascend_setup
