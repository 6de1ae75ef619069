// Upstream's get_thirdparty_packages downloads each prebuilt package (LLVM
// first) with urllib straight into tarfile: one 300 s socket timeout, no
// resume, a half-unpacked directory when it dies. The override fetches every
// package upstream would download (not given by its syspath variable, not
// cached with its URL in version.txt, not an offline build) with
// ascend-setup's downloader into upstream's own cache directory first
// (base/download/package_fetch.hpp), then calls upstream's function, which
// finds each package cached and does the rest (its -D arguments, the symlink).
// Each of these packages' locks is held from before its fetch until upstream's
// function returns: builds sharing the cache fetch a package once, and never
// run upstream's symlink step on it at the same time. The LLVM package (the
// one named by the profile's syspath variable) is checked against its pinned
// SHA-256 when it has one (layer/llvm_package.hpp).
#include "host/overrides/overrides.hpp"

#include "base/build/build_phases.hpp"
#include "base/download/package_fetch.hpp"
#include "base/layer/llvm_package.hpp"
#include "base/util/error.hpp"

#include <filesystem>
#include <optional>
#include <vector>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// Fetches each package upstream would download, under its lock; returns the
// locks, in the packages' order (the same in every build).
std::vector<FileLock> fetch_packages(py::handle packages, const std::filesystem::path& cache,
                                     const Profile& profile) {
  py::object environ = py::module_::import("os").attr("environ");
  std::optional<DownloadOptions> options;
  std::optional<PhaseScope> downloading;  // from the first package fetched
  std::vector<FileLock> locks;
  for (py::handle package : packages) {
    const std::string url = py::str(package.attr("url"));
    const std::string syspath = py::str(package.attr("syspath_var_name"));
    // Upstream downloads only when the syspath variable is absent (even
    // an empty one counts as given) and version.txt differs.
    if (url.empty() || (!syspath.empty() && environ.contains(syspath))) {
      continue;
    }
    PackageSpec spec{url, cache / py::str(package.attr("package")).cast<std::string>(),
                     py::str(package.attr("name"))};
    if (syspath == profile.llvm.syspath_var) {
      if (const auto pinned = llvm_package_sha256(profile, spec.name)) {
        spec.sha256 = pinned->sha256;
        spec.sha256_from = pinned->from;
      }
    }
    locks.push_back(lock_package(spec));
    if (package_cached(spec)) {
      continue;
    }
    if (!options) {
      options = download_options_from_environment();
      downloading.emplace(BuildPhase::download);
    }
    DownloadOptions these = *options;
    these.label = spec.name.empty() ? spec.root_dir.filename().string() : spec.name;
    fetch_package(spec, these, locks.back());
  }
  return locks;
}

}  // namespace

void override_thirdparty_packages(const OverrideContext& context) {
  py::object original = context.upstream("get_thirdparty_packages");
  py::object cache_path = context.upstream("get_triton_cache_path");
  py::object offline = context.upstream("is_offline_build");

  auto profile = context.profile;

  py::cpp_function replacement(
      [original, cache_path, offline, profile](py::object packages) -> py::object {
        if (py::bool_(offline())) {
          return original(packages);
        }
        // Held until upstream's function returns.
        const std::vector<FileLock> locks =
            fetch_packages(packages, py::str(cache_path()).cast<std::string>(), *profile);
        return original(packages);
      },
      py::name("get_thirdparty_packages"), py::arg("packages"),
      py::doc("ascend-setup: each package fetched by ascend-setup's downloader first, then "
              "upstream's get_thirdparty_packages"));
  context.replace("get_thirdparty_packages", replacement);
}

}  // namespace ascend_setup
