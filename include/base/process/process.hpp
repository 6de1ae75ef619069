// Runs a program to completion and collects its output: used by the host for
// short queries (an interpreter's version) and by the end-to-end tests.
#pragma once

#include "base/util/error.hpp"

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

// The program could not be started at all: `error_number` is posix_spawn's
// (not_found(): no such program on PATH, or no such file).
class SpawnError : public Error {
 public:
  SpawnError(const std::string& program, int error_number);
  int error_number() const noexcept { return error_number_; }
  bool not_found() const noexcept;

 private:
  int error_number_;
};

// The child runs in its own process group, registered for the stop signals
// (stop_signals.hpp). Throws SpawnError when the program cannot be started at
// all, Error for a failure around it (a pipe), and the stop's Error when a
// stop signal came while it ran (after it ended).
ProcessResult run_process(const ProcessSpec& spec);

}  // namespace ascend_setup
