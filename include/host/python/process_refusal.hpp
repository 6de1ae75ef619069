// --doctor writes nothing, yet loading upstream's setup.py may start
// processes that do (a 3.5 tree's BackendInstaller.prepare runs
// `git submodule update --init ascend` at import time, which writes
// .git/config). While a ProcessRefusal lives, every process start of Python
// code (subprocess, os.system, os.exec*, os.spawn*, os.posix_spawn*,
// os.fork*, pty.spawn) fails with FileNotFoundError as if the program were
// not installed (the failure upstream's code already tolerates), through a
// CPython audit hook; the refused commands are logged at info, in one line,
// when it ends.
#pragma once

namespace ascend_setup {

class ProcessRefusal {
 public:
  ProcessRefusal();  // needs the GIL
  ~ProcessRefusal();
  ProcessRefusal(const ProcessRefusal&) = delete;
  ProcessRefusal& operator=(const ProcessRefusal&) = delete;
};

}  // namespace ascend_setup
