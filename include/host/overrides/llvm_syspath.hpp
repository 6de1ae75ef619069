// The LLVM that CMake builds against on a tree that resolves its prebuilt
// packages outside setup.py's module ([llvm] resolved_in: upstream's
// python/build_helpers.py, which CMake runs as a process of its own, so no
// patch of setup.py's module reaches it). ascend-setup resolves the Ascend
// LLVM package itself, fetches it into upstream's cache with its own
// downloader (package_fetch.hpp: parallel ranges, resume, the mirror, one
// fetch per machine, the pinned SHA-256, nothing partial), and the CMakeBuild
// override hands its directory to CMake as -D<syspath_var>=<dir>. Upstream's
// helper then finds its input defined and downloads nothing. No Python here:
// the override gathers the inputs from setup.py's module.
#pragma once

#include "base/download/package_fetch.hpp"
#include "base/layer/profile.hpp"
#include "base/util/platform_info.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace ascend_setup {

struct LlvmSyspathInputs {
  std::filesystem::path tree_root;
  std::filesystem::path cache_dir;  // upstream's get_triton_cache_path()
  bool offline = false;             // upstream's is_offline_build()
  // The syspath variable's value when set and not empty (the user's LLVM).
  std::optional<std::string> given;
  PlatformInfo platform;
};

// The user's LLVM when given (as given); else, offline, Error(bad_input)
// naming the syspath variable, as upstream's helper refuses; else the
// Ascend package's directory under cache_dir/llvm, fetched unless cached,
// with upstream's stable link (sym_name) pointed at it. nullopt where no
// Ascend build fits the platform: upstream's helper then chooses (a
// user-configured LLVM is warned about).
std::optional<std::filesystem::path> resolve_llvm_syspath(const Profile& profile,
                                                          const LlvmSyspathInputs& inputs);

}  // namespace ascend_setup
