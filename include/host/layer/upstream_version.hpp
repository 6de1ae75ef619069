// The upstream version setup.py carries (the profile's [upstream]
// version_variable, e.g. TRITON_VERSION = "1.2.3" + suffix) against the
// version the profile was made for.
#pragma once

#include "base/layer/build_mode.hpp"
#include "base/layer/profile.hpp"
#include "base/layer/profile_choice.hpp"

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace ascend_setup {

// The loaded module's version variable, nullopt when it has none.
std::optional<std::string> captured_upstream_version(const Profile& profile,
                                                     const pybind11::object& module);

// A mismatch is a warning in a dev build; in a release build it throws
// Error(upstream_mismatch) unless `allow` (--allow-version-mismatch).
void check_upstream_version(const Profile& profile, const pybind11::object& module, BuildMode mode,
                            bool allow);

}  // namespace ascend_setup
