#include "host/python/python_children.hpp"

#include "base/process/stop_signals.hpp"

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace ascend_setup {

namespace {

constexpr const char* original_name = "_ascend_setup_original_init";
// Popen(args, bufsize, executable, stdin, stdout, stderr, preexec_fn, ...):
// from the 7th positional argument on, the caller chose its own set-up.
constexpr size_t own_setup_position = 6;

}  // namespace

void track_python_children() {
  py::object popen = py::module_::import("subprocess").attr("Popen");
  if (py::hasattr(popen, original_name)) {
    return;
  }
  // The original lives on the class, not in the closure: no Python object
  // outlives the interpreter inside a C++ capture.
  popen.attr(original_name) = popen.attr("__init__");
  popen.attr("__init__") = py::cpp_function(
      [](py::object self, py::args args, py::kwargs kwargs) {
        const bool own_setup = args.size() > own_setup_position ||
                               kwargs.contains("start_new_session") ||
                               kwargs.contains("process_group") ||
                               (kwargs.contains("preexec_fn") && !kwargs["preexec_fn"].is_none());
        if (!own_setup) {
          kwargs["start_new_session"] = true;
        }
        py::object original = self.get_type().attr(original_name);
        original(self, *args, **kwargs);
        if (!own_setup) {
          register_child_group(self.attr("pid").cast<int>());
        }
      },
      // Not named __init__: pybind11 would take it for a constructor of its own.
      py::is_method(popen), py::name("tracked_init"));
}

}  // namespace ascend_setup
