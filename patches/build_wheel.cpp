// Seed 4.7: the Ascend bdist_wheel, BuildWheel, a subclass of the command
// upstream registered (its run() links external backends, then builds the
// wheel). Installed as cmdclass["bdist_wheel"]; auditwheel repair is added by
// the "Ascend build commands" issue.
#include "overrides.hpp"

#include "ascend_setup/error.hpp"

namespace py = pybind11;

namespace ascend_setup {

void override_build_wheel(const OverrideContext& context) {
  py::object cmdclass = context.captured_kwargs.contains("cmdclass")
                            ? py::object(context.captured_kwargs["cmdclass"])
                            : py::object(py::dict());
  if (!py::isinstance<py::dict>(cmdclass) || !cmdclass.contains("bdist_wheel")) {
    throw Error("setup.py's setup() call registers no cmdclass['bdist_wheel'], which the "
                "BuildWheel override needs: upstream changed its commands; update the override",
                exit_code::upstream_mismatch);
  }
  py::object build_wheel =
      define_subclass(context, "BuildWheel", cmdclass["bdist_wheel"],
                      "ascend-setup: upstream's bdist_wheel with the Ascend wheel steps");
  context.module.attr("BuildWheel") = build_wheel;
}

}  // namespace ascend_setup
