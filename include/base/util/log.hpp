// Logging for the host: everything goes to stderr (stdout is reserved for
// machine output such as --dump-kwargs and for setup.py's own output). Every
// line is shown with its URLs' secrets masked (shown_url.hpp).
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace ascend_setup {

// Creates the stderr logger and makes it spdlog's default. Idempotent.
void init_logging();

// Accepts trace|debug|info|warn|error. Throws Error(usage) on another word.
void set_log_level(const std::string& level);

// True when --log-level is debug or trace (tracebacks are then always shown).
bool debug_logging();

}  // namespace ascend_setup
