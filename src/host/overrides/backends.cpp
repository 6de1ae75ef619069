// The Ascend backend goes first among the in-tree backends, so that
// upstream's own code puts it into -DTRITON_CODEGEN_BACKENDS, the package
// list and the triton.backends entry points.
#include "host/overrides/overrides.hpp"

namespace py = pybind11;

namespace ascend_setup {

void override_backends(const OverrideContext& context) {
  py::object installer = context.upstream("BackendInstaller");
  py::object backends = context.upstream("backends");
  py::object ascend = installer.attr(context.name("BackendInstaller.prepare").c_str())(
      context.profile->backend_name);
  py::list patched;
  patched.append(ascend);
  for (auto backend : backends) {
    patched.append(backend);
  }
  context.replace("backends", patched);
}

}  // namespace ascend_setup
