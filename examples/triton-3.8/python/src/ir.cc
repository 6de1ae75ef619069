#include <pybind11/pybind11.h>

#include "triton/Dialect.h"

namespace py = pybind11;

// The IR bindings. Their shape is upstream's; the content is a stand-in.
void init_triton_ir(py::module_& m) {
  m.def("dialect", [] { return triton::dialectName(); });
  m.def("add", [](int a, int b) { return a + b; });
}
