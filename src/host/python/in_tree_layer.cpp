#include "host/python/in_tree_layer.hpp"

#include <pybind11/pybind11.h>
#include <spdlog/spdlog.h>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// sys.modules[name] = an inert package whose `hooks` only log that they were skipped.
void install_stand_in(const std::string& name, const std::vector<std::string>& hooks) {
  py::object modules = py::module_::import("sys").attr("modules");
  py::object stand_in = py::module_::import("types").attr("ModuleType")(
      name,
      "ascend-setup: the tree's in-tree layer, made inert (ascend-setup applies the layer "
      "natively)");
  stand_in.attr("__path__") = py::list();  // a package: its submodules are stand-ins or missing
  for (const std::string& hook : hooks) {
    stand_in.attr(hook.c_str()) = py::cpp_function(
        [name, hook](const py::args&, const py::kwargs&) {
          spdlog::debug("in-tree hook {}.{}() skipped: ascend-setup applies the layer", name, hook);
        },
        py::name(hook.c_str()));
  }
  modules[py::str(name)] = stand_in;
  // `import a.b.c` binds c on a.b: so must a stand-in child on its (imported) parent.
  const auto dot = name.rfind('.');
  if (dot != std::string::npos && modules.contains(py::str(name.substr(0, dot)))) {
    py::object parent = modules[py::str(name.substr(0, dot))];
    py::setattr(parent, name.substr(dot + 1).c_str(), stand_in);
  }
}

}  // namespace

void make_in_tree_layer_inert(const Profile::Layer& layer) {
  // ascend-setup's own hooks, which an adopting tree's layer package
  // re-exports (or setup.py imports): `from ascend_setup.hooks import ...`
  // finds the stand-in in sys.modules without importing the package, so it
  // works whether or not this interpreter has ascend-setup installed.
  install_stand_in(std::string(hooks_module), {"prepare", "activate"});
  for (const std::string& name : layer.in_tree_modules) {
    install_stand_in(name, layer.in_tree_hooks);
  }
  spdlog::debug("in-tree layer made inert: {} and {} module(s) of the tree", hooks_module,
                layer.in_tree_modules.size());
}

}  // namespace ascend_setup
