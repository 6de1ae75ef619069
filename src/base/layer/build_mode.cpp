#include "base/layer/build_mode.hpp"

#include "base/layer/checkout_record.hpp"
#include "base/layer/environment.hpp"
#include "base/layer/wheel_version.hpp"

namespace ascend_setup {

namespace {

// The branch rule: the checkout and its branch decide (in
// an unpacked sdist of a checkout, the branch it recorded).
ModeChoice branch_rule(const Profile& profile, const std::filesystem::path& tree_root) {
  const auto facts = checkout_facts(tree_root, profile.version.git_hash_length);
  if (!facts) {
    return {BuildMode::release, "not a git checkout"};
  }
  const auto& branch = facts->branch;
  if (!branch) {
    return {BuildMode::dev, "detached HEAD"};
  }
  if (branch->rfind("release", 0) == 0) {
    return {BuildMode::release, "branch " + *branch};
  }
  return {BuildMode::dev, "branch " + *branch};
}

// The manylinux rule: only the official manylinux build of a release version
// without a suffix is a release build.
ModeChoice manylinux_rule(const Profile& profile, const std::filesystem::path& tree_root) {
  const std::string manylinux = profile.switches.manylinux;
  if (!env_on(EnvVar::manylinux, profile)) {
    return {BuildMode::dev, manylinux + " off"};
  }
  const std::string suffix = env_value(EnvVar::version_suffix, &profile).value_or("");
  if (!suffix.empty()) {
    return {BuildMode::dev, profile.version.suffix_env + " is '" + suffix + "'"};
  }
  const std::string version = version_text(profile, tree_root);
  if (version.find("dev") != std::string::npos) {
    return {BuildMode::dev, "version " + version + " is a dev version"};
  }
  return {BuildMode::release, manylinux + " on, no suffix, version " + version};
}

}  // namespace

std::string_view to_string(BuildMode mode) { return mode == BuildMode::dev ? "dev" : "release"; }

ModeChoice choose_build_mode(std::optional<BuildMode> forced, const Profile& profile,
                             const std::filesystem::path& tree_root) {
  if (forced) {
    return {*forced, *forced == BuildMode::dev ? "--dev" : "--release"};
  }
  if (env_on(EnvVar::dev_mode, profile)) {
    return {BuildMode::dev, profile.switches.dev_mode + " is set"};
  }
  if (env_on(EnvVar::release_mode, profile)) {
    return {BuildMode::release, profile.switches.release_mode + " is set"};
  }
  return profile.mode_rule == Profile::ModeRule::manylinux ? manylinux_rule(profile, tree_root)
                                                           : branch_rule(profile, tree_root);
}

}  // namespace ascend_setup
