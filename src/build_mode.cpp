#include "ascend_setup/build_mode.hpp"

#include "ascend_setup/environment.hpp"
#include "ascend_setup/source_repo.hpp"

namespace ascend_setup {

std::string_view to_string(BuildMode mode) { return mode == BuildMode::dev ? "dev" : "release"; }

ModeChoice choose_build_mode(std::optional<BuildMode> forced, const Profile::Switches& switches,
                             const std::filesystem::path& tree_root) {
  if (forced) {
    return {*forced, *forced == BuildMode::dev ? "--dev" : "--release"};
  }
  if (env_switch(switches.dev_mode)) {
    return {BuildMode::dev, switches.dev_mode + " is set"};
  }
  if (env_switch(switches.release_mode)) {
    return {BuildMode::release, switches.release_mode + " is set"};
  }
  const auto repo = SourceRepo::open(tree_root);
  if (!repo) {
    return {BuildMode::release, "not a git checkout"};
  }
  const auto branch = repo->branch();
  if (!branch) {
    return {BuildMode::dev, "detached HEAD"};
  }
  if (branch->rfind("release", 0) == 0) {
    return {BuildMode::release, "branch " + *branch};
  }
  return {BuildMode::dev, "branch " + *branch};
}

}  // namespace ascend_setup
