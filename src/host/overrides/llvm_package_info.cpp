// Build against the Ascend build of LLVM, named after upstream's
// LLVM revision and a hash of the Ascend LLVM patches, so that a patch change
// fetches a new package by itself.
#include "host/overrides/overrides.hpp"

#include "base/layer/environment.hpp"
#include "base/layer/llvm_package.hpp"

#include <spdlog/spdlog.h>

namespace py = pybind11;

namespace ascend_setup {

void override_llvm_package_info(const OverrideContext& context) {
  py::object original = context.upstream("get_llvm_package_info");
  py::object package_type = context.upstream("Package");
  auto profile = context.profile;
  const std::filesystem::path root = context.tree_root;
  const PlatformInfo platform = context.platform;

  py::cpp_function replacement(
      [original, package_type, profile, root, platform]() -> py::object {
        const Profile::Llvm& llvm = profile->llvm;
        const LlvmChoice choice = choose_llvm_package(
            llvm, platform, env_value(EnvVar::llvm_system_suffix, profile.get()).value_or(""),
            root);
        if (const auto* package = std::get_if<LlvmPackage>(&choice)) {
          return package_type("llvm", package->name, package->url, llvm.include_flag, llvm.lib_flag,
                              llvm.syspath_var, py::arg("sym_name") = package->sym_name);
        }
        if (const auto* user = std::get_if<UserConfiguredLlvm>(&choice)) {
          spdlog::warn("{}", user->reason);
          return package_type("llvm", llvm.user_configured_name, "", llvm.include_flag,
                              llvm.lib_flag, llvm.syspath_var);
        }
        return original();
      },
      py::name("get_llvm_package_info"),
      py::doc("ascend-setup: the Ascend LLVM build, else upstream's choice"));
  context.replace("get_llvm_package_info", replacement);
}

}  // namespace ascend_setup
