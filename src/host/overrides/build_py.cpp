// The Ascend `AscendBuildPy` (the in-tree layers' name): upstream's build_py
// (or setuptools'), then the BishengIR payload copied into build_lib
// (base/npuir/bishengir_payload.hpp):
// from the directory [bishengir] path_env names, else, with the NPUIR build
// on, from the tree's payload; neither: nothing is copied. A payload lacking
// one of [bishengir] required stops the build (exit 3) naming it. Installed
// as cmdclass["build_py"].
#include "base/layer/environment.hpp"
#include "base/npuir/bishengir_payload.hpp"
#include "base/tree/build_lock.hpp"
#include "host/overrides/overrides.hpp"

#include <spdlog/spdlog.h>

namespace py = pybind11;

namespace ascend_setup {

void override_build_py(const OverrideContext& context) {
  if (!context.profile->bishengir.present) {
    return;  // a layer without a payload keeps upstream's build_py
  }
  py::object base = registered_command(context, "build_py", "setuptools.command.build_py");
  py::object build_py = define_subclass(context, "AscendBuildPy", base,
                                        "ascend-setup: build_py adding the BishengIR payload");
  const std::filesystem::path tree_root = context.tree_root;
  const std::shared_ptr<const Profile> profile = context.profile;
  build_py.attr("run") = py::cpp_function(
      [base, tree_root, profile](py::object self) {
        const auto source = bishengir_payload_source(tree_root, *profile);
        const std::string origin =
            env_value(EnvVar::bishengir_path, profile.get()).value_or("").empty()
                ? profile->npuir.switch_name + " on"
                : profile->bishengir.path_env;
        // A payload lacking a part stops the build before upstream's build_py
        // (which builds the extension first), not after it.
        if (source) {
          check_bishengir_payload(*source, profile->bishengir.required, origin);
        }
        base.attr("run")(self);
        if (!source) {
          spdlog::debug("no BishengIR payload: neither {} nor {} is set",
                        profile->bishengir.path_env, profile->npuir.switch_name);
          return;
        }
        const std::filesystem::path build_lib = py::str(self.attr("build_lib")).cast<std::string>();
        install_bishengir_payload(*source, build_lib / profile->bishengir.destination,
                                  profile->bishengir.required, origin, held_build_lock());
      },
      py::name("run"), py::is_method(build_py));
  context.module.attr("AscendBuildPy") = build_py;
}

}  // namespace ascend_setup
