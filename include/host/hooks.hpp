// ascend_setup.hooks natively: the maintainers' in-tree hooks, prepare() and
// activate(), served by the host module of the running interpreter's minor
// (python_shims/ascend_setup/hooks.py imports it and hands over the globals
// of the setup.py that called the hook). So a tree whose layer package is the
// one line `from ascend_setup.hooks import prepare, activate` builds with the
// native layer from `python3 setup.py`, pip and build, in their interpreter:
//
// - prepare(): the tree is the directory of the calling setup.py; its profile
//   is chosen as the command chooses it, the Ascend defaults are set (in
//   os.environ as well), the job counts, the distributed part and, for a
//   command that compiles, the NPUIR build made ready. Once per tree and
//   process: a second call does nothing more.
// - activate(): prepare() if it has not run; then `setup` in the caller's
//   globals and setuptools.setup are rebound to a wrapper, which applies the
//   layer to setup.py's globals and kwargs (the same overrides and rewrite as
//   the command: setup_call.hpp) and calls setuptools.setup as it was when
//   activate() ran, once, under the build lock. It returns the Distribution
//   and sets `dist` in the caller's globals.
//
// sys.argv is setuptools'; settings come from the environment and
// ascend-setup.toml. The layer's errors become the LayerError hooks.py
// defines (a SystemExit carrying the exit code the command would give, with
// the phase), after one line on stderr; a stop ends the children and exits
// 128 + signal, as the command does. Under the command itself these hooks
// never run: `ascend_setup.hooks` is an inert stand-in there (in_tree_layer.hpp).
#pragma once

#include <pybind11/pybind11.h>

namespace ascend_setup {

// The class raised for the layer's errors: LayerError(message, phase, code).
void set_hooks_error_type(const pybind11::object& type);

void hooks_prepare(const pybind11::dict& caller_globals);
void hooks_activate(const pybind11::dict& caller_globals);

}  // namespace ascend_setup
