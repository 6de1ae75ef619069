// Which Python interpreter a run serves, worked out without libpython (the
// launcher has none): --python PATH (a bare name is looked up on PATH), else
// $VIRTUAL_ENV/bin/python, else `python3` on PATH (util/executable_search.hpp), else the build's
// default interpreter (the first one CMake found, /usr/bin/python3 on Debian). A venv is read from
// its pyvenv.cfg and an interpreter binary named pythonX.Y from its name; anything else (a pyenv
// shim, a `python3` binary) is run once to ask.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

struct InterpreterInfo {
  std::filesystem::path
      executable;       // sys.executable to pose as (a venv's python stays in its venv)
  std::string origin;   // how it was chosen: "--python", "$VIRTUAL_ENV", "python3 on PATH"
  std::string version;  // "major.minor"
  std::filesystem::path base_prefix;  // the installation behind it (a venv's base)
  bool free_threaded = false;         // a 3.13t build
  std::string implementation;         // sys.implementation.name: "cpython", "pypy", ...
};

// Throws Error (exit 3) when the chosen file is missing, not executable, or
// does not run as a Python interpreter.
InterpreterInfo resolve_interpreter(const std::optional<std::filesystem::path>& explicit_python);

// What a venv's pyvenv.cfg says ("key = value" lines; other lines and keys
// ignored).
struct PyvenvCfg {
  std::optional<std::string> home;  // the base interpreter's bin directory
  std::string version;  // "X.Y" of `version` or `version_info`; empty when absent or not "X.Y[.…]"
  std::string implementation = "cpython";  // lowercased
};

// The text of a pyvenv.cfg parsed; never throws (bad text gives an empty
// version, which the caller takes as "not a venv").
PyvenvCfg parse_pyvenv_cfg(std::string_view text);

}  // namespace ascend_setup
