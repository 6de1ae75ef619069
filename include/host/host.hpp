// The host's main flow, the C++ counterpart of setup_ascend.py's main().
#pragma once

#include "base/launch/command_line.hpp"

namespace ascend_setup {

// Runs one invocation and returns the process exit code. Throws Error for
// failures outside Python code.
int run_host(const HostOptions& options);

}  // namespace ascend_setup
