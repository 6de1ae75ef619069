// setup()'s call with the Ascend layer: what the command (host.cpp, on the
// kwargs it captured) and the hooks (hooks.cpp, on the kwargs setup.py hands
// its rebound `setup`) share, so that both apply the same layer the same way.
#pragma once

#include "base/layer/build_mode.hpp"
#include "base/layer/profile.hpp"

#include <pybind11/pybind11.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace ascend_setup {

struct SetupCall {
  std::filesystem::path tree_root;
  std::shared_ptr<const Profile> profile;
  std::optional<BuildMode> forced_mode;  // --dev / --release
  bool force_patches = false;            // --force-patches
  bool allow_version_mismatch = false;   // --allow-version-mismatch
  // The command that restores a checkout's sources, named by the warning
  // after a build that left them patched.
  std::string restore_command = "ascend-setup --restore-sources";
};

// Before setup.py runs: the distcc cluster probed (when `compiling`) and the
// job counts set in the environment (MAX_JOBS, the link jobs; where unset),
// the distributed part's sources made ready, and, when `compiling` with its
// switch on, the NPUIR build. What a build of the tree needs before setup.py
// reads its environment.
void prepare_build(const std::filesystem::path& tree_root, const Profile& profile, bool compiling);

// The layer applied to setup.py's module (`module`: the module, or an object
// whose attributes are setup.py's globals) and setup()'s kwargs as setup.py
// passed them: a setup.py that carries the layer itself refused (exit 4:
// carried_layer.hpp), the upstream version checked, every override applied, and
// the kwargs rewritten, which are returned. Needs the GIL; Python errors
// propagate as error_already_set, the layer's as Error.
pybind11::dict apply_layer(const SetupCall& call, const pybind11::object& module,
                           const pybind11::dict& captured);

// The real setuptools.setup called once with `kwargs`, under the tree's build
// lock (one build in a tree's build directory at a time); then the build's
// summary and, when a build left a checkout patched and the profile asks for
// it, one warning naming `call.restore_command`. Returns setup()'s result.
pybind11::object build_with_layer(const SetupCall& call, const pybind11::object& real_setup,
                                  const pybind11::dict& kwargs);

}  // namespace ascend_setup
