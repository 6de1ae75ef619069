// A tree whose setup.py carries the layer itself (profile [layer]
// in_tree_modules, in_tree_hooks: e.g. `prepare()` at its top, `activate()`
// before setup()). Applying ascend-setup's native layer on top of those hooks
// would apply it twice (the backend added again, cmdclass swapped, the
// download and the distributed clone done the hooks' way), so while
// ascend-setup runs setup.py each named module is an inert stand-in in
// sys.modules: its hooks do nothing (a debug line when called), any other
// name is missing, as for a module without it. Installed before setup.py is
// executed; kept for the run, since setup.py's commands run later. The same
// holds for ascend_setup.hooks, whatever the profile: under the command the
// layer applies once, natively, by the command.
#pragma once

#include "base/layer/profile.hpp"

#include <string_view>

namespace ascend_setup {

// ascend-setup's own hooks (python_shims/ascend_setup/hooks.py), which a tree
// adopts in its layer package: inert under the command like the tree's own.
inline constexpr std::string_view hooks_module = "ascend_setup.hooks";

// Needs the GIL. `ascend_setup.hooks` always; the profile's in_tree_modules.
void make_in_tree_layer_inert(const Profile::Layer& layer);

}  // namespace ascend_setup
