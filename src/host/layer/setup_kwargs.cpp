#include "host/layer/setup_kwargs.hpp"

#include "base/layer/environment.hpp"
#include "base/layer/wheel_version.hpp"
#include "base/util/whole_file.hpp"
#include "host/layer/patch_points.hpp"

#include <spdlog/spdlog.h>

namespace py = pybind11;

namespace ascend_setup {

namespace {

py::list string_list(const std::vector<std::string>& values) {
  py::list list;
  for (const auto& value : values) {
    list.append(value);
  }
  return list;
}

}  // namespace

py::dict rewrite_setup_kwargs(const py::dict& captured, const py::object& module,
                              const Profile& profile, const std::filesystem::path& tree_root,
                              const PlatformInfo& platform) {
  // A copy keeps every upstream key in its place; assignments below replace
  // values in place and append new keys at the end.
  py::dict kwargs(captured);

  kwargs["name"] = env_value(EnvVar::wheel_name, &profile).value_or(profile.metadata.default_name);
  kwargs["version"] = wheel_version(profile, tree_root);
  kwargs["url"] = profile.metadata.url;

  const auto readme = tree_root / profile.metadata.readme;
  if (auto text = read_whole_file(readme)) {
    kwargs["long_description"] = py::str(*text);
    if (!profile.metadata.readme_content_type.empty()) {
      kwargs["long_description_content_type"] = profile.metadata.readme_content_type;
    }
  } else {
    spdlog::warn("{} not found: keeping upstream's long_description", readme.string());
  }

  std::vector<std::string> requires_ = profile.metadata.install_requires;
  const auto& by_arch =
      profile.metadata.install_requires_by_arch.at(architecture_key(profile, platform.machine));
  requires_.insert(requires_.end(), by_arch.begin(), by_arch.end());
  kwargs["install_requires"] = string_list(requires_);

  py::dict cmdclass;
  if (captured.contains("cmdclass")) {
    cmdclass = py::dict(captured["cmdclass"]);
  }
  cmdclass["bdist_wheel"] = module.attr("BuildWheel");
  cmdclass["build_ext"] = module.attr("CMakeBuild");
  cmdclass["egg_info"] = module.attr("EggInfo");
  cmdclass["sdist"] = module.attr("Sdist");
  if (profile.bishengir.present) {
    cmdclass["build_py"] = module.attr("AscendBuildPy");  // the BishengIR payload
  }
  kwargs["cmdclass"] = cmdclass;

  // Upstream computed these at import time, before the Ascend backend was
  // added: they must be computed again from the patched module.
  kwargs["packages"] = py::list(upstream_attr(profile, module, "get_packages")());
  kwargs["package_dir"] = py::dict(upstream_attr(profile, module, "get_package_dirs")());
  kwargs["entry_points"] = upstream_attr(profile, module, "get_entry_points")();

  if (env_on(EnvVar::distributed, profile)) {
    py::dict package_data;
    if (captured.contains("package_data") && !captured["package_data"].is_none()) {
      package_data = py::dict(captured["package_data"]);
    }
    // The patterns hold for triton_dist and each of its subpackages
    // (setuptools applies a package_data entry to its own package only).
    const std::string& top = profile.distributed.package;
    for (const auto& package : kwargs["packages"]) {
      const std::string name = py::str(package).cast<std::string>();
      if (name == top || name.rfind(top + ".", 0) == 0) {
        package_data[py::str(name)] = string_list(profile.distributed.package_data);
      }
    }
    kwargs["package_data"] = package_data;
  }
  return kwargs;
}

}  // namespace ascend_setup
