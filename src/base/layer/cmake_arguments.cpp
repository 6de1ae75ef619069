#include "base/layer/cmake_arguments.hpp"

#include "base/layer/environment.hpp"

namespace ascend_setup {

std::vector<std::string> ascend_cmake_args(const Profile& profile) {
  std::vector<std::string> args;
  if (const auto tag = env_value(EnvVar::ir_tag, &profile); tag && !tag->empty()) {
    args.push_back(profile.build.ir_tag_arg + "=" + *tag);
  }
  args.insert(args.end(), profile.build.cmake_args.begin(), profile.build.cmake_args.end());
  args.push_back(profile.build.distributed_arg + "=" +
                 (env_on(EnvVar::distributed, profile) ? "ON" : "OFF"));
  return args;
}

}  // namespace ascend_setup
