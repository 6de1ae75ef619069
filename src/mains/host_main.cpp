// ascend-setup-host-X.Y-static: the host linked with an installation's
// static libpython (Debian's PGO build), exec'ed by the launcher (launcher.hpp)
// with the interpreter to pose as in the environment; run directly it
// resolves the interpreter itself.
#include "base/launch/host_process.hpp"
#include "host/host.hpp"
#include "host/python/embedded_python.hpp"

int main(int argc, char** argv) {
  using namespace ascend_setup;
  return run_host_process(std::vector<std::string>(argv, argv + argc),
                          "ascend-setup " ASCEND_SETUP_VERSION " (libpython " +
                              linked_python_version() + ", static)",
                          run_host);
}
