#include "host/layer/patch_points.hpp"

#include "base/util/error.hpp"
#include "base/util/strings.hpp"

#include <algorithm>

namespace py = pybind11;

namespace ascend_setup {

namespace {

bool kind_fits(const std::string& wanted, const std::string& found) {
  if (found == "imported" || wanted == "variable") {
    return true;  // an import may bind anything; a variable may hold anything
  }
  if (wanted == "method") {
    return found == "method" || found == "function";
  }
  return wanted == found;
}

std::string article(const std::string& kind) {
  return (kind == "imported" ? "an " : "a ") + kind + (kind == "imported" ? " name" : "");
}

// The module's attribute under the first of the patch point's names it holds.
std::optional<py::object> first_present(const PatchPoint& point, const py::object& module) {
  for (const std::string& name : point.names()) {
    if (py::hasattr(module, name.c_str())) {
      return module.attr(name.c_str());
    }
  }
  return std::nullopt;
}

}  // namespace

PatchPointCheck check_patch_points(const Profile& profile, const SymbolLookup& lookup) {
  PatchPointCheck check;
  std::vector<std::string> seen;
  for (const PatchPoint& point : profile.patch_points) {
    if (std::find(seen.begin(), seen.end(), point.id) != seen.end()) {
      continue;
    }
    seen.push_back(point.id);
    std::vector<std::string> overrides;
    for (const PatchPoint& other : profile.patch_points) {
      if (other.id == point.id &&
          std::find(overrides.begin(), overrides.end(), other.override_name) == overrides.end()) {
        overrides.push_back(other.override_name);
      }
    }
    const std::string needed_by = join(overrides);
    const std::string verb = overrides.size() == 1 ? "override needs" : "overrides need";

    std::string owner;
    if (!point.class_id().empty()) {
      const auto found_class = check.resolved.find(point.class_id());
      if (found_class == check.resolved.end()) {
        continue;  // its class is missing: reported already
      }
      owner = found_class->second;
    }
    std::optional<SymbolInfo> info;
    std::string name;
    for (const std::string& candidate : point.names()) {
      if ((info = lookup(owner, candidate))) {
        name = candidate;
        break;
      }
    }
    const std::string where = owner.empty() ? "" : owner + ".";
    if (!info) {
      std::string tried = join(point.names());
      check.findings.push_back(
          {"missing", point.id, needed_by, where + point.names().front(),
           "setup.py has no " + point.kind + " " + where + point.names().front() +
               (point.aliases.empty() ? "" : " (names tried: " + tried + ")") + ", which the " +
               needed_by + " " + verb + ": add upstream's new name to the aliases of '" + point.id +
               "' under [patch_points] in the profile"});
      continue;
    }
    check.resolved[point.id] = name;
    if (!kind_fits(point.kind, info->kind)) {
      check.findings.push_back({"changed-kind", point.id, needed_by, where + name,
                                where + name + " is " + article(info->kind) + " in setup.py; the " +
                                    needed_by + " " + verb + " " + article(point.kind)});
      continue;
    }
    if (!info->params) {
      continue;
    }
    for (const std::string& param : point.params) {
      if (std::find(info->params->begin(), info->params->end(), param) == info->params->end()) {
        check.findings.push_back(
            {"missing-parameter", point.id, needed_by, where + name + "." + param,
             where + name + " has no parameter '" + param + "' (it has " +
                 (info->params->empty() ? std::string("none") : join(*info->params)) +
                 "), which the " + needed_by + " override" + (overrides.size() == 1 ? "" : "s") +
                 " pass" + (overrides.size() == 1 ? "es" : "")});
      }
    }
  }
  return check;
}

SymbolLookup live_symbols(const py::object& module,
                          std::optional<std::set<std::string>> params_wanted) {
  return [module, params_wanted](const std::string& owner,
                                 const std::string& name) -> std::optional<SymbolInfo> {
    py::object holder = module;
    if (!owner.empty()) {
      if (!py::hasattr(module, owner.c_str())) {
        return std::nullopt;
      }
      holder = module.attr(owner.c_str());
    }
    if (!py::hasattr(holder, name.c_str())) {
      return std::nullopt;
    }
    py::object value = holder.attr(name.c_str());
    py::module_ inspect = py::module_::import("inspect");
    SymbolInfo info;
    const bool callable = PyCallable_Check(value.ptr()) != 0;
    info.kind = inspect.attr("isclass")(value).cast<bool>() ? "class"
                : !callable                                 ? "variable"
                : owner.empty()                             ? "function"
                                                            : "method";
    if (!callable || (params_wanted && params_wanted->count(name) == 0)) {
      return info;
    }
    try {
      py::object parameters = inspect.attr("signature")(value).attr("parameters");
      py::object var_keyword = inspect.attr("Parameter").attr("VAR_KEYWORD");
      std::vector<std::string> names;
      for (auto item : parameters.attr("values")()) {
        if (var_keyword.equal(item.attr("kind"))) {
          return info;  // takes any keyword
        }
        names.push_back(py::str(item.attr("name")).cast<std::string>());
      }
      info.params = std::move(names);
    } catch (const py::error_already_set&) {
      // no signature (a builtin): parameters unknown
    }
    return info;
  };
}

std::map<std::string, std::string> require_patch_points(const Profile& profile,
                                                        const py::object& module) {
  std::set<std::string> params_wanted;
  for (const PatchPoint& point : profile.patch_points) {
    if (!point.params.empty()) {
      const auto names = point.names();
      params_wanted.insert(names.begin(), names.end());
    }
  }
  PatchPointCheck check = check_patch_points(profile, live_symbols(module, params_wanted));
  if (check.findings.empty()) {
    return check.resolved;
  }
  std::string message = "upstream's setup.py does not offer what the Ascend layer hooks (" +
                        std::to_string(check.findings.size()) + " patch point" +
                        (check.findings.size() == 1 ? "" : "s") + ", profile " + profile.source +
                        "; ascend-setup --doctor tells more):";
  for (const auto& finding : check.findings) {
    message += "\n  " + finding.message;
  }
  throw Error(message, ErrorKind::upstream_contract);
}

const PatchPoint& find_patch_point(const Profile& profile, const std::string& id) {
  for (const PatchPoint& point : profile.patch_points) {
    if (point.id == id) {
      return point;
    }
  }
  throw Error("the profile " + profile.source + " names no patch point '" + id +
                  "' under [patch_points], which ascend-setup hooks",
              ErrorKind::bad_input);
}

py::object upstream_attr(const Profile& profile, const py::object& module, const std::string& id) {
  const PatchPoint& point = find_patch_point(profile, id);
  if (auto attr = first_present(point, module)) {
    return *attr;
  }
  throw Error("setup.py has no " + join(point.names(), " or ") + ", which the " +
                  point.override_name + " override needs (see ascend-setup --doctor)",
              ErrorKind::upstream_contract);
}

std::optional<py::object> find_upstream_attr(const Profile& profile, const py::object& module,
                                             const std::string& id) {
  for (const PatchPoint& point : profile.patch_points) {
    if (point.id == id) {
      return first_present(point, module);
    }
  }
  return std::nullopt;
}

}  // namespace ascend_setup
