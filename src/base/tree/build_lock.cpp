#include "base/tree/build_lock.hpp"

#include "base/tree/state_paths.hpp"

#include <stdexcept>

namespace ascend_setup {

namespace {

const BuildLock* current = nullptr;

}  // namespace

BuildLock::BuildLock(const std::filesystem::path& tree_root)
    : lock_(state_dir(tree_root) / "build.lock", "building in " + (tree_root / "build").string()) {
  if (current != nullptr) {
    throw std::logic_error("a second build lock in one process");
  }
  current = this;
}

BuildLock::~BuildLock() { current = nullptr; }

const HeldLock& held_build_lock() {
  if (current == nullptr) {
    throw std::logic_error("a build output written without the build lock");
  }
  return current->held();
}

}  // namespace ascend_setup
