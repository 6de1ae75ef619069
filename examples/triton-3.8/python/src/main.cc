#include <pybind11/pybind11.h>

#include "triton/Backends.h"
#include "triton/Dialect.h"
#include "triton/Version.h"

namespace py = pybind11;

void init_triton_ir(py::module_& m);

PYBIND11_MODULE(libtriton, m) {
  m.doc() = "Triton's compiled core (test stand-in)";
  m.def("version", [] { return TRITON_VERSION; });
  m.def("llvm_version", [] { return triton::llvmVersion(); });
  m.def("backends", [] {
    py::list names;
    for (const char* name : kTritonBackends) names.append(name);
    return names;
  });
  auto ir = m.def_submodule("ir");
  init_triton_ir(ir);
}
