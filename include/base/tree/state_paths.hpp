// Where ascend-setup keeps its own state inside a source tree, named once:
// everything lives under <tree>/build/ascend-setup (never in the sources).
#pragma once

#include <filesystem>

namespace ascend_setup {

// <tree>/build/ascend-setup: the bytecode cache, the build lock, the patch state.
inline std::filesystem::path state_dir(const std::filesystem::path& tree_root) {
  return tree_root / "build" / "ascend-setup";
}

// <tree>/build/ascend-setup/patches: the patch record, the tree lock, saved edits.
inline std::filesystem::path patch_state_dir(const std::filesystem::path& tree_root) {
  return state_dir(tree_root) / "patches";
}

// The patch journal's directory under a patch state directory, and its file.
inline std::filesystem::path journal_dir(const std::filesystem::path& patch_state) {
  return patch_state / "journal";
}
inline constexpr const char* journal_file_name = "journal.json";

}  // namespace ascend_setup
