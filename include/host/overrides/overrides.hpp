// The Ascend overrides of upstream's setup module: one unit
// per patch point, each in its own file, each wrapping the upstream name and
// falling back to it where upstream's behaviour is kept. Applied in this order by
// apply_overrides().
#pragma once

#include "base/layer/build_mode.hpp"
#include "base/layer/profile.hpp"
#include "base/util/platform_info.hpp"

#include <pybind11/pybind11.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace ascend_setup {

struct OverrideContext {
  pybind11::object module;  // setup.py's module, or an object whose attributes are its globals
  pybind11::dict captured_kwargs;
  std::shared_ptr<const Profile> profile;
  std::filesystem::path tree_root;
  PlatformInfo platform;
  std::optional<BuildMode> forced_mode;  // --dev / --release
  bool force_patches = false;            // --force-patches

  // Patch point id -> the upstream name found (filled by apply_overrides).
  std::map<std::string, std::string> names;

  // Whether the profile names patch point `id`.
  bool has(const std::string& id) const { return names.count(id) != 0; }
  // The upstream name of patch point `id` (profile [patch_points]).
  const std::string& name(const std::string& id) const;
  // The module's attribute for patch point `id`.
  pybind11::object upstream(const std::string& id) const;
  // Sets the module's attribute for patch point `id`, under upstream's name,
  // so that upstream's own callers reach the override.
  void replace(const std::string& id, const pybind11::object& value) const;
};

// backends = [BackendInstaller.prepare("<backend>"), *backends]
void override_backends(const OverrideContext& context);
// get_llvm_package_info -> the Ascend LLVM build (upstream's where there is none);
// only where setup.py's module resolves the packages ([llvm] resolved_in)
void override_llvm_package_info(const OverrideContext& context);
// get_thirdparty_packages -> each package through ascend-setup's downloader first
void override_thirdparty_packages(const OverrideContext& context);
// get_package_dirs, get_packages, add_links -> plus the distributed package
void override_distributed_package(const OverrideContext& context);
// CMakeBuild -> the Ascend subclass
void override_cmake_build(const OverrideContext& context);
// bdist_wheel -> BuildWheel, the Ascend subclass
void override_build_wheel(const OverrideContext& context);
// egg_info -> EggInfo: entry_points.txt in setup()'s order (ascend first)
void override_egg_info(const OverrideContext& context);
// sdist -> Sdist: the release tree records the checkout's HEAD and branch
void override_sdist(const OverrideContext& context);
// build_py -> BuildPy: the BishengIR payload copied into build_lib
void override_build_py(const OverrideContext& context);

// Checks every patch point of the profile at once (Error upstream_mismatch
// naming all that are missing), then applies the overrides in order.
void apply_overrides(const OverrideContext& context);

// The command class setup() registers as cmdclass[`command`], else
// setuptools' own (`fallback_module`.`command`).
pybind11::object registered_command(const OverrideContext& context, const char* command,
                                    const char* fallback_module);

// Creates `class <name>(base)` in the module, as if setup.py had defined it.
pybind11::object define_subclass(const OverrideContext& context, const char* name,
                                 const pybind11::object& base, const char* doc);

}  // namespace ascend_setup
