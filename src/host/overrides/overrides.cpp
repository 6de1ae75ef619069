#include "host/overrides/overrides.hpp"

#include "base/util/error.hpp"
#include "host/layer/patch_points.hpp"

namespace py = pybind11;

namespace ascend_setup {

const std::string& OverrideContext::name(const std::string& id) const {
  const auto found = names.find(id);
  if (found == names.end()) {
    throw Error("the profile " + profile->source + " names no patch point '" + id +
                    "' under [patch_points], which ascend-setup hooks",
                ErrorKind::bad_input);
  }
  return found->second;
}

py::object OverrideContext::upstream(const std::string& id) const {
  return module.attr(name(id).c_str());
}

void OverrideContext::replace(const std::string& id, const py::object& value) const {
  module.attr(name(id).c_str()) = value;
}

py::object registered_command(const OverrideContext& context, const char* command,
                              const char* fallback_module) {
  py::object cmdclass = context.captured_kwargs.contains("cmdclass")
                            ? py::object(context.captured_kwargs["cmdclass"])
                            : py::object(py::dict());
  return py::isinstance<py::dict>(cmdclass) && cmdclass.contains(command)
             ? py::object(cmdclass[command])
             : py::module_::import(fallback_module).attr(command);
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

void apply_overrides(const OverrideContext& given) {
  OverrideContext context = given;
  context.names = require_patch_points(*context.profile, context.module);
  override_backends(context);
  if (context.profile->llvm.resolved_by_setup_py()) {
    // Elsewhere CMake resolves them: the CMakeBuild override hands it the LLVM.
    override_llvm_package_info(context);
    override_thirdparty_packages(context);
  }
  override_distributed_package(context);
  override_cmake_build(context);
  override_build_wheel(context);
  override_egg_info(context);
  override_sdist(context);
  override_build_py(context);
}

}  // namespace ascend_setup
