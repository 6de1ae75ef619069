#include "ascend_setup/captured_setup.hpp"

#include "ascend_setup/error.hpp"
#include "ascend_setup/text_file.hpp"

#include <spdlog/spdlog.h>

#include <memory>
#include <utility>

namespace py = pybind11;

namespace ascend_setup {

namespace {

struct Calls {
  int count = 0;
  py::dict kwargs;
};

// Puts the real setuptools.setup back however setup.py ended.
class RestoreAttribute {
 public:
  RestoreAttribute(py::object owner, const char* name, py::object value)
      : owner_(std::move(owner)), name_(name), value_(std::move(value)) {}
  ~RestoreAttribute() {
    if (PyObject_SetAttrString(owner_.ptr(), name_, value_.ptr()) != 0) {
      PyErr_Clear();
    }
  }
  RestoreAttribute(const RestoreAttribute&) = delete;
  RestoreAttribute& operator=(const RestoreAttribute&) = delete;

 private:
  py::object owner_;
  const char* name_;
  py::object value_;
};

py::bytes read_source(const std::filesystem::path& path) {
  auto text = read_text_file(path);
  if (!text) {
    throw Error("cannot read " + path.string());
  }
  return py::bytes(*text);
}

}  // namespace

CapturedSetup capture_setup(const std::filesystem::path& setup_py) {
  py::module_ setuptools = py::module_::import("setuptools");
  py::object real_setup = setuptools.attr("setup");

  // Why intercept: setup.py defines all its functions and classes on import,
  // and its one setup() call hands us the kwargs to rewrite. Upstream does
  // `from setuptools import setup`, so the swap must precede execution.
  auto calls = std::make_shared<Calls>();
  py::cpp_function capture(
      [calls](const py::args& args, const py::kwargs& kwargs) {
        if (!args.empty()) {
          throw py::type_error("setup() takes keyword arguments only");
        }
        if (++calls->count == 2) {
          spdlog::warn("setup.py calls setup() more than once; the last call's arguments are used");
        }
        calls->kwargs = py::dict(kwargs);
      },
      py::name("setup"), py::doc("ascend-setup: records setup()'s keyword arguments"));

  py::object code;
  py::module_ module;
  {
    RestoreAttribute restore(setuptools, "setup", real_setup);
    setuptools.attr("setup") = capture;

    py::module_ builtins = py::module_::import("builtins");
    // As `python setup.py` runs it: `__main__` with __file__ and no spec, so
    // that `if __name__ == "__main__"` holds and multiprocessing's spawn
    // start method re-runs this file in its children as `__mp_main__`.
    module = py::reinterpret_borrow<py::module_>(
        py::module_::import("types").attr("ModuleType")("__main__"));
    module.attr("__file__") = setup_py.string();
    module.attr("__builtins__") = builtins;
    module.attr("__cached__") = py::none();
    py::object modules = py::module_::import("sys").attr("modules");
    modules["__main__"] = module;
    modules["setup"] = module;

    // compile() honours a coding cookie or BOM, as `python setup.py` does;
    // no .pyc is written into the user's tree.
    code = builtins.attr("compile")(read_source(setup_py), setup_py.string(), "exec",
                                    py::arg("dont_inherit") = true);
    py::object globals = module.attr("__dict__");
    PyObject* result = PyEval_EvalCode(code.ptr(), globals.ptr(), globals.ptr());
    if (result == nullptr) {
      throw py::error_already_set();
    }
    Py_DECREF(result);
  }

  if (calls->count == 0) {
    throw Error(setup_py.string() +
                    " never called setuptools.setup(): ascend-setup needs upstream's setup.py, "
                    "whose last statement is setup(...)",
                exit_code::upstream_mismatch);
  }
  // The capturing function stays reachable from setup.py's globals; kwargs
  // (whose cmdclass points back at those globals) must not stay in its C++
  // closure, where Python's cycle collector cannot see the cycle: a leak.
  py::dict kwargs = std::exchange(calls->kwargs, py::dict());
  return {module, kwargs, real_setup};
}

}  // namespace ascend_setup
