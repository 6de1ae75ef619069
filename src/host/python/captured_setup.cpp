#include "host/python/captured_setup.hpp"

#include "base/util/error.hpp"
#include "base/util/whole_file.hpp"

#include <marshal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

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

// The interpreter's bytecode magic number, as the 4 bytes a .pyc opens with.
std::string magic_bytes() {
  const long magic = PyImport_GetMagicNumber();
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) {
    bytes[i] = static_cast<char>((magic >> (8 * i)) & 0xff);
  }
  return bytes;
}

// A cache entry: the magic number, the 8-byte SipHash of setup.py's path and
// source (`_imp.source_hash`, what Python's hash-checked .pyc files hold:
// PEP 552), then the marshalled code. The path is part of the key because the
// code object carries it (tracebacks, __file__-relative lookups).
std::string cache_header(const std::string& source, const std::filesystem::path& setup_py) {
  std::string keyed = setup_py.string();
  keyed.push_back('\0');
  keyed += source;
  const py::bytes hash =
      py::module_::import("_imp").attr("source_hash")(PyImport_GetMagicNumber(), py::bytes(keyed));
  return magic_bytes() + std::string(hash);
}

py::object cached_code(const std::filesystem::path& cache, const std::string& header) {
  const auto entry = read_whole_file(cache);
  if (!entry || entry->compare(0, header.size(), header) != 0) {
    return py::none();
  }
  PyObject* code = PyMarshal_ReadObjectFromString(
      entry->data() + header.size(), static_cast<Py_ssize_t>(entry->size() - header.size()));
  if (code == nullptr || !PyCode_Check(code)) {
    Py_XDECREF(code);
    PyErr_Clear();
    return py::none();
  }
  return py::reinterpret_steal<py::object>(code);
}

// Written as Python writes a .pyc: not when sys.dont_write_bytecode is set
// (PYTHONDONTWRITEBYTECODE, -B), atomically (a concurrent run reads the old
// entry or the new one), and a failure only costs the next run a compile.
void store_code(const std::filesystem::path& cache, const std::string& header,
                const py::object& code) {
  PyObject* dont_write = PySys_GetObject("dont_write_bytecode");  // borrowed
  if (dont_write != nullptr && PyObject_IsTrue(dont_write) == 1) {
    return;
  }
  PyObject* data = PyMarshal_WriteObjectToString(code.ptr(), Py_MARSHAL_VERSION);
  if (data == nullptr) {
    PyErr_Clear();
    return;
  }
  const std::string bytes = header + std::string(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
  Py_DECREF(data);
  const auto temporary = cache.string() + "." + std::to_string(::getpid()) + ".tmp";
  try {
    write_whole_file(temporary, bytes);
    std::filesystem::rename(temporary, cache);
  } catch (const std::exception& error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    spdlog::debug("setup.py's bytecode not cached: {}", error.what());
  }
}

// compile() honours a coding cookie or BOM, as `python setup.py` does; no
// .pyc is written into the user's tree (the cache, when given, is the
// host's own file in the build directory).
py::object compile_setup_py(const std::filesystem::path& setup_py,
                            const std::optional<std::filesystem::path>& bytecode_cache) {
  auto source = read_whole_file(setup_py);
  if (!source) {
    throw Error("cannot read " + setup_py.string(), ErrorKind::bad_input);
  }
  std::string header;
  if (bytecode_cache) {
    header = cache_header(*source, setup_py);
    py::object code = cached_code(*bytecode_cache, header);
    if (!code.is_none()) {
      return code;
    }
  }
  py::object code = py::module_::import("builtins")
                        .attr("compile")(py::bytes(*source), setup_py.string(), "exec",
                                         py::arg("dont_inherit") = true);
  if (bytecode_cache) {
    store_code(*bytecode_cache, header, code);
  }
  return code;
}

}  // namespace

std::string bytecode_cache_name() {
  return "setup.cpython-" + std::to_string(PY_MAJOR_VERSION) + std::to_string(PY_MINOR_VERSION) +
         ".pyc";
}

CapturedSetup capture_setup(const std::filesystem::path& setup_py,
                            const std::optional<std::filesystem::path>& bytecode_cache) {
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

    code = compile_setup_py(setup_py, bytecode_cache);
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
                ErrorKind::upstream_contract);
  }
  // The capturing function stays reachable from setup.py's globals; kwargs
  // (whose cmdclass points back at those globals) must not stay in its C++
  // closure, where Python's cycle collector cannot see the cycle: a leak.
  py::dict kwargs = std::exchange(calls->kwargs, py::dict());
  return {module, kwargs, real_setup};
}

}  // namespace ascend_setup
