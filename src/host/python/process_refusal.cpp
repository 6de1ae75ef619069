#include "host/python/process_refusal.hpp"

#include "base/util/strings.hpp"

#include <pybind11/pybind11.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <string_view>

namespace py = pybind11;

namespace ascend_setup {

namespace {

bool refusing = false;  // guarded by the GIL
std::vector<std::string> refused_commands;

// The audit events of a process start, and the index of the event argument
// holding the command (-1: none, as for os.fork).
struct StartEvent {
  std::string_view name;
  int command_index;
};
constexpr StartEvent start_events[] = {
    {"subprocess.Popen", 1}, {"os.system", 0}, {"os.exec", 1},     {"os.spawn", 2},
    {"os.posix_spawn", 1},   {"os.fork", -1},  {"os.forkpty", -1}, {"pty.spawn", 0},
};

// Bytes (os.system's command, a bytes argv entry) as they are; anything else as str().
std::string text_of(py::handle value) {
  if (py::isinstance<py::bytes>(value)) {
    return value.cast<std::string>();
  }
  return py::str(value).cast<std::string>();
}

std::string describe(PyObject* args, int index) {
  if (index < 0 || !PyTuple_Check(args) || index >= PyTuple_GET_SIZE(args)) {
    return "a fork";
  }
  py::handle command = PyTuple_GET_ITEM(args, index);
  if (py::isinstance<py::list>(command) || py::isinstance<py::tuple>(command)) {
    std::string text;
    for (py::handle part : command) {
      text += (text.empty() ? "" : " ") + text_of(part);
    }
    return text;
  }
  return text_of(command);
}

int refuse_process_starts(const char* event, PyObject* args, void*) {
  if (!refusing) {
    return 0;
  }
  for (const StartEvent& start : start_events) {
    if (start.name != event) {
      continue;
    }
    std::string command;
    try {
      command = describe(args, start.command_index);
    } catch (py::error_already_set&) {
      PyErr_Clear();
      command = event;
    }
    spdlog::debug("--doctor starts no process: `{}` refused", command);
    refused_commands.push_back(command);
    PyObject* error = PyObject_CallFunction(
        PyExc_FileNotFoundError, "is", ENOENT,
        ("ascend-setup --doctor starts no process (" + command + ")").c_str());
    if (error) {
      PyErr_SetObject(PyExc_FileNotFoundError, error);
      Py_DECREF(error);
    }
    return -1;
  }
  return 0;
}

}  // namespace

ProcessRefusal::ProcessRefusal() {
  static const bool installed = [] {
    if (PySys_AddAuditHook(refuse_process_starts, nullptr) != 0) {
      throw py::error_already_set();
    }
    return true;
  }();
  (void)installed;
  refused_commands.clear();
  refusing = true;
}

ProcessRefusal::~ProcessRefusal() {
  refusing = false;
  if (!refused_commands.empty()) {
    spdlog::info("--doctor starts no process; not run: `{}`", join(refused_commands, "`, `"));
  }
}

}  // namespace ascend_setup
