// ascend-setup-host-X.Y: the host for one CPython minor, exec'ed by the
// launcher (main.cpp) with the interpreter to pose as in the environment;
// run directly it resolves the interpreter itself.
#include "base/launch/command_line.hpp"
#include "base/launch/launcher.hpp"
#include "base/launch/main_guard.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/error.hpp"
#include "base/util/log.hpp"
#include "host/host.hpp"
#include "host/python/embedded_python.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  using namespace ascend_setup;
  init_logging();
  install_stop_signal_handlers();
  // The launcher pointed LD_LIBRARY_PATH at this interpreter's libpython;
  // the build tools this process starts get the user's value back.
  if (auto saved = handoff_env(saved_library_path_env)) {
    if (saved->empty()) {
      ::unsetenv("LD_LIBRARY_PATH");
    } else {
      ::setenv("LD_LIBRARY_PATH", saved->c_str() + 1, 1);
    }
    ::unsetenv(saved_library_path_env);
  }
  const int code = run_guarded([&] {
    // A stop that came before the handlers (pending from the launcher): exit
    // 128 + signal before anything is done.
    throw_if_stopped();
    const HostOptions options = parse_command_line(std::vector<std::string>(argv, argv + argc));
    set_log_level(options.log_level);
    if (options.help) {
      std::cout << options.help_text;
      return exit_code::ok;
    }
    if (options.host_version) {
      std::cout << "ascend-setup " << ASCEND_SETUP_VERSION << " (libpython "
                << linked_python_version() << ")\n";
      return exit_code::ok;
    }
    return run_host(options);
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
