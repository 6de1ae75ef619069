#include "host/python/embedded_python.hpp"

#include "base/launch/interpreter.hpp"
#include "base/launch/launcher.hpp"
#include "base/layer/environment.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/error.hpp"
#include "base/util/log.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/system_error.hpp"
#include "host/python/python_children.hpp"

#include <pybind11/embed.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// The Python class an Error becomes while it crosses Python code (an override
// called by setuptools), so that main() still sees its message and exit code.
PyObject* host_error_type = nullptr;

void set_host_error(const std::string& message, int code) {
  py::object instance = py::reinterpret_borrow<py::object>(host_error_type)(message);
  instance.attr("exit_code") = code;
  PyErr_SetObject(host_error_type, instance.ptr());
}

void install_error_bridge() {
  if (host_error_type != nullptr) {
    return;
  }
  host_error_type = PyErr_NewException("ascend_setup.HostError", PyExc_RuntimeError, nullptr);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) {
        std::rethrow_exception(thrown);
      }
    } catch (const Error& error) {
      set_host_error(error.what(), error.exit_code());
    } catch (const std::filesystem::filesystem_error& error) {
      // A file the host reads or writes (a tool to copy, the patch record):
      // the path and the reason say it all, no traceback needed.
      const Error as_error = system_error(error);
      set_host_error(as_error.what(), as_error.exit_code());
    }
  });
}

// A stop signal becomes Python's KeyboardInterrupt (async-signal-safe).
void interrupt_python() { PyErr_SetInterrupt(); }

// `text` on sys.stderr as shown (util/shown_url.hpp); any str, lone
// surrogates included, round-trips.
void write_shown_to_stderr(const py::object& text) {
  const std::string bytes = py::bytes(text.attr("encode")("utf-8", "surrogatepass"));
  const py::object shown = py::bytes(shown_text(bytes)).attr("decode")("utf-8", "surrogatepass");
  py::module_::import("sys").attr("stderr").attr("write")(shown);
}

void print_traceback(py::error_already_set& error) {
  py::object trace = error.trace() ? error.trace() : py::none();
  const py::object lines =
      py::module_::import("traceback").attr("format_exception")(error.type(), error.value(), trace);
  write_shown_to_stderr(py::str("").attr("join")(lines));
}

// The embedded start: the interpreter configured as `interpreter` would be
// run, with setup.py's argv.
void start_interpreter(const Interpreter& interpreter,
                       const std::vector<std::string>& argv_strings) {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;               // argv is setup.py's, not Python's
  config.install_signal_handlers = 1;  // Ctrl-C raises KeyboardInterrupt
  // sys.executable must be a real interpreter: upstream hands it to CMake as
  // Python3_EXECUTABLE and setuptools spawns it. It also locates a venv.
  PyStatus status =
      PyConfig_SetBytesString(&config, &config.executable, interpreter.executable.c_str());
  if (!PyStatus_Exception(status)) {
    status = PyConfig_SetBytesString(&config, &config.program_name, interpreter.executable.c_str());
  }
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    throw Error("cannot configure the embedded Python interpreter", ErrorKind::internal);
  }
  std::vector<const char*> argv;
  for (const auto& arg : argv_strings) {
    argv.push_back(arg.c_str());
  }
  try {
    py::initialize_interpreter(&config, static_cast<int>(argv.size()), argv.data(), false);
  } catch (const std::exception& error) {
    throw Error(std::string("cannot start the embedded Python interpreter: ") + error.what(),
                ErrorKind::bad_input);
  }
}

// The extension module's start: the interpreter runs already (the launcher
// exec'ed it with its bootstrap, which took '' off sys.path), started from
// the environment as it was before the host set the Ascend defaults and took
// its hand-off variables out. What the embedded start gets from PyConfig is
// made true here: setup.py's argv, os.environ equal to the process's
// environment, and sys.stdout buffered as it would be had it been opened
// on today's file descriptor 1 (MachineOutput may have pointed it at stderr).
void adopt_running_interpreter(const std::vector<std::string>& argv_strings) {
  py::list argv;
  for (const auto& arg : argv_strings) {
    argv.append(py::reinterpret_steal<py::object>(
        PyUnicode_DecodeFSDefaultAndSize(arg.data(), static_cast<Py_ssize_t>(arg.size()))));
  }
  py::module_ sys = py::module_::import("sys");
  sys.attr("argv") = argv;
  sync_os_environ();
  py::object out = sys.attr("stdout");
  // An unbuffered stdout (-u, PYTHONUNBUFFERED) is write-through; it stays so.
  if (!out.is_none() && py::hasattr(out, "reconfigure") &&
      !py::bool_(py::getattr(out, "write_through", py::bool_(true)))) {
    out.attr("reconfigure")(py::arg("line_buffering") = ::isatty(1) == 1);
  }
}

}  // namespace

void sync_os_environ() {
  py::module_ os = py::module_::import("os");
  py::object environb = os.attr("environb");
  py::dict now;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const size_t equals = text.find('=');
    if (equals != std::string_view::npos && equals > 0) {
      now[py::bytes(text.substr(0, equals))] = py::bytes(text.substr(equals + 1));
    }
  }
  // Assignments and deletions through os.environb call putenv/unsetenv with
  // what the process's environment already says: only Python's copy changes.
  for (const py::handle key : py::list(environb.attr("keys")())) {
    if (!now.contains(key)) {
      environb.attr("__delitem__")(key);
    }
  }
  for (const auto& [key, value] : now) {
    if (!environb.attr("get")(key).equal(value)) {
      environb.attr("__setitem__")(key, value);
    }
  }
}

void connect_host_to_python() {
  install_error_bridge();
  // Every stop signal goes through our handler, which raises Python's
  // KeyboardInterrupt through the SIGINT entry of Python's own table (Python
  // leaves that entry empty when SIGINT had a handler at start-up).
  py::module_ signal = py::module_::import("signal");
  py::object sigint = signal.attr("SIGINT");
  if (!signal.attr("getsignal")(sigint).is(signal.attr("SIG_IGN"))) {
    signal.attr("signal")(sigint, signal.attr("default_int_handler"));
  }
  install_stop_signal_handlers();
  set_stop_hook(interrupt_python);
  track_python_children();
}

std::optional<HostErrorInfo> host_error_of(py::error_already_set& error) {
  if (host_error_type == nullptr || !error.matches(host_error_type)) {
    return std::nullopt;
  }
  return HostErrorInfo{py::str(error.value()).cast<std::string>(),
                       error.value().attr("exit_code").cast<int>()};
}

std::string linked_python_version() {
  return std::to_string(PY_MAJOR_VERSION) + "." + std::to_string(PY_MINOR_VERSION);
}

Interpreter choose_interpreter(const std::optional<std::filesystem::path>& explicit_python) {
  // Started by the launcher: it already resolved the interpreter and chose
  // this host for its minor.
  if (auto executable = handoff_env(interpreter_env); executable && !executable->empty()) {
    ::unsetenv(interpreter_env);
    return {*executable, linked_python_version()};
  }
  const InterpreterInfo info = resolve_interpreter(explicit_python);
  if (info.version != linked_python_version() || info.free_threaded ||
      info.implementation != "cpython") {
    throw Error(info.origin + " names " + info.executable.string() + ", a " + info.implementation +
                    " " + info.version + (info.free_threaded ? " (free-threaded)" : "") +
                    ", but this host embeds CPython " + linked_python_version() +
                    ": run it through the ascend-setup launcher",
                ErrorKind::bad_input);
  }
  return {info.executable, info.version};
}

EmbeddedPython::EmbeddedPython(const Interpreter& interpreter, const std::filesystem::path& script,
                               const std::vector<std::string>& args,
                               const std::filesystem::path& path0) {
  std::vector<std::string> argv_strings{script.string()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  const bool running = Py_IsInitialized() != 0;
  if (running) {
    adopt_running_interpreter(argv_strings);
  } else {
    start_interpreter(interpreter, argv_strings);
  }
  PyGC_Disable();  // until resume_garbage_collection()
  py::module_::import("sys").attr("path").attr("insert")(0, path0.string());
  connect_host_to_python();
  spdlog::debug("{} CPython {} as {}", running ? "running as an extension module of" : "embedded",
                linked_python_version(), interpreter.executable.string());
}

EmbeddedPython::~EmbeddedPython() {
  set_stop_hook(nullptr);
  // The process exits right after this. What a Python program can observe of
  // finalization runs, in Py_FinalizeEx's order: non-daemon threads joined,
  // atexit handlers (logging's flush, multiprocessing's and tempfile's
  // clean-ups), streams flushed. The teardown of every module and object,
  // which only frees memory the exit frees anyway, is skipped: it was about a
  // tenth of a --dump-kwargs. The GIL stays with this thread, so daemon
  // threads stay parked as finalization parks them.
  PyGC_Disable();  // collections now would only free what the exit frees
  PyErr_Clear();   // an error left by an unwinding C++ exception was reported already
  // threading only when imported (as Py_FinalizeEx does), atexit always.
  PyObject* threading = PyImport_GetModule(py::str("threading").ptr());
  PyErr_Clear();
  for (PyObject* module : {threading, PyImport_ImportModule("atexit")}) {
    const char* function = module == threading ? "_shutdown" : "_run_exitfuncs";
    PyObject* result = module ? PyObject_CallMethod(module, function, nullptr) : nullptr;
    if (module && !result) {
      PyErr_WriteUnraisable(module);
    }
    Py_XDECREF(result);
    Py_XDECREF(module);
    PyErr_Clear();
  }
  flush_python_streams();
  install_stop_signal_handlers();  // Python's SIGINT handler would only set a flag from now on
}

void resume_garbage_collection() { PyGC_Enable(); }

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::preparing:
      return "preparing the build";
    case Phase::loading_setup_py:
      return "loading setup.py";
    case Phase::patching:
      return "patching the setup module";
    case Phase::calling_setup:
      return "running setup()";
  }
  return "";
}

int report_python_error(py::error_already_set& error, Phase phase) {
  // A stop signal's KeyboardInterrupt still pending (the stop ended native
  // work, whose error is reported here) is dropped now, rather than raised by
  // the first Python code of the report and escaping it.
  if (PyErr_CheckSignals() != 0) {
    PyErr_Clear();
  }
  const bool traceback_always = debug_logging();
  if (error.matches(PyExc_SystemExit)) {
    // As `python setup.py` exits: None -> 0, an int -> itself, else the message and 1.
    py::object code = error.value().attr("code");
    if (traceback_always) {
      print_traceback(error);
    }
    if (code.is_none()) {
      return 0;
    }
    if (py::isinstance<py::int_>(code)) {
      return code.cast<int>();
    }
    write_shown_to_stderr(py::str(code) + py::str("\n"));
    flush_python_streams();
    return 1;
  }
  if (error.matches(PyExc_KeyboardInterrupt)) {
    if (traceback_always) {
      print_traceback(error);
    }
    flush_python_streams();
    spdlog::error("interrupted while {}", phase_name(phase));
    return stopped_exit_code();
  }
  if (const auto host_error = host_error_of(error)) {
    if (traceback_always) {
      print_traceback(error);
    }
    flush_python_streams();
    spdlog::error("{}", host_error->message);
    return host_error->exit_code;
  }
  // A build tool that failed (cmake, ninja, ...): its own output says why;
  // a traceback through setuptools would only bury it.
  py::object called_process_error = py::module_::import("subprocess").attr("CalledProcessError");
  if (error.matches(called_process_error)) {
    if (traceback_always) {
      print_traceback(error);
    }
    flush_python_streams();
    py::object command = error.value().attr("cmd");
    std::string text = py::str(command).cast<std::string>();
    if (py::isinstance<py::list>(command) || py::isinstance<py::tuple>(command)) {
      text =
          py::str(py::module_::import("shlex").attr("join")(
                      py::module_::import("builtins").attr("map")(py::str().get_type(), command)))
              .cast<std::string>();
    }
    spdlog::error("`{}` exited with {} while {} (its output is above)", text,
                  py::str(error.value().attr("returncode")).cast<std::string>(), phase_name(phase));
    return exit_code::python_error;
  }
  print_traceback(error);
  flush_python_streams();
  spdlog::error("Python raised {} while {} (the traceback above shows where)",
                py::str(error.type().attr("__name__")).cast<std::string>(), phase_name(phase));
  return exit_code::python_error;
}

void flush_python_streams() {
  py::module_ sys = py::module_::import("sys");
  for (const char* name : {"stdout", "stderr"}) {
    py::object stream = sys.attr(name);
    if (!stream.is_none()) {
      try {
        stream.attr("flush")();
      } catch (py::error_already_set&) {
      }
    }
  }
}

}  // namespace ascend_setup
