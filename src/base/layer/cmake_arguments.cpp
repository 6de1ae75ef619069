#include "base/layer/cmake_arguments.hpp"

#include "base/layer/environment.hpp"
#include "base/util/executable_search.hpp"

#include <spdlog/spdlog.h>

namespace ascend_setup {

namespace {

// The clang++ the build hands CMake: the LLVM package's, else PATH's.
std::optional<std::filesystem::path> clangxx(const Profile& profile, const ConfigureFacts& facts) {
  if (facts.llvm_syspath) {
    const std::filesystem::path candidate = *facts.llvm_syspath / "bin" / profile.build.clangxx;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) {
      return candidate;
    }
  }
  return find_executable(profile.build.clangxx, env_value(EnvVar::path, &profile));
}

}  // namespace

std::vector<std::string> ascend_cmake_args(const Profile& profile, const ConfigureFacts& facts) {
  std::vector<std::string> args;
  if (const auto tag = env_value(EnvVar::ir_tag, &profile); tag && !tag->empty()) {
    args.push_back(profile.build.ir_tag_arg + "=" + *tag);
  }
  args.insert(args.end(), profile.build.cmake_args.begin(), profile.build.cmake_args.end());
  args.push_back(profile.build.distributed_arg + "=" +
                 (env_on(EnvVar::distributed, profile) ? "ON" : "OFF"));
  if (facts.llvm_syspath) {
    args.push_back("-D" + profile.llvm.syspath_var + "=" + facts.llvm_syspath->string());
  }
  if (const std::string& arg = profile.build.clangxx_arg; !arg.empty()) {
    const std::string variable = arg.substr(arg.rfind("-D", 0) == 0 ? 2 : 0);
    if (env_value(EnvVar::cmake_args, &profile).value_or("").find(variable) != std::string::npos) {
      spdlog::info("{} is named in {}: not added", variable,
                   env_name(EnvVar::cmake_args, &profile));
    } else if (const auto found = clangxx(profile, facts)) {
      args.push_back(arg + "=" + found->string());
    } else {
      spdlog::debug("no {} in the LLVM package or on PATH: {} not added", profile.build.clangxx,
                    variable);
    }
  }
  if (!profile.build.version_arg.empty()) {
    args.push_back(profile.build.version_arg + "=" + facts.wheel_version);
  }
  return args;
}

}  // namespace ascend_setup
