// Seed 4.6: the Ascend CMakeBuild, a subclass of upstream's created here and
// installed as cmdclass["build_ext"]. It delegates to upstream for now; the
// Ascend build steps (patching, cmake arguments, tools) are added by the
// "Ascend build commands" issue.
#include "overrides.hpp"

namespace py = pybind11;

namespace ascend_setup {

void override_cmake_build(const OverrideContext& context) {
  py::object upstream = context.upstream("CMakeBuild", "CMakeBuild");
  py::object cmake_build =
      define_subclass(context, "CMakeBuild", upstream,
                      "ascend-setup: upstream's CMakeBuild with the Ascend build steps");
  context.module.attr("CMakeBuild") = cmake_build;
}

}  // namespace ascend_setup
