// The embedded CPython: which interpreter it stands for, how it is started
// (PyConfig, never a Python-level bootstrap script), and how a Python error
// becomes the host's exit code.
#pragma once

#include <pybind11/pybind11.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

// The Python interpreter the embedded one poses as: sys.executable, the
// prefix (a venv's included) and site-packages come from it.
struct Interpreter {
  std::filesystem::path executable;
  std::string version;  // "major.minor"
};

// The launcher's choice ($ASCEND_SETUP_INTERPRETER, then removed), else
// resolve_interpreter() (--python, $VIRTUAL_ENV, python3 on PATH). Throws
// Error when it is missing or is not a CPython of the linked minor.
Interpreter choose_interpreter(const std::optional<std::filesystem::path>& explicit_python);

// The major.minor of the linked libpython, e.g. "3.11".
std::string linked_python_version();

// Starts the interpreter, or adopts it when it runs already (the host module
// imported by a static interpreter: argv, os.environ and stdout's buffering
// made what the start would have made), and ends its use. sys.argv = [script, args...],
// sys.path[0] = path0; SIGINT raises KeyboardInterrupt. Made once per
// process, destroyed right before the process exits: the destructor joins
// non-daemon threads, runs atexit handlers and flushes the streams, but
// leaves the interpreter's objects to the exit (no Py_FinalizeEx teardown).
// The cyclic garbage collector is off until resume_garbage_collection().
class EmbeddedPython {
 public:
  EmbeddedPython(const Interpreter& interpreter, const std::filesystem::path& script,
                 const std::vector<std::string>& args, const std::filesystem::path& path0);
  ~EmbeddedPython();
  EmbeddedPython(const EmbeddedPython&) = delete;
  EmbeddedPython& operator=(const EmbeddedPython&) = delete;
};

// Python's cyclic garbage collector is off from the interpreter's start
// (EmbeddedPython's constructor) until this call, and again in the
// destructor: starting up and executing setup.py allocate hundreds of
// thousands of objects, almost none of them garbage, and every collection
// walks them all (a tenth of a --dump-kwargs). The host turns it on right
// before setup() builds.
void resume_garbage_collection();

// What the host adds to an interpreter it runs in, started or adopted
// (EmbeddedPython) or imported into by ascend_setup.hooks: the bridge that
// carries an Error through Python code (ascend_setup.HostError), the stop
// signals' handlers raising KeyboardInterrupt, subprocess's children in
// their own process groups. Each part is installed once per process.
void connect_host_to_python();

// os.environ made equal to the process's environment, after the host's
// setenv/unsetenv (the Ascend defaults, the job counts), which Python's copy
// does not see.
void sync_os_environ();

// An Error that crossed Python code: its message and exit code.
struct HostErrorInfo {
  std::string message;
  int exit_code;
};
std::optional<HostErrorInfo> host_error_of(pybind11::error_already_set& error);

// Where a run was when Python raised: named in the one-line error.
enum class Phase { preparing, loading_setup_py, patching, calling_setup };
std::string_view phase_name(Phase phase);

// Reports a Python exception the way `python setup.py` would and returns the
// exit code: SystemExit(n) -> n (its message printed, no traceback);
// KeyboardInterrupt -> 130; an ascend_setup Error raised through Python ->
// its own message and code; anything else -> traceback, one line naming the
// phase, 1. Tracebacks are always shown at --log-level debug.
int report_python_error(pybind11::error_already_set& error, Phase phase);

// Flushes sys.stdout and sys.stderr (before the host writes to stdout itself).
void flush_python_streams();

}  // namespace ascend_setup
