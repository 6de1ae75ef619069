#include "host/overrides/llvm_syspath.hpp"

#include "base/build/build_phases.hpp"
#include "base/download/package_fetch.hpp"
#include "base/layer/llvm_package.hpp"
#include "base/util/error.hpp"
#include "base/util/staged_replacement.hpp"

#include <spdlog/spdlog.h>

#include <system_error>
#include <variant>

namespace fs = std::filesystem;

namespace ascend_setup {

std::optional<fs::path> resolve_llvm_syspath(const Profile& profile,
                                             const LlvmSyspathInputs& inputs) {
  const Profile::Llvm& llvm = profile.llvm;
  if (inputs.given) {
    spdlog::info("LLVM: {} (set by the user)", *inputs.given);
    return fs::path(*inputs.given);
  }
  if (inputs.offline) {
    throw Error("an offline build needs " + llvm.syspath_var +
                    ", the LLVM to build against: it is not set (the Ascend LLVM package is "
                    "fetched only when the build is not offline)",
                ErrorKind::bad_input);
  }
  const LlvmChoice choice = choose_llvm_package(
      llvm, inputs.platform, env_value(EnvVar::llvm_system_suffix, &profile).value_or(""),
      inputs.tree_root);
  if (const auto* user = std::get_if<UserConfiguredLlvm>(&choice)) {
    spdlog::warn("{}", user->reason);
    return std::nullopt;
  }
  const auto* package = std::get_if<LlvmPackage>(&choice);
  if (package == nullptr) {
    spdlog::info("LLVM: no Ascend build for this platform; upstream's helper chooses");
    return std::nullopt;
  }
  PackageSpec spec{package->url, inputs.cache_dir / "llvm", package->name};
  if (const auto pinned = llvm_package_sha256(profile, spec.name)) {
    spec.sha256 = pinned->sha256;
    spec.sha256_from = pinned->from;
  }
  const FileLock lock = lock_package(spec);
  if (!package_cached(spec)) {
    const PhaseScope downloading(BuildPhase::download);
    DownloadOptions options = download_options_from_environment();
    options.label = spec.name;
    fetch_package(spec, options, lock);
  }
  const fs::path directory = package_directory(spec);
  if (const fs::path link = spec.root_dir / package->sym_name; !package->sym_name.empty()) {
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(link, ec);
    if (fs::exists(status) && !fs::is_symlink(status)) {
      spdlog::warn("{} is not a symbolic link: left as it is (it would point at {})", link.string(),
                   directory.string());
    } else {
      point_symlink_at(link, directory);  // upstream's stable link
    }
  }
  spdlog::info("LLVM: {}", directory.string());
  return directory;
}

}  // namespace ascend_setup
