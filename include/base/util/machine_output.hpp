// Machine output (--dump-kwargs' JSON, --patch-status' lines) alone on
// stdout: from construction on, file descriptor 1 is a copy of stderr, so
// whatever setup.py, Python or any child process prints goes to stderr; the
// machine output is written to the saved real stdout. The redirection lasts
// until the process ends (Python flushes its buffers at exit).
#pragma once

#include <string_view>

namespace ascend_setup {

class MachineOutput {
 public:
  MachineOutput();
  MachineOutput(const MachineOutput&) = delete;
  MachineOutput& operator=(const MachineOutput&) = delete;

  // Writes all of `text` to the real stdout, as shown (the secrets of its
  // URLs masked: shown_url.hpp); throws Error when it cannot.
  void write(std::string_view text) const;

 private:
  int fd_ = -1;
};

}  // namespace ascend_setup
