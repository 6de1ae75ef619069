#include "base/launch/host_process.hpp"

#include "base/launch/main_guard.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/error.hpp"
#include "base/util/log.hpp"

#include <spdlog/spdlog.h>

#include <cstring>
#include <iostream>

namespace ascend_setup {

int run_host_process(const std::vector<std::string>& argv, const std::string& version_line,
                     const HostRun& run) {
  init_logging();
  install_stop_signal_handlers();
  const int code = run_guarded([&] {
    // A stop that came before the handlers (pending from the launcher): exit
    // 128 + signal before anything is done.
    throw_if_stopped();
    const HostOptions options = parse_command_line(argv);
    set_log_level(options.log_level);
    if (options.help) {
      std::cout << options.help_text << std::flush;
      return exit_code::ok;
    }
    if (options.host_version) {
      std::cout << version_line << "\n" << std::flush;
      return exit_code::ok;
    }
    return run(options);
  });
  if (stop_signal() != 0) {
    // Whatever the unwinding reported: nothing of the run keeps running,
    // and the exit code tells which signal stopped it.
    stop_children();
    if (code != stopped_exit_code()) {
      spdlog::error("interrupted by SIG{}: its children were stopped", sigabbrev_np(stop_signal()));
    }
    return stopped_exit_code();
  }
  return code;
}

}  // namespace ascend_setup
