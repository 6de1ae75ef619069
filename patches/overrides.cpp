#include "overrides.hpp"

#include "ascend_setup/error.hpp"

namespace py = pybind11;

namespace ascend_setup {

py::object OverrideContext::upstream(const char* name, std::string_view override_name) const {
  if (!py::hasattr(module, name)) {
    throw Error("setup.py has no '" + std::string(name) + "', which the " +
                    std::string(override_name) +
                    " override needs: upstream renamed or removed it; update the override",
                exit_code::upstream_mismatch);
  }
  return module.attr(name);
}

py::object define_subclass(const OverrideContext& context, const char* name, const py::object& base,
                           const char* doc) {
  py::dict namespace_;
  namespace_["__module__"] = context.module.attr("__name__");
  namespace_["__qualname__"] = name;
  namespace_["__doc__"] = doc;
  py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type));
  return type(name, py::make_tuple(base), namespace_);
}

void apply_overrides(const OverrideContext& context) {
  override_backends(context);
  override_llvm_package_info(context);
  override_distributed_package(context);
  override_cmake_build(context);
  override_build_wheel(context);
  override_egg_info(context);
}

}  // namespace ascend_setup
