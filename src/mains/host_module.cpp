// ascend-setup-host-X.Y.so: the host of one CPython minor, one file started
// two ways (launcher.hpp chooses):
// - embedded: the launcher loads the installation's libpython (RTLD_GLOBAL),
//   then this file, and calls ascend_setup_embedded_main(), which starts the
//   interpreter (EmbeddedPython);
// - as an extension module: an interpreter with no shared libpython (a
//   static build: manylinux, Debian's python3 without libpython3.X) runs the
//   launcher's bootstrap, which imports this file as `_ascend_setup_host`
//   and calls run(argv); EmbeddedPython then adopts the running interpreter.
// Either way the process ends here: run() exits instead of returning, as the
// embedded host does, so no Python teardown follows.
// ascend_setup.hooks imports the same file into the interpreter that runs
// setup.py (any front end's) and calls its hooks_* functions instead.
#include "base/launch/host_process.hpp"
#include "host/hooks.hpp"
#include "host/host.hpp"
#include "host/python/embedded_python.hpp"

#include <pybind11/stl.h>

#include <cstdio>
#include <cstdlib>

namespace {

std::string version_line(const char* way) {
  return "ascend-setup " ASCEND_SETUP_VERSION " (CPython " + ascend_setup::linked_python_version() +
         ", " + way + ")";
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int ascend_setup_embedded_main(int argc,
                                                                                 char** argv) {
  using namespace ascend_setup;
  return run_host_process(std::vector<std::string>(argv, argv + argc), version_line("embedded"),
                          run_host);
}

PYBIND11_MODULE(_ascend_setup_host, module) {
  // ascend_setup.hooks (python_shims/ascend_setup/hooks.py): the layer in the
  // interpreter that runs setup.py itself (host/hooks.hpp).
  module.def("hooks_init", &ascend_setup::set_hooks_error_type);
  module.def("hooks_prepare", &ascend_setup::hooks_prepare);
  module.def("hooks_activate", &ascend_setup::hooks_activate);
  module.def("run", [](const std::vector<std::string>& argv) {
    using namespace ascend_setup;
    const int code = run_host_process(argv, version_line("extension module"), run_host);
    std::fflush(nullptr);
    std::exit(code);
  });
}
