// Dev or release build: whether the dev patch is applied.
#pragma once

#include "base/layer/profile.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

enum class BuildMode { dev, release };

std::string_view to_string(BuildMode mode);

struct ModeChoice {
  BuildMode mode;
  std::string reason;  // which rule decided and on what: "IS_MANYLINUX on, no suffix, ..."
};

// `forced` (--dev / --release) wins; then the dev switch (1/on/true), then the
// release switch; then the profile's rule:
// - manylinux: release only when the manylinux switch is
//   on, the version suffix is empty and the version text (the version file,
//   else the profile's fallback) has no "dev";
// - branch: not a git checkout -> release; a branch whose
//   name starts with "release" -> release; anything else, detached HEAD
//   included -> dev. The branch is read with libgit2.
ModeChoice choose_build_mode(std::optional<BuildMode> forced, const Profile& profile,
                             const std::filesystem::path& tree_root);

}  // namespace ascend_setup
