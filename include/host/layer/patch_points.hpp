// The profile's patch points checked against what upstream's setup.py offers:
// each upstream symbol an override hooks must exist (under its id or one of
// its aliases), be of the expected kind, and accept the parameters the
// override passes. The same check runs on two views of setup.py: its source
// read with Python's `ast` (--doctor, works when the module cannot load) and
// the loaded module (every build, with the live signatures).
#pragma once

#include "base/layer/profile.hpp"

#include <pybind11/pybind11.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ascend_setup {

// What setup.py defines under one name.
struct SymbolInfo {
  std::string kind;  // function, class, variable, method, imported (any kind)
  // Parameter names; nullopt when unknown or when it takes any keyword (**kwargs).
  std::optional<std::vector<std::string>> params;
};

// owner "" = module level, else a class's upstream name -> the member's info.
using SymbolLookup =
    std::function<std::optional<SymbolInfo>(const std::string& owner, const std::string& name)>;

struct PatchPointFinding {
  std::string kind;       // missing, changed-kind, missing-parameter
  std::string id;         // the patch point
  std::string overrides;  // the overrides that need it, comma-separated
  std::string subject;    // the upstream name (Class.method, name.param)
  std::string message;    // one line
};

struct PatchPointCheck {
  std::map<std::string, std::string> resolved;  // id -> upstream name found
  std::vector<PatchPointFinding> findings;
};

// Checks every patch point of the profile, each id once.
PatchPointCheck check_patch_points(const Profile& profile, const SymbolLookup& lookup);

// The loaded module as a SymbolLookup (kinds and signatures via inspect).
// With `params_wanted`, parameters are read only for those names (a
// signature costs up to milliseconds); the others' stay unknown.
SymbolLookup live_symbols(const pybind11::object& module,
                          std::optional<std::set<std::string>> params_wanted = std::nullopt);

// check_patch_points on the loaded module; throws Error(upstream_mismatch)
// naming every finding at once. Returns id -> upstream name.
std::map<std::string, std::string> require_patch_points(const Profile& profile,
                                                        const pybind11::object& module);

// The module's attribute for patch point `id`: the first of its names present.
// Throws Error(bad_input) when the profile lacks the id, Error(upstream_mismatch)
// when no name is present.
pybind11::object upstream_attr(const Profile& profile, const pybind11::object& module,
                               const std::string& id);

// The same attribute, or nullopt when the profile names no patch point `id`
// or `module` (a module or any object with attributes) holds none of its names.
std::optional<pybind11::object> find_upstream_attr(const Profile& profile,
                                                   const pybind11::object& module,
                                                   const std::string& id);

}  // namespace ascend_setup
