#include "host/python/env_read_watch.hpp"

namespace py = pybind11;

namespace ascend_setup {

namespace {

// The file of the Python code that asked for the variable: the first frame
// that is not os.getenv or a Mapping method on the way to __getitem__.
std::string reading_file() {
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  std::string file;
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const py::str name =
        py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(code)).attr("co_filename");
    file = name.cast<std::string>();
    // CPython 3.11+ runs these two frozen: "<frozen os>".
    const std::string base = std::filesystem::path(file).filename().string();
    if (base != "os.py" && base != "_collections_abc.py" && file != "<frozen os>" &&
        file != "<frozen _collections_abc>") {
      Py_DECREF(frame);
      break;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  return file;
}

}  // namespace

EnvReadWatch::EnvReadWatch(const std::filesystem::path& source_root)
    : names_(std::make_shared<std::set<std::string>>()) {
  const std::string root = (source_root / "").string();
  environ_ = py::module_::import("os").attr("environ");
  original_class_ = environ_.attr("__class__");
  py::dict namespace_;
  namespace_["__module__"] = original_class_.attr("__module__");
  py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type));
  py::object watched = type("_Environ", py::make_tuple(original_class_), namespace_);
  // Mapping's get() and __contains__ and os.getenv all come through __getitem__.
  watched.attr("__getitem__") = py::cpp_function(
      [names = names_, base = original_class_, root](py::object self, py::object key) {
        if (py::isinstance<py::str>(key) && reading_file().rfind(root, 0) == 0) {
          PyObject* utf8 = PyUnicode_AsEncodedString(key.ptr(), "utf-8", "surrogateescape");
          if (utf8 != nullptr) {
            names->insert(PyBytes_AsString(utf8));
            Py_DECREF(utf8);
          } else {
            PyErr_Clear();
          }
        }
        return base.attr("__getitem__")(self, key);
      },
      py::name("__getitem__"), py::is_method(watched));
  environ_.attr("__class__") = watched;
}

EnvReadWatch::~EnvReadWatch() {
  if (PyObject_SetAttrString(environ_.ptr(), "__class__", original_class_.ptr()) != 0) {
    PyErr_Clear();
  }
}

}  // namespace ascend_setup
