// The wheel version of the Ascend layer: base ($TRITON_VERSION or version.txt),
// the wheel suffix, and `+git<hash>` of HEAD unless it is a manylinux build.
#pragma once

#include "base/layer/profile.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

// True when `version` is a valid PEP 440 version (public part plus an
// optional local label), in any of the spellings PEP 440 normalises.
bool is_pep440_version(std::string_view version);

// Joins the parts. When both the suffix and the git part carry a "+",
// upstream's rule applies: the git part comes first and the suffix's "+"
// becomes "-" (one local label).
std::string compose_version(const std::string& base, const std::string& suffix,
                            const std::optional<std::string>& git_hash);

// The version text of the tree: its version file, stripped, else the
// profile's fallback (no environment override).
std::string version_text(const Profile& profile, const std::filesystem::path& tree_root);

// The version for `tree_root` under `profile`, read from the environment,
// the version file and git. Throws Error naming the variable to fix when the
// result is not PEP 440.
std::string wheel_version(const Profile& profile, const std::filesystem::path& tree_root);

}  // namespace ascend_setup
