// Which Python interpreter a run serves, worked out without libpython (the
// launcher has none): --python PATH (a bare name is looked up on PATH), else
// $VIRTUAL_ENV/bin/python, else `python3` on PATH, else the build's default
// interpreter (the first one CMake found, /usr/bin/python3 on Debian). A venv is read from its
// pyvenv.cfg and an interpreter binary named pythonX.Y from its name; anything
// else (a pyenv shim, a `python3` binary) is run once to ask.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

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

// A bare name is looked up on PATH as a shell would; a path is returned as is;
// nullopt when a bare name is not found.
std::optional<std::filesystem::path> find_on_path(const std::filesystem::path& name);

}  // namespace ascend_setup
