// A setup.py that already carries an Ascend layer of its own: the oldest
// form, with the Ascend edits written into setup.py itself (release branches
// keep it). ascend-setup would apply the layer a second time (the backend
// twice among the entry points), so such a tree is refused and named by
// --doctor: it builds with its own setup.py. Recognised from what the loaded
// module and its captured setup() kwargs hold and upstream's setup.py never
// does; a tree of the in-tree form is not one (its hooks are inert while
// ascend-setup loads setup.py).
#pragma once

#include "base/layer/profile.hpp"

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace ascend_setup {

// What shows that setup.py carries the layer, one short text each, the
// strongest first; empty when nothing does. `module` is the loaded setup
// module (or any object with its names as attributes), `kwargs` its
// setup() call's. Signs: the profile's backend among the module's backends
// (patch point `backends`) or among the kwargs' triton.backends entry points,
// the profile's upstream pin among the kwargs' install_requires.
std::vector<std::string> carried_layer_evidence(const pybind11::object& module,
                                                const pybind11::dict& kwargs,
                                                const Profile& profile);

// The command that builds such a tree: its own setup.py.
inline constexpr const char* carried_layer_build_command = "python3 setup.py bdist_wheel";

// One line: setup.py carries the layer (`evidence`, one of
// carried_layer_evidence's), ascend-setup would apply it a second time, and
// the command that builds the tree.
std::string carried_layer_message(const std::string& evidence);

// Throws Error(upstream_contract) with carried_layer_message of the first
// evidence when setup.py carries the layer.
void refuse_carried_layer(const pybind11::object& module, const pybind11::dict& kwargs,
                          const Profile& profile);

}  // namespace ascend_setup
