// The Ascend egg_info: setuptools writes entry_points.txt with every group's
// entries sorted by name, which would list the triton.backends entry points
// as amd, ascend, nvidia. Triton picks up backends in that file's order, and
// the Ascend layer puts its backend first (backends.cpp), so this subclass rewrites
// the file after setuptools' run with each group's entries in the order
// setup() received them (groups stay sorted, as setuptools writes them). The
// file is only written when that changes it. Installed as cmdclass["egg_info"];
// bdist_wheel, develop and install all take the file from here.
#include "host/overrides/overrides.hpp"

#include "base/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <map>
#include <sstream>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// setuptools' layout: "[group]\nname = value\n" per group, groups joined by
// a blank line. nullopt when the entry points are not a {group: [str]} dict.
std::optional<std::string> render_in_given_order(const py::handle& entry_points) {
  if (!py::isinstance<py::dict>(entry_points)) {
    return std::nullopt;
  }
  std::map<std::string, std::vector<std::string>> groups;  // sorted by group
  for (const auto& [group, items] : entry_points.cast<py::dict>()) {
    if (!py::isinstance<py::list>(items) && !py::isinstance<py::tuple>(items)) {
      return std::nullopt;
    }
    auto& lines = groups[group.cast<std::string>()];
    for (const auto& item : items) {
      if (!py::isinstance<py::str>(item)) {
        return std::nullopt;
      }
      const std::string text = item.cast<std::string>();
      const auto equals = text.find('=');
      if (equals == std::string::npos) {
        return std::nullopt;
      }
      lines.push_back(trim(text.substr(0, equals), " \t") + " = " +
                      trim(text.substr(equals + 1), " \t"));
    }
  }
  std::string rendered;
  for (const auto& [group, lines] : groups) {
    rendered += rendered.empty() ? "" : "\n";
    rendered += "[" + group + "]\n";
    for (const auto& line : lines) {
      rendered += line + "\n";
    }
  }
  return rendered;
}

}  // namespace

void override_egg_info(const OverrideContext& context) {
  py::object base = registered_command(context, "egg_info", "setuptools.command.egg_info");
  py::object egg_info =
      define_subclass(context, "EggInfo", base,
                      "ascend-setup: egg_info writing entry points in the order setup() got them");
  egg_info.attr("run") = py::cpp_function(
      [base](py::object self) {
        base.attr("run")(self);
        const auto rendered = render_in_given_order(self.attr("distribution").attr("entry_points"));
        if (!rendered) {
          return;
        }
        const std::filesystem::path file =
            std::filesystem::path(py::str(self.attr("egg_info")).cast<std::string>()) /
            "entry_points.txt";
        std::ifstream in(file, std::ios::binary);
        std::stringstream current;
        current << in.rdbuf();
        if (in && current.str() == *rendered) {
          return;
        }
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << *rendered;
        spdlog::debug("wrote {} with the entry points in setup()'s order", file.string());
      },
      py::name("run"), py::is_method(egg_info));
  context.module.attr("EggInfo") = egg_info;
}

}  // namespace ascend_setup
