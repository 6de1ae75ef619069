// ascend-setup-patches: the patch options (--apply-patches, --patch-status,
// --restore-sources), which need no Python. The launcher execs it from the
// hosts' directory with its own command line, so that the launcher links
// none of what a run on a tree needs (launcher.hpp). Stop signals stay
// blocked across that exec: one that came meanwhile is handled as soon as
// the handlers exist (exit 128 + signal, nothing done), as in a host.
#include "base/launch/host_process.hpp"
#include "base/tree/run_start.hpp"

#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace ascend_setup;
  return run_host_process(std::vector<std::string>(argv, argv + argc), "", run_patch_command);
}
