// The arguments the Ascend layer adds to upstream's CMake configure call,
// after upstream's own, in the order the maintainers' layer adds them: the
// AscendNPU IR tag when set, the profile's [build] cmake_args, the
// distributed switch as ON or OFF; then what the build computed: the LLVM
// handed to CMake (-D<[llvm] syspath_var>, on a tree that resolves its
// packages outside setup.py), the clang++ of [build] clangxx_arg (the LLVM
// package's bin/<clangxx> when it has one, else <clangxx> on PATH; not when
// upstream's extra-arguments variable names it already, nor when there is
// none), and [build] version_arg with the wheel's version. The CMakeBuild
// override (src/host/overrides/cmake_build.cpp) appends them.
#pragma once

#include "base/layer/profile.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

// What the build knows by its configure call.
struct ConfigureFacts {
  std::optional<std::filesystem::path> llvm_syspath;  // the LLVM handed to CMake
  std::string wheel_version;
};

std::vector<std::string> ascend_cmake_args(const Profile& profile, const ConfigureFacts& facts);

}  // namespace ascend_setup
