// The arguments the Ascend layer adds to upstream's CMake configure call,
// after upstream's own: the AscendNPU IR tag when set, the profile's
// [build] cmake_args, and the distributed switch as ON or OFF. The
// CMakeBuild override (src/host/overrides/cmake_build.cpp) appends them.
#pragma once

#include "base/layer/profile.hpp"

#include <string>
#include <vector>

namespace ascend_setup {

std::vector<std::string> ascend_cmake_args(const Profile& profile);

}  // namespace ascend_setup
