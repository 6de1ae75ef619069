// The Ascend bdist_wheel, BuildWheel, a subclass of the command
// upstream registered; installed as cmdclass["bdist_wheel"].
//   run(): add_links(external_only=True), upstream's wheel build with the
//   native packing (native_packing.hpp; ASCEND_SETUP_NATIVE_WHEEL=0: the
//   wheel package's), then with the manylinux switch on: auditwheel repair
//   of the *-linux_*.whl into the dist dir, and the original wheel removed
//   only once the repair succeeded.
//   Deflated once: with the native writer the wheel auditwheel reads is
//   written stored; when the installed auditwheel's `repair --help` lists
//   --zip-compression-level (auditwheel >= 6.1), it is asked for level 0
//   into a scratch directory under the dist dir and the native writer
//   deflates that output in parallel into the dist dir (reusing what the
//   previous repaired wheel of the same name has unchanged); without the
//   option auditwheel deflates it (once, itself).
//   get_tag(), where the profile names a stable-ABI switch ([wheel]
//   stable_abi_env): with it on, the profile's "<python>-<abi>" tag and
//   bdist_wheel's platform tag.
//   A repair that fails is reported as auditwheel's failure (exit 3), the
//   reason in its own output above (a full disk too: "No space left on
//   device"); the original wheel stays.
#include "host/overrides/overrides.hpp"

#include "base/build/build_phases.hpp"
#include "base/build/build_summary.hpp"
#include "base/layer/environment.hpp"
#include "base/process/process.hpp"
#include "base/tree/build_lock.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/staged_replacement.hpp"
#include "base/util/strings.hpp"
#include "base/util/system_error.hpp"
#include "base/wheel/wheel_writer.hpp"
#include "host/overrides/native_packing.hpp"

#include <spdlog/spdlog.h>

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <set>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

std::set<fs::path> wheels_in(const fs::path& dist_dir, const std::string& glob) {
  std::set<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dist_dir, ec)) {
    if (entry.is_regular_file() &&
        ::fnmatch(glob.c_str(), entry.path().filename().c_str(), 0) == 0) {
      found.insert(entry.path());
    }
  }
  return found;
}

// Whether the installed auditwheel's repair takes --zip-compression-level.
bool auditwheel_has_compression_level() {
  try {
    const ProcessResult help =
        run_process({{"auditwheel", "repair", "--help"}, std::nullopt, {}, ""});
    return help.exit_code == 0 &&
           (help.out + help.err).find("--zip-compression-level") != std::string::npos;
  } catch (const SpawnError&) {
    return false;  // the repair itself then says why auditwheel cannot run
  }
}

void repair_wheel(const Profile& profile, const PlatformInfo& platform, const fs::path& dist_dir,
                  bool native, const fs::path& tree_root) {
  const std::set<fs::path> built = wheels_in(dist_dir, profile.wheel.linux_wheel_glob);
  if (built.size() != 1) {
    std::vector<std::string> names;
    for (const auto& wheel : built) {
      names.push_back(wheel.filename().string());
    }
    throw Error("auditwheel repair needs exactly one " + profile.wheel.linux_wheel_glob + " in " +
                    dist_dir.string() + ", found " +
                    (built.empty() ? std::string("none")
                                   : std::to_string(built.size()) + ": " + join(names)),
                ErrorKind::bad_input);
  }
  const fs::path wheel = *built.begin();

  const PhaseScope repairing(BuildPhase::repair);
  const bool level_zero = native && auditwheel_has_compression_level();
  // auditwheel writes into a scratch directory in the dist dir (removed
  // however the repair ends; a killed run's, under the build lock the run
  // holds, by the next repair), so that dist/ never holds a partial wheel.
  const HeldLock& build_lock = held_build_lock();
  const StagedReplacement scratch(build_lock, dist_dir / "auditwheel", "repair");
  const fs::path& output_dir = scratch.staged();
  fs::create_directories(output_dir);
  std::vector<std::string> argv = {"auditwheel", "-v", "repair"};
  for (const auto& plat : profile.wheel.manylinux_platforms) {
    argv.push_back("--plat");
    argv.push_back(replace_all(plat, "{machine}", platform.machine));
  }
  if (level_zero) {
    argv.insert(argv.end(), {"--zip-compression-level", "0"});
    spdlog::debug("auditwheel repair at level 0: the native writer deflates its output");
  }
  argv.insert(argv.end(), {"-w", output_dir.string(), wheel.string()});
  ProcessResult result;
  try {
    result = run_process({argv, std::nullopt, {}, ""});
  } catch (const Error& error) {
    throw Error(std::string(error.what()) + " (auditwheel is needed with " +
                    profile.switches.manylinux + " on); the wheel stays at " + wheel.string(),
                ErrorKind::bad_input);
  }
  // auditwheel's own report is a log: stderr.
  std::cerr << shown_text(result.out + result.err) << std::flush;
  if (result.exit_code != 0) {
    // Whatever the reason (a full disk too), auditwheel's own output above says it.
    throw Error("auditwheel repair of " + wheel.string() + " failed (exit " +
                    std::to_string(result.exit_code) + "); the original wheel stays there",
                ErrorKind::bad_input);
  }
  std::vector<fs::path> repaired;
  for (const auto& written : wheels_in(output_dir, "*.whl")) {
    const fs::path target = dist_dir / written.filename();
    if (level_zero) {
      WheelWriteOptions options;
      options.wheel = target;
      options.previous = target;
      options.digests = wheel_digests_path(tree_root, target);
      options.threads = packing_threads();
      const WheelWriteStats stats = rezip_wheel(written, options, build_lock);
      BuildSummary& summary = build_summary();
      summary.entries = stats.entries;
      summary.entries_compressed = stats.compressed;
      summary.entries_reused = stats.reused;
      spdlog::info(
          "wheel {}: auditwheel's output deflated: {} entries, {} compressed, {} reused, {} "
          "deflate thread{}",
          target.filename().string(), stats.entries, stats.compressed, stats.reused, stats.threads,
          stats.threads == 1 ? "" : "s");
    } else {
      StagedReplacement staging(build_lock, target, "part");
      fs::rename(written, staging.staged());
      staging.commit();
    }
    repaired.push_back(target);
  }
  if (repaired.empty()) {
    throw Error("auditwheel reported success but wrote no new wheel into " + dist_dir.string() +
                    "; the original wheel stays at " + wheel.string(),
                ErrorKind::bad_input);
  }
  fs::remove(wheel);
  build_summary().wheel = repaired.front();
  for (const auto& path : repaired) {
    spdlog::info("repaired wheel: {}", path.string());
    std::cout << path.string() << std::endl;
  }
}

}  // namespace

void override_build_wheel(const OverrideContext& context) {
  py::object cmdclass = context.captured_kwargs.contains("cmdclass")
                            ? py::object(context.captured_kwargs["cmdclass"])
                            : py::object(py::dict());
  if (!py::isinstance<py::dict>(cmdclass) || !cmdclass.contains("bdist_wheel")) {
    throw Error(
        "setup.py's setup() call registers no cmdclass['bdist_wheel'], which the "
        "BuildWheel override needs: upstream changed its commands; update the override",
        ErrorKind::upstream_contract);
  }
  py::object base = cmdclass["bdist_wheel"];
  py::object build_wheel =
      define_subclass(context, "BuildWheel", base,
                      "ascend-setup: upstream's bdist_wheel with the Ascend wheel steps");
  py::object module = context.module;
  const std::string add_links = context.name("add_links");
  auto profile = context.profile;
  const PlatformInfo platform = context.platform;
  const fs::path tree_root = context.tree_root;

  build_wheel.attr("run") = py::cpp_function(
      [base, module, add_links, profile, platform, tree_root](py::object self) {
        module.attr(add_links.c_str())(py::arg("external_only") = true);
        const bool manylinux = env_on(EnvVar::manylinux, *profile);
        const bool native = env_on(EnvVar::native_wheel, *profile);
        {
          std::optional<NativePacking> packing;
          if (native) {
            packing.emplace(self, manylinux, tree_root);
          }
          base.attr("run")(self);
        }
        if (manylinux) {
          py::module_::import("sys").attr("stdout").attr("flush")();
          repair_wheel(*profile, platform,
                       fs::absolute(py::str(self.attr("dist_dir")).cast<std::string>()), native,
                       tree_root);
        }
      },
      py::name("run"), py::is_method(build_wheel));
  if (!profile->wheel.stable_abi_env.empty()) {
    // The layer's rule, whatever upstream's class does: with the switch on,
    // "<python>-<abi>" of the profile and bdist_wheel's platform tag.
    const std::string tag = profile->wheel.stable_abi_tag;
    const std::string python_tag = tag.substr(0, tag.find('-'));
    const std::string abi_tag = tag.substr(tag.find('-') + 1);
    build_wheel.attr("get_tag") = py::cpp_function(
        [base, profile, python_tag, abi_tag](py::object self) -> py::object {
          py::tuple own = base.attr("get_tag")(self);
          if (!env_on(EnvVar::stable_abi, *profile)) {
            return own;
          }
          return py::make_tuple(python_tag, abi_tag, own[2]);
        },
        py::name("get_tag"), py::is_method(build_wheel));
  }
  module.attr("BuildWheel") = build_wheel;
}

}  // namespace ascend_setup
