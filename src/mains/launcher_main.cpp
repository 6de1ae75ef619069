// ascend-setup: the launcher (no libpython). Parses the host command line
// (so a usage error is reported before any interpreter is looked at), then
// starts the host module built for the interpreter's minor, or execs
// ascend-setup-patches for the patch options (see launcher.hpp). Stop
// signals are blocked first thing: one that arrives now stays pending across
// the exec, and the host handles it as soon as its handlers exist (exit 128 +
// signal, nothing done). Children the launcher runs get an empty mask.
#include "base/launch/command_line.hpp"
#include "base/launch/launcher.hpp"
#include "base/launch/main_guard.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/log.hpp"

#include <csignal>
#include <cstring>

int main(int argc, char** argv) {
  using namespace ascend_setup;
  block_stop_signals();
  init_logging();
  const int code = run_guarded([&] {
    const std::vector<std::string> args(argv, argv + argc);
    const HostOptions options = parse_command_line(args);
    set_log_level(options.log_level);
    return launch(options, args);
  });
  // No exec (an error, --help): a stop that came meanwhile still decides.
  if (const int number = pending_stop_signal(); number != 0) {
    spdlog::error("interrupted by SIG{}", sigabbrev_np(number));
    return 128 + number;
  }
  return code;
}
