// Upstream's setup.py read as source with Python's `ast` (in the embedded
// interpreter), without executing it: what it defines at module level (and
// each class's members), the version literal it assigns, and its top-level
// imports. Works when the module cannot be loaded here (a missing binding
// library, a changed helper module), which is when --doctor needs it most.
#pragma once

#include "host/layer/patch_points.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

struct SourceImport {
  int line = 0;
  std::string module;              // "nanobind", "python.build_helpers"
  std::vector<std::string> names;  // for "from MODULE import NAMES"; empty for "import MODULE"
};

struct SetupPySource {
  std::map<std::string, SymbolInfo> names;                           // module level
  std::map<std::string, std::map<std::string, SymbolInfo>> members;  // class -> members
  std::optional<std::string> version;  // the leading string literal of the version variable
  std::vector<SourceImport> imports;   // unconditional top-level imports, in order
};

// Parses `setup_py`. Throws Error(bad_input) when it cannot be read;
// a syntax error propagates as pybind11::error_already_set.
SetupPySource read_setup_py_source(const std::filesystem::path& setup_py,
                                   const std::string& version_variable);

// The source as a SymbolLookup for check_patch_points.
SymbolLookup source_symbols(const SetupPySource& source);

// Imports each of the source's imports in this interpreter (with setup.py's
// directory first on sys.path, no bytecode written) and returns, per failing
// one, "MODULE: ExceptionType: message" (in source order).
std::vector<std::pair<SourceImport, std::string>> failing_imports(
    const SetupPySource& source, const std::filesystem::path& setup_py);

}  // namespace ascend_setup
