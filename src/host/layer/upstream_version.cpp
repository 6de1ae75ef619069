#include "host/layer/upstream_version.hpp"

#include "base/util/error.hpp"

#include <spdlog/spdlog.h>

namespace py = pybind11;

namespace ascend_setup {

std::optional<std::string> captured_upstream_version(const Profile& profile,
                                                     const py::object& module) {
  const char* variable = profile.upstream.version_variable.c_str();
  if (!py::hasattr(module, variable)) {
    return std::nullopt;
  }
  return py::str(module.attr(variable)).cast<std::string>();
}

void check_upstream_version(const Profile& profile, const py::object& module, BuildMode mode,
                            bool allow) {
  const auto captured = captured_upstream_version(profile, module);
  if (!captured || release_part(*captured) == profile.upstream.version) {
    return;  // no variable: --doctor names that
  }
  const std::string message = "upstream's setup.py is version " + *captured + " (" +
                              profile.upstream.version_variable + "), the profile " + profile.name +
                              " is for upstream " + profile.upstream.version;
  if (mode == BuildMode::release && !allow) {
    throw Error(message +
                    ": a release build stops here (use the profile for that version, see "
                    "ascend-setup --doctor, or pass --allow-version-mismatch)",
                ErrorKind::upstream_contract);
  }
  spdlog::warn("{} ({} build{})", message, to_string(mode),
               mode == BuildMode::release ? ", --allow-version-mismatch" : "");
}

}  // namespace ascend_setup
