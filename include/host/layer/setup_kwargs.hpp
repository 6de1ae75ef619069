// The keyword arguments the real setup() receives, rewritten from
// the captured ones after the module has been patched.
#pragma once

#include "base/layer/profile.hpp"
#include "base/util/platform_info.hpp"

#include <pybind11/pybind11.h>

#include <filesystem>

namespace ascend_setup {

// name, version, url, long_description (+ content type), install_requires,
// cmdclass, packages, package_dir, entry_points and package_data are set;
// every other key passes through unchanged and in its place.
pybind11::dict rewrite_setup_kwargs(const pybind11::dict& captured, const pybind11::object& module,
                                    const Profile& profile, const std::filesystem::path& tree_root,
                                    const PlatformInfo& platform);

}  // namespace ascend_setup
