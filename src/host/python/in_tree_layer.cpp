#include "host/python/in_tree_layer.hpp"

#include <pybind11/pybind11.h>
#include <spdlog/spdlog.h>

namespace py = pybind11;

namespace ascend_setup {

void make_in_tree_layer_inert(const Profile::Layer& layer) {
  if (layer.in_tree_modules.empty()) {
    return;
  }
  py::object modules = py::module_::import("sys").attr("modules");
  py::object module_type = py::module_::import("types").attr("ModuleType");
  for (const std::string& name : layer.in_tree_modules) {
    py::object stand_in = module_type(name,
                                      "ascend-setup: the tree's in-tree layer, made inert "
                                      "(ascend-setup applies the layer natively)");
    stand_in.attr("__path__") = py::list();  // a package: its submodules are stand-ins or missing
    for (const std::string& hook : layer.in_tree_hooks) {
      stand_in.attr(hook.c_str()) = py::cpp_function(
          [name, hook](const py::args&, const py::kwargs&) {
            spdlog::debug("in-tree hook {}.{}() skipped: ascend-setup applies the layer", name,
                          hook);
          },
          py::name(hook.c_str()));
    }
    modules[py::str(name)] = stand_in;
    // `import a.b.c` binds c on a.b: so must a stand-in child on its stand-in parent.
    const auto dot = name.rfind('.');
    if (dot != std::string::npos && modules.contains(py::str(name.substr(0, dot)))) {
      py::object parent = modules[py::str(name.substr(0, dot))];
      py::setattr(parent, name.substr(dot + 1).c_str(), stand_in);
    }
  }
  spdlog::debug("in-tree layer made inert: {} ({})", layer.in_tree_modules.front(),
                layer.in_tree_modules.size());
}

}  // namespace ascend_setup
