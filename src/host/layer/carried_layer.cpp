#include "host/layer/carried_layer.hpp"

#include "base/util/error.hpp"
#include "base/util/strings.hpp"
#include "host/layer/patch_points.hpp"

#include <cctype>
#include <optional>
#include <sstream>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// The entry point group Triton discovers its backends in (every version).
constexpr const char* backends_group = "triton.backends";

// The texts of a setuptools list argument: a list or tuple of strings, or
// one string of lines (anything else holds none).
std::vector<std::string> texts_of(const py::handle& value) {
  std::vector<std::string> texts;
  if (py::isinstance<py::str>(value)) {
    std::istringstream lines(value.cast<std::string>());
    for (std::string line; std::getline(lines, line);) {
      if (!trim(line).empty()) {
        texts.push_back(trim(line));
      }
    }
  } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    for (const py::handle item : value) {
      if (py::isinstance<py::str>(item)) {
        texts.push_back(item.cast<std::string>());
      }
    }
  }
  return texts;
}

// A distribution name as pip compares them: lower case, runs of - _ . as one -.
std::string normalized_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') {
        out += '-';
      }
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// The project a requirement names: its text before any version specifier, extra or marker.
std::string requirement_name(const std::string& requirement) {
  const std::string text = trim(requirement);
  std::size_t end = 0;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) != 0 ||
                               text[end] == '-' || text[end] == '_' || text[end] == '.')) {
    ++end;
  }
  return text.substr(0, end);
}

bool among_backends(const py::object& module, const Profile& profile) {
  const std::optional<py::object> backends = find_upstream_attr(profile, module, "backends");
  if (!backends || !(py::isinstance<py::list>(*backends) || py::isinstance<py::tuple>(*backends))) {
    return false;
  }
  for (const py::handle backend : *backends) {
    const py::object name = py::getattr(backend, "name", py::none());
    if (py::isinstance<py::str>(name) && name.cast<std::string>() == profile.backend_name) {
      return true;
    }
  }
  return false;
}

bool among_entry_points(const py::dict& kwargs, const Profile& profile) {
  if (!kwargs.contains("entry_points") || !py::isinstance<py::dict>(kwargs["entry_points"])) {
    return false;
  }
  const py::dict groups = kwargs["entry_points"];
  if (!groups.contains(backends_group)) {
    return false;
  }
  for (const std::string& entry : texts_of(groups[backends_group])) {
    if (trim(entry.substr(0, entry.find('='))) == profile.backend_name) {
      return true;
    }
  }
  return false;
}

std::optional<std::string> upstream_pin(const py::dict& kwargs, const Profile& profile) {
  if (!kwargs.contains("install_requires")) {
    return std::nullopt;
  }
  for (const std::string& requirement : texts_of(kwargs["install_requires"])) {
    if (normalized_name(requirement_name(requirement)) == normalized_name(profile.upstream.pin)) {
      return trim(requirement);
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> carried_layer_evidence(const py::object& module, const py::dict& kwargs,
                                                const Profile& profile) {
  std::vector<std::string> evidence;
  const std::string backend = "`" + profile.backend_name + "`";
  if (among_backends(module, profile)) {
    evidence.push_back(backend + " is already among setup.py's backends");
  }
  if (among_entry_points(kwargs, profile)) {
    evidence.push_back(backend + " is already among setup.py's " + backends_group +
                       " entry points");
  }
  if (const auto pin = upstream_pin(kwargs, profile)) {
    evidence.push_back("setup.py's install_requires already pins upstream (`" + *pin + "`)");
  }
  return evidence;
}

std::string carried_layer_message(const std::string& evidence) {
  return "setup.py already carries the Ascend layer (" + evidence +
         "): ascend-setup would apply it a second time; build this tree with its own setup.py: `" +
         carried_layer_build_command + "`";
}

void refuse_carried_layer(const py::object& module, const py::dict& kwargs,
                          const Profile& profile) {
  const std::vector<std::string> evidence = carried_layer_evidence(module, kwargs, profile);
  if (!evidence.empty()) {
    throw Error(carried_layer_message(evidence.front()), ErrorKind::upstream_contract);
  }
}

}  // namespace ascend_setup
