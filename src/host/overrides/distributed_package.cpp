// With the distributed switch on, the wheel also carries the
// triton_dist package of the Triton-distributed-ascend submodule. Upstream's
// three functions are wrapped; the switch is read at call time, as upstream
// reads its own.
#include "host/overrides/overrides.hpp"

#include "base/layer/environment.hpp"

#include <algorithm>
#include <set>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// Every directory below `root` holding a .py file is a subpackage.
std::vector<std::string> distributed_packages(const std::filesystem::path& root,
                                              const std::string& package) {
  std::set<std::string> names;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    return {};
  }
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      break;
    }
    if (it->is_regular_file() && it->path().extension() == ".py") {
      const std::filesystem::path relative = it->path().parent_path().lexically_relative(root);
      std::string name = package;
      for (const auto& part : relative) {
        if (part != ".") {
          name += "." + part.string();
        }
      }
      names.insert(name);
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace

void override_distributed_package(const OverrideContext& context) {
  py::object package_dirs = context.upstream("get_package_dirs");
  py::object packages = context.upstream("get_packages");
  py::object add_links = context.upstream("add_links");
  py::object update_symlink = context.upstream("update_symlink");
  auto profile = context.profile;
  const std::filesystem::path root = context.tree_root;
  auto enabled = [profile] { return env_on(EnvVar::distributed, *profile); };

  context.replace(
      "get_package_dirs",
      py::cpp_function(
          [package_dirs, profile, enabled]() {
            py::list result(package_dirs());
            if (enabled()) {
              result.append(
                  py::make_tuple(profile->distributed.package, profile->distributed.package_root));
            }
            return result;
          },
          py::name("get_package_dirs"), py::doc("ascend-setup: upstream's, plus triton_dist")));

  context.replace(
      "get_packages",
      py::cpp_function(
          [packages, profile, root, enabled]() {
            py::list result(packages());
            if (enabled()) {
              for (const std::string& name : distributed_packages(
                       root / profile->distributed.package_root, profile->distributed.package)) {
                result.append(name);
              }
            }
            return result;
          },
          py::name("get_packages"),
          py::doc("ascend-setup: upstream's, plus triton_dist's packages")));

  context.replace(
      "add_links",
      py::cpp_function(
          [add_links, update_symlink, profile, root, enabled](py::object external_only) {
            add_links(external_only);
            if (!external_only.cast<bool>() && enabled()) {
              const auto source =
                  std::filesystem::weakly_canonical(root / profile->distributed.package_root);
              update_symlink((root / profile->distributed.link).string(), source.string());
            }
          },
          py::name("add_links"), py::arg("external_only"),
          py::doc("ascend-setup: upstream's, plus the triton_dist link")));
}

}  // namespace ascend_setup
