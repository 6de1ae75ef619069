// The host process's main, the same for every start: the host module
// embedded by the launcher or imported by a static interpreter
// (src/mains/host_module.cpp), and the launcher itself for
// the commands that need no Python. Logging, the stop signals' handlers (then
// unblocked: a signal pending from the launcher is handled before anything is
// done), the command line, --help, then `run`; a stop decides the exit code
// (128 + signal) and ends every child.
#pragma once

#include "base/launch/command_line.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ascend_setup {

using HostRun = std::function<int(const HostOptions&)>;

// argv[0] is the program's name. `version_line` answers --host-version.
int run_host_process(const std::vector<std::string>& argv, const std::string& version_line,
                     const HostRun& run);

}  // namespace ascend_setup
