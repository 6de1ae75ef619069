// Runs a program to completion and collects its output: used by the host for
// short queries (an interpreter's version) and by the end-to-end tests.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH when it has no '/'
  std::optional<std::filesystem::path> cwd;
  std::map<std::string, std::optional<std::string>> env_changes;  // nullopt unsets
  std::string stdin_text;
  // The child's stdout and stderr go straight to this process's stderr (a
  // long build's progress, seen as it runs); `out` and `err` stay empty.
  bool stream_to_stderr = false;
};

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// The child runs in its own process group, registered for the stop signals
// (stop_signals.hpp). Throws Error when the program cannot be started at all,
// and the stop's Error when a stop signal came while it ran (after it ended).
ProcessResult run_process(const ProcessSpec& spec);

}  // namespace ascend_setup
