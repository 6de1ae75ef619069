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

// <tree>/build/ascend-setup/compile-cache.log: ccache's stats log
// (CCACHE_STATSLOG) of the last build that compiled through the cache, emptied
// when a build starts; read for the summary and the build report.
inline std::filesystem::path compile_cache_log_path(const std::filesystem::path& tree_root) {
  return state_dir(tree_root) / "compile-cache.log";
}

// The last build's trace (Chrome trace events) and its report (one HTML page).
inline std::filesystem::path build_trace_path(const std::filesystem::path& tree_root) {
  return state_dir(tree_root) / "build-trace.json";
}
inline std::filesystem::path build_report_path(const std::filesystem::path& tree_root) {
  return state_dir(tree_root) / "build-report.html";
}

// <tree>/build/ascend-setup/wheel-digests/<wheel file name>.json: the digests
// the wheel writer recorded for the last wheel of that name it wrote, read by
// the next packing to reuse its entries (base/wheel/wheel_digests.hpp).
inline std::filesystem::path wheel_digests_path(const std::filesystem::path& tree_root,
                                                const std::filesystem::path& wheel) {
  return state_dir(tree_root) / "wheel-digests" / (wheel.filename().string() + ".json");
}

}  // namespace ascend_setup
