// The one place an Error becomes a message and an exit code: both mains (the
// launcher's and a host's) run their body through it.
#pragma once

#include <functional>

namespace ascend_setup {

// Runs `body`; an Error is logged and its exit code returned, a filesystem
// error is exit 3, anything else an internal error (exit_code::internal).
int run_guarded(const std::function<int()>& body);

}  // namespace ascend_setup
