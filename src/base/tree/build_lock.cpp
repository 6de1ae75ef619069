#include "base/tree/build_lock.hpp"

#include "base/tree/state_paths.hpp"

#include <optional>
#include <stdexcept>

namespace ascend_setup {

namespace {

struct HeldBuildLock {
  std::filesystem::path tree_root;
  FileLock lock;
};

std::optional<HeldBuildLock>& current() {
  static std::optional<HeldBuildLock> held;
  return held;
}

}  // namespace

const HeldLock& take_build_lock(const std::filesystem::path& tree_root) {
  std::optional<HeldBuildLock>& held = current();
  if (held && held->tree_root == tree_root) {
    return held->lock;
  }
  held.reset();
  held.emplace(HeldBuildLock{
      tree_root,
      FileLock(state_dir(tree_root) / "build.lock", "building in " + (tree_root / "build").string())});
  return held->lock;
}

void release_build_lock() { current().reset(); }

const HeldLock& held_build_lock() {
  if (!current()) {
    throw std::logic_error("a build output written without the build lock");
  }
  return current()->lock;
}

}  // namespace ascend_setup
