// ascend-setup: the launcher (no libpython). Parses the host command line
// (so a usage error is reported before any interpreter is looked at), then
// execs the host built for the interpreter's minor (see launcher.hpp). Stop
// signals keep their default action here: the exec follows at once, and the
// host installs its own handlers.
#include "ascend_setup/command_line.hpp"
#include "ascend_setup/launcher.hpp"
#include "ascend_setup/log.hpp"
#include "ascend_setup/main_guard.hpp"

int main(int argc, char** argv) {
  using namespace ascend_setup;
  init_logging();
  return run_guarded([&] {
    const std::vector<std::string> args(argv, argv + argc);
    const HostOptions options = parse_command_line(args);
    set_log_level(options.log_level);
    return launch(options, args);
  });
}
