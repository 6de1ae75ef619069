#include "host/hooks.hpp"

#include "base/jobs/job_limits.hpp"
#include "base/layer/environment.hpp"
#include "base/process/stop_signals.hpp"
#include "base/tree/run_start.hpp"
#include "base/util/error.hpp"
#include "base/util/log.hpp"
#include "base/util/system_error.hpp"
#include "host/python/embedded_python.hpp"
#include "host/setup_call.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// hooks.py's LayerError. A bare reference, never released: the interpreter
// is finalized before C++'s static destructors run.
PyObject* layer_error_type = nullptr;
// The wrapper setuptools.setup is bound to until setup() is called, so that
// a second activate() finds it (a reference held, as layer_error_type).
PyObject* pending_wrapper = nullptr;

void set_pending_wrapper(PyObject* wrapper) {
  Py_XINCREF(wrapper);
  Py_XDECREF(pending_wrapper);
  pending_wrapper = wrapper;
}

// One tree per process, as one setup.py runs per process; a second
// setup.py (another tree) starts its own.
struct Session {
  std::filesystem::path setup_py;
  SetupCall call;
  bool prepared = false;
};
std::optional<Session>& session() {
  static std::optional<Session> current;
  return current;
}

// One line on stderr (the exit code says the rest), then LayerError.
[[noreturn]] void raise_layer_error(const std::string& message, int code, Phase phase,
                                    bool logged = false) {
  flush_python_streams();
  if (!logged) {
    spdlog::error("{} (ascend_setup.hooks, while {})", message, phase_name(phase));
  }
  if (layer_error_type == nullptr) {
    throw std::runtime_error(message);
  }
  py::object error = py::reinterpret_borrow<py::object>(layer_error_type)(
      message, std::string(phase_name(phase)), code);
  PyErr_SetObject(layer_error_type, error.ptr());
  throw py::error_already_set();
}

// A stop signal came: every process of the build is ended, and the exit
// code is the command's, 128 + signal.
[[noreturn]] void raise_stopped(Phase phase) {
  stop_children();
  flush_python_streams();
  const std::string message = std::string("interrupted by SIG") + sigabbrev_np(stop_signal()) +
                              " while " + std::string(phase_name(phase)) +
                              ": its children were stopped";
  spdlog::error("{}", message);
  raise_layer_error(message, stopped_exit_code(), phase, true);
}

// The layer's failures as LayerError; a Python error of Python code (setup.py's,
// setuptools', a build tool's CalledProcessError) goes on as it is.
template <class Body>
py::object guarded(Phase& phase, Body&& body) {
  try {
    py::object result = body();
    if (stop_signal() != 0) {
      raise_stopped(phase);
    }
    return result;
  } catch (py::error_already_set& error) {
    if (layer_error_type != nullptr && error.matches(layer_error_type)) {
      throw;
    }
    if (stop_signal() != 0) {
      raise_stopped(phase);  // its KeyboardInterrupt (or distutils' "interrupted") replaced
    }
    if (const auto host_error = host_error_of(error)) {
      raise_layer_error(host_error->message, host_error->exit_code, phase);
    }
    throw;
  } catch (const Error& error) {
    if (stop_signal() != 0) {
      raise_stopped(phase);
    }
    raise_layer_error(error.what(), error.exit_code(), phase);
  } catch (const std::filesystem::filesystem_error& error) {
    const Error as_error = system_error(error);
    raise_layer_error(as_error.what(), as_error.exit_code(), phase);
  } catch (const std::exception& error) {
    raise_layer_error(std::string("internal error: ") + error.what(), exit_code::internal, phase);
  }
}

// Once per process: the logger (ASCEND_SETUP_LOG_LEVEL), the stop signals,
// the children's process groups, the error bridge.
void start_host_in_python() {
  static bool started = false;
  if (started) {
    return;
  }
  init_logging();
  // As the command's default level: through the environment registry.
  set_log_level(env_value(EnvVar::log_level, nullptr).value_or("info"));
  connect_host_to_python();
  started = true;
}

std::filesystem::path caller_setup_py(const py::dict& globals) {
  if (!globals.contains("__file__")) {
    throw Error(
        "prepare() and activate() are called by setup.py at module level; this caller's globals "
        "have no __file__",
        ErrorKind::usage);
  }
  const std::filesystem::path named(py::str(globals[py::str("__file__")]).cast<std::string>());
  std::error_code ec;
  const std::filesystem::path setup_py =
      std::filesystem::weakly_canonical(std::filesystem::absolute(named), ec);
  if (ec || !std::filesystem::is_regular_file(setup_py)) {
    throw Error("the setup.py that called the hook, " + named.string() + ", is not a file",
                ErrorKind::bad_input);
  }
  return setup_py;
}

// The session of the calling setup.py's tree, started on its first hook.
Session& session_of(const py::dict& globals) {
  start_host_in_python();
  const std::filesystem::path setup_py = caller_setup_py(globals);
  std::optional<Session>& current = session();
  if (current && current->setup_py == setup_py) {
    return *current;
  }
  const std::filesystem::path root = setup_py.parent_path();
  std::shared_ptr<const Profile> profile = start_on_tree(root, setup_py, {});
  sync_os_environ();  // the Ascend defaults, set by setenv
  SetupCall call;
  call.tree_root = root;
  call.profile = std::move(profile);
  call.restore_command = "python -m ascend_setup --restore-sources";
  current.emplace(Session{setup_py, std::move(call), false});
  spdlog::debug("ascend_setup.hooks: the tree {} (its setup.py called the hooks)", root.string());
  return *current;
}

std::vector<std::string> setup_arguments() {
  std::vector<std::string> args;
  const py::list argv = py::module_::import("sys").attr("argv");
  for (size_t i = 1; i < argv.size(); ++i) {
    args.push_back(py::str(argv[i]).cast<std::string>());
  }
  return args;
}

void prepare_session(Session& current) {
  if (current.prepared) {
    spdlog::debug("ascend_setup.hooks: prepare() ran already for this tree");
    return;
  }
  prepare_build(current.call.tree_root, *current.call.profile, compiles(setup_arguments()));
  sync_os_environ();  // MAX_JOBS and the link jobs where unset
  current.prepared = true;
}

// The object the overrides work on: setup.py's module when its globals are a
// module's (`python3 setup.py`, pip's legacy call), else an object whose
// attributes are those globals (setuptools.build_meta executes setup.py in
// a plain dict).
py::object setup_namespace(const py::dict& globals) {
  py::object modules = py::module_::import("sys").attr("modules");
  for (const char* name : {"__main__", "setup"}) {
    if (modules.contains(name)) {
      py::object module = modules[name];
      if (py::hasattr(module, "__dict__") && py::object(module.attr("__dict__")).is(globals)) {
        return module;
      }
    }
  }
  py::object type = py::module_::import("builtins").attr("type");
  py::object namespace_class = type(
      "SetupGlobals", py::make_tuple(py::module_::import("builtins").attr("object")), py::dict());
  py::object instance = namespace_class();
  py::setattr(instance, "__dict__", globals);
  return instance;
}

// What the wrapper holds: setuptools.setup as activate() found it, and the
// globals of the setup.py that called activate().
struct Activation {
  py::object real_setup;
  py::dict globals;
  bool called = false;
};

py::object call_setup_with_layer(Activation& activation, const py::kwargs& kwargs) {
  Phase phase = Phase::patching;
  return guarded(phase, [&]() -> py::object {
    if (activation.called) {
      throw Error("setup.py called setup() a second time after activate(): the layer applies once",
                  ErrorKind::upstream_contract);
    }
    activation.called = true;
    // From here on setuptools.setup is the real one again.
    py::module_::import("setuptools").attr("setup") = activation.real_setup;
    set_pending_wrapper(nullptr);
    Session& current = session_of(activation.globals);
    const py::dict rewritten =
        apply_layer(current.call, setup_namespace(activation.globals), py::dict(kwargs));
    phase = Phase::calling_setup;
    py::object dist = build_with_layer(current.call, activation.real_setup, rewritten);
    activation.globals[py::str("dist")] = dist;
    return dist;
  });
}

}  // namespace

void set_hooks_error_type(const py::object& type) {
  if (layer_error_type == nullptr) {
    layer_error_type = type.inc_ref().ptr();
  }
}

void hooks_prepare(const py::dict& caller_globals) {
  Phase phase = Phase::preparing;
  guarded(phase, [&] {
    prepare_session(session_of(caller_globals));
    return py::none();
  });
}

void hooks_activate(const py::dict& caller_globals) {
  Phase phase = Phase::preparing;
  guarded(phase, [&] {
    Session& current = session_of(caller_globals);
    prepare_session(current);  // a setup.py that calls only activate()
    py::module_ setuptools = py::module_::import("setuptools");
    py::object bound = setuptools.attr("setup");
    if (pending_wrapper != nullptr && bound.ptr() == pending_wrapper) {
      // activate() ran already and setup() has not: the same wrapper, or
      // the second would take the first for the real setup (the layer twice).
      caller_globals[py::str("setup")] = bound;
      spdlog::debug("ascend_setup.hooks: activate() ran already; setup() stays rebound once");
      return py::none();
    }
    auto activation = std::make_shared<Activation>();
    activation->real_setup = bound;
    activation->globals = caller_globals;
    py::cpp_function wrapper(
        [activation](const py::args& args, const py::kwargs& kwargs) {
          if (!args.empty()) {
            throw py::type_error("setup() takes keyword arguments only");
          }
          return call_setup_with_layer(*activation, kwargs);
        },
        py::name("setup"),
        py::doc("ascend_setup.hooks: setuptools.setup with ascend-setup's native layer"));
    caller_globals[py::str("setup")] = wrapper;
    setuptools.attr("setup") = wrapper;
    set_pending_wrapper(wrapper.ptr());
    spdlog::debug("ascend_setup.hooks: setup() rebound for {}", current.setup_py.string());
    return py::none();
  });
}

}  // namespace ascend_setup
