// ascend-setup: the Ascend build entry of triton-ascend (see README.md).
#include "ascend_setup/command_line.hpp"
#include "ascend_setup/embedded_python.hpp"
#include "ascend_setup/error.hpp"
#include "ascend_setup/host.hpp"
#include "ascend_setup/log.hpp"
#include "ascend_setup/stop_signals.hpp"

#include <cstring>
#include <filesystem>
#include <iostream>

namespace {

int run(int argc, char** argv) {
  using namespace ascend_setup;
  try {
    const HostOptions options = parse_command_line(std::vector<std::string>(argv, argv + argc));
    set_log_level(options.log_level);
    if (options.help) {
      std::cout << options.help_text;
      return exit_code::ok;
    }
    if (options.host_version) {
      std::cout << "ascend-setup " << ASCEND_SETUP_VERSION << " (libpython "
                << linked_python_version() << ", default interpreter "
                << ASCEND_SETUP_PYTHON_EXECUTABLE << ")\n";
      return exit_code::ok;
    }
    return run_host(options);
  } catch (const Error& error) {
    spdlog::error("{}", error.what());
    return error.exit_code();
  } catch (const std::filesystem::filesystem_error& error) {
    spdlog::error("{}", error.what());
    return exit_code::bad_input;
  } catch (const std::exception& error) {
    spdlog::error("internal error: {}", error.what());
    return exit_code::python_error;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ascend_setup;
  init_logging();
  install_stop_signal_handlers();
  const int code = run(argc, argv);
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
