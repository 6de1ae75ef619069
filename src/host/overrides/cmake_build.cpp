// The Ascend CMakeBuild, a subclass of upstream's installed as
// cmdclass["build_ext"].
//   run(): upstream's download_and_copy_dependencies() (a no-op where the
//     profile skips upstream's downloads; none where the profile names no
//     such patch point: upstream 3.8's setup.py has none), the patch engine, the
//     CMake version check, coverage tooling on or off, build_extension() for
//     each extension.
//   build_extension(ext): upstream's, with subprocess.check_call wrapped for
//     its duration so that the configure call (cmake without --build) gets
//     the Ascend arguments (base/layer/cmake_arguments.hpp) after upstream's
//     own (with what they need computed first: on a tree that resolves its
//     packages outside setup.py, the LLVM resolved and fetched natively,
//     llvm_syspath.hpp; the wheel's version), and the distcc launcher when compiling through a
//     cluster (base/jobs/compile_cluster.hpp) unless the call names a launcher already, and the
//     configure and build calls are the configure, compile and link phases (build_phases.hpp: spans
//     for the summary and the trace, with the jobs ninja's log says each build call ran); then the
//     tools are copied next to the extension, executable and stripped.
//   A cmake call that fails is reported as the failed build tool it is (its
//     command and status, exit 1), whatever the disks hold: a full disk is
//     said by the tool's own output above ("No space left on device").
//   A build_extension whose configure call did not pass through
//     subprocess.check_call (upstream configures another way: the Ascend
//     arguments would be missing) stops with exit 4 (upstream_contract): at
//     its first `cmake --build` before anything is compiled, else when it
//     returns.
#include "host/overrides/overrides.hpp"

#include "base/build/build_phases.hpp"
#include "base/build/build_summary.hpp"
#include "base/jobs/compile_cache.hpp"
#include "base/jobs/compile_cluster.hpp"
#include "base/layer/cmake_arguments.hpp"
#include "base/layer/environment.hpp"
#include "base/layer/wheel_version.hpp"
#include "base/process/process.hpp"
#include "base/tree/patch_engine.hpp"
#include "base/util/error.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"
#include "host/overrides/llvm_syspath.hpp"

#include <pybind11/stl.h>
#include <spdlog/spdlog.h>

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <regex>
#include <set>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

std::string extension_names(const py::handle& self) {
  std::vector<std::string> names;
  for (const auto& extension : self.attr("extensions")) {
    names.push_back(py::str(extension.attr("name")).cast<std::string>());
  }
  return join(names);
}

// The first "<major>.<minor>" in `text`; {-1, -1} when there is none or a
// part is too large for an int.
std::pair<int, int> major_minor(const std::string& text) {
  static const std::regex pattern(R"((\d+)\.(\d+))");
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) {
    return {-1, -1};
  }
  const auto major = parse_integer(match[1].str(), 0, std::numeric_limits<int>::max());
  const auto minor = parse_integer(match[2].str(), 0, std::numeric_limits<int>::max());
  if (!major || !minor) {
    return {-1, -1};
  }
  return {*major, *minor};
}

// Upstream's check, made a clear error for every way it can fail.
void check_cmake(const py::handle& self, const std::string& minimum) {
  const std::string needed = "CMake >= " + minimum + " is needed to build " + extension_names(self);
  ProcessResult result;
  try {
    result = run_process({{"cmake", "--version"}, std::nullopt, {}, ""});
  } catch (const SpawnError& error) {
    if (!error.not_found()) {
      throw;
    }
    throw Error(needed + ": no cmake on PATH", ErrorKind::bad_input);
  }
  if (result.exit_code != 0) {
    throw Error(needed + ": `cmake --version` exited with " + std::to_string(result.exit_code),
                ErrorKind::bad_input);
  }
  static const std::regex version(R"(version\s*\d+\.\d+)");
  std::smatch match;
  if (!std::regex_search(result.out, match, version)) {
    throw Error(needed + ": `cmake --version` printed no version", ErrorKind::bad_input);
  }
  const auto [major, minor] = major_minor(match.str());
  if (major < 0) {
    throw Error(
        needed + ": `cmake --version` printed no version it can compare (" + match.str() + ")",
        ErrorKind::bad_input);
  }
  if (std::pair(major, minor) < major_minor(minimum)) {
    throw Error(needed + ": found " + std::to_string(major) + "." + std::to_string(minor),
                ErrorKind::bad_input);
  }
}

// Coverage tooling (hitest) on: every variable, the search paths, the cmake
// flag (once). Off: no hitest variable survives. Through os.environ, which is
// what upstream and its subprocesses read.
void configure_coverage(const Profile& profile) {
  py::object environ = py::module_::import("os").attr("environ");
  const auto& coverage = profile.coverage;
  if (!env_on(EnvVar::coverage, profile)) {
    std::vector<std::string> removed;
    for (const auto& key : environ.attr("keys")()) {
      const auto name = key.cast<std::string>();
      bool hitest = std::find(coverage.clean_names.begin(), coverage.clean_names.end(), name) !=
                    coverage.clean_names.end();
      for (const auto& prefix : coverage.clean_prefixes) {
        hitest = hitest || name.rfind(prefix, 0) == 0;
      }
      if (hitest) {
        removed.push_back(name);
      }
    }
    for (const auto& name : removed) {
      environ.attr("pop")(name);
      spdlog::debug("coverage off: removed {}", name);
    }
    return;
  }
  auto get = [&](const std::string& name) -> std::optional<std::string> {
    py::object value = environ.attr("get")(name);
    return value.is_none() ? std::nullopt : std::optional(value.cast<std::string>());
  };
  std::map<std::string, std::string> inputs;
  for (const auto& [name, fallback] : coverage.inputs) {
    inputs[name] = get(name).value_or(fallback);
  }
  for (const auto& [name, value] : coverage.set) {
    environ[py::str(name)] = expand_placeholders(value, inputs);
  }
  for (const auto& [name, value] : coverage.prepend_paths) {
    const std::string head = expand_placeholders(value, inputs);
    const auto old = get(name);
    environ[py::str(name)] = old && !old->empty() ? head + ":" + *old : head;
  }
  std::string args = get(coverage.cmake_args_env).value_or("");
  if (args.find(coverage.cmake_arg) == std::string::npos) {
    args += (args.empty() ? "" : " ") + coverage.cmake_arg;
    environ[py::str(coverage.cmake_args_env)] = args;
  }
  spdlog::info("coverage tooling on: hitest variables set, {}", coverage.cmake_arg);
}

bool is_cmake_call(const py::handle& command) {
  if (!py::isinstance<py::list>(command) && !py::isinstance<py::tuple>(command)) {
    return false;
  }
  const auto items = command.cast<std::vector<py::object>>();
  return !items.empty() && py::isinstance<py::str>(items[0]) &&
         items[0].cast<std::string>() == "cmake";
}

// The cmake calls of one build_extension() through subprocess.check_call:
// the configure calls seen.
struct CmakeCalls {
  int configures = 0;
};

// What a build_extension that configured without check_call is told.
Error configure_bypassed(const std::string& build_extension, const std::string& when) {
  return Error("upstream's " + build_extension + " " + when +
                   " without a cmake configure call through subprocess.check_call, where the "
                   "CMakeBuild override adds the Ascend cmake arguments: upstream configures "
                   "another way now; update the override for this setup.py",
               ErrorKind::upstream_contract);
}

// Whether a cmake call names one of `options`.
bool cmake_call_with(const py::handle& command, std::initializer_list<const char*> options) {
  if (!is_cmake_call(command)) {
    return false;
  }
  for (const auto& item : command.cast<std::vector<py::object>>()) {
    if (py::isinstance<py::str>(item) &&
        std::any_of(options.begin(), options.end(),
                    [&](const char* option) { return item.cast<std::string>() == option; })) {
      return true;
    }
  }
  return false;
}

bool is_build_call(const py::handle& command) { return cmake_call_with(command, {"--build"}); }

// cmake neither building, nor installing, nor a tool mode, nor asked its version.
bool is_configure_call(const py::handle& command) {
  return is_cmake_call(command) &&
         !cmake_call_with(command, {"--build", "--install", "--version", "-E", "-P"});
}

// The name a `-DNAME=value` or `-DNAME:TYPE=value` argument sets, else "".
std::string defined_name(const std::string& arg) {
  if (arg.rfind("-D", 0) != 0) {
    return "";
  }
  return arg.substr(2, arg.find_first_of(":=") - 2);
}

// subprocess.check_call replaced for one scope, restored however it ends.
// The configure call gets `extra` after its own arguments, and each of
// `unless_set` whose variable it does not set already (the user's launcher
// wins over the cluster's).
class CheckCallWrapper {
 public:
  // `build_dir`: the one whose ninja runs the build calls time.
  CheckCallWrapper(std::vector<std::string> extra, std::vector<std::string> unless_set,
                   std::shared_ptr<CmakeCalls> times, std::string build_extension,
                   fs::path build_dir)
      : subprocess_(py::module_::import("subprocess")), original_(subprocess_.attr("check_call")) {
    py::object original = original_;
    subprocess_.attr("check_call") = py::cpp_function(
        [original, extra = std::move(extra), unless_set = std::move(unless_set), times,
         build_extension = std::move(build_extension),
         build_dir = std::move(build_dir)](py::args args, py::kwargs kwargs) {
          const bool configure = args.size() > 0 && is_configure_call(args[0]);
          const bool build = args.size() > 0 && is_build_call(args[0]);
          if (build && times->configures == 0) {
            throw configure_bypassed(build_extension, "reached `cmake --build`");
          }
          // The call's span: configure, or the compile and link of its ninja run.
          std::optional<PhaseScope> configuring;
          std::optional<NinjaRunScope> building;
          if (configure) {
            configuring.emplace(BuildPhase::configure);
          } else if (build) {
            building.emplace(build_dir);
          }
          const auto call = [&](const py::tuple& all) -> py::object {
            return original(*all, **kwargs);
          };
          if (configure) {
            ++times->configures;
            py::list command(args[0]);
            std::set<std::string> named;
            for (const auto& item : command) {
              if (py::isinstance<py::str>(item)) {
                named.insert(defined_name(item.cast<std::string>()));
              }
            }
            for (const auto& arg : extra) {
              command.append(arg);
            }
            spdlog::debug("configure call: added {} Ascend cmake arguments", extra.size());
            for (const auto& arg : unless_set) {
              if (named.count(defined_name(arg)) != 0) {
                spdlog::info("configure call: {} is set already; not added: {}", defined_name(arg),
                             arg);
                continue;
              }
              command.append(arg);
              spdlog::debug("configure call: added {}", arg);
            }
            if (compile_cache().active &&
                std::all_of(command.begin(), command.end(),
                            [](const py::handle& item) { return py::isinstance<py::str>(item); })) {
              // The links go where the call (and every compile) runs.
              const fs::path call_dir =
                  kwargs.contains("cwd") && !kwargs["cwd"].is_none()
                      ? fs::path(py::str(py::module_::import("os").attr("fspath")(kwargs["cwd"]))
                                     .cast<std::string>())
                      : fs::current_path();
              const auto rewritten = compile_cache_configure_call(
                  compile_cache(), command.cast<std::vector<std::string>>(),
                  fs::absolute(call_dir));
              command = py::list(py::cast(rewritten));
              spdlog::debug("configure call: the compile cache's flags, launcher and links");
            }
            py::list rest(args);
            rest[0] = py::isinstance<py::tuple>(args[0]) ? py::object(py::tuple(command))
                                                         : py::object(command);
            return call(py::tuple(rest));
          }
          return call(py::tuple(args));
        },
        py::name("check_call"));
  }
  CheckCallWrapper(const CheckCallWrapper&) = delete;
  CheckCallWrapper& operator=(const CheckCallWrapper&) = delete;
  ~CheckCallWrapper() { subprocess_.attr("check_call") = original_; }

 private:
  py::module_ subprocess_;
  py::object original_;
};

// The tools next to the extension: mode 0755, stripped where strip exists.
void copy_tools(const Profile& profile, const fs::path& cmake_dir, const fs::path& extension_dir) {
  for (const auto& tool : profile.build.tools) {
    const fs::path source = cmake_dir / tool;
    if (!fs::is_regular_file(source)) {
      spdlog::debug("tool {} not built: not copied", source.string());
      continue;
    }
    const fs::path target = extension_dir / source.filename();
    fs::create_directories(extension_dir);
    fs::copy_file(source, target, fs::copy_options::overwrite_existing);
    fs::permissions(target, fs::perms(0755));
    try {
      const ProcessResult strip =
          run_process({{"strip", "--strip-all", target.string()}, std::nullopt, {}, ""});
      if (strip.exit_code != 0) {
        spdlog::warn("strip {} failed (kept unstripped): {}", target.string(), strip.err);
      }
    } catch (const SpawnError& error) {
      spdlog::debug("{}: {} kept unstripped", error.what(), target.string());
    }
    spdlog::info("copied {} to {}", tool, target.string());
  }
}

// What the configure call's computed arguments need, gathered when
// build_extension runs: on a tree that resolves its packages outside
// setup.py, the LLVM resolved (and fetched) natively, from upstream's cache
// path and offline switch; the wheel's version when the profile passes it.
std::function<ConfigureFacts()> build_facts(const OverrideContext& context) {
  auto profile = context.profile;
  const fs::path root = context.tree_root;
  const PlatformInfo platform = context.platform;
  std::optional<py::object> cache_path, offline;
  if (!profile->llvm.resolved_by_setup_py()) {
    cache_path = context.upstream("get_triton_cache_path");
    offline = context.upstream("is_offline_build");
  }
  return [profile, root, platform, cache_path, offline] {
    ConfigureFacts facts;
    if (cache_path) {
      py::object environ = py::module_::import("os").attr("environ");
      py::object given = environ.attr("get")(profile->llvm.syspath_var);
      LlvmSyspathInputs inputs{root, py::str((*cache_path)()).cast<std::string>(),
                               py::bool_((*offline)()), std::nullopt, platform};
      if (!given.is_none() && !py::str(given).cast<std::string>().empty()) {
        inputs.given = py::str(given).cast<std::string>();
      }
      facts.llvm_syspath = resolve_llvm_syspath(*profile, inputs);
    }
    if (!profile->build.version_arg.empty()) {
      facts.wheel_version = wheel_version(*profile, root);
    }
    return facts;
  };
}

}  // namespace

void override_cmake_build(const OverrideContext& context) {
  py::object upstream = context.upstream("CMakeBuild");
  // A setup.py that no longer downloads in build_ext (upstream moved it out
  // with the packages) has no download step for the profile to name.
  py::object download = context.has("download_and_copy_dependencies")
                            ? context.upstream("download_and_copy_dependencies")
                            : py::object(py::cpp_function([] {}));
  if (context.has("download_and_copy_dependencies") && !context.profile->build.upstream_downloads) {
    // NVIDIA's toolchain is no part of the Ascend wheel: nothing fetched, for
    // upstream's own callers too.
    download = py::cpp_function(
        [](const py::args&, const py::kwargs&) {
          spdlog::debug(
              "upstream's NVIDIA toolchain downloads skipped (profile: "
              "build.upstream_downloads = false)");
        },
        py::name("download_and_copy_dependencies"));
    context.replace("download_and_copy_dependencies", download);
  }
  py::object get_cmake_dir = context.upstream("get_cmake_dir");
  py::object cmake_build =
      define_subclass(context, "CMakeBuild", upstream,
                      "ascend-setup: upstream's CMakeBuild with the Ascend build steps");
  const std::string build_extension = context.name("CMakeBuild.build_extension");
  // The patch point as the profile names it, for messages.
  const std::string patch_point = context.name("CMakeBuild") + "." + build_extension;
  auto profile = context.profile;
  const fs::path root = context.tree_root;
  const auto forced_mode = context.forced_mode;
  const bool force_patches = context.force_patches;

  cmake_build.attr("run") = py::cpp_function(
      [download, profile, root, forced_mode, force_patches](py::object self) {
        download();
        {
          const PhaseScope patching(BuildPhase::patch);
          patch_source_tree(root, *profile, forced_mode, force_patches);
        }
        check_cmake(self, profile->build.min_cmake);
        configure_coverage(*profile);
        for (const auto& extension : self.attr("extensions")) {
          self.attr("build_extension")(extension);
        }
      },
      py::name("run"), py::is_method(cmake_build));

  const std::function<ConfigureFacts()> configure_facts = build_facts(context);
  cmake_build.attr("build_extension") = py::cpp_function(
      [upstream, build_extension, patch_point, get_cmake_dir, profile, configure_facts](
          py::object self, py::object extension) {
        const fs::path cmake_dir = py::str(get_cmake_dir()).cast<std::string>();
        const NinjaLogEntries log_before = ninja_log_entries(cmake_dir);
        auto calls = std::make_shared<CmakeCalls>();
        {
          // With the compile cache, ccache is the launcher (distcc as its prefix).
          CheckCallWrapper wrapper(ascend_cmake_args(*profile, configure_facts()),
                                   compile_cache().active
                                       ? std::vector<std::string>{}
                                       : cluster_cmake_args(compile_cluster(), cmake_dir),
                                   calls, patch_point, cmake_dir);
          upstream.attr(build_extension.c_str())(self, extension);
        }
        if (calls->configures == 0) {
          throw configure_bypassed(patch_point, "returned");
        }
        add_ninja_build(cmake_dir, log_before);
        py::object os_path = py::module_::import("os").attr("path");
        const fs::path extension_dir =
            py::str(os_path.attr("abspath")(os_path.attr("dirname")(
                        self.attr("get_ext_fullpath")(extension.attr("path")))))
                .cast<std::string>();
        copy_tools(*profile, cmake_dir, extension_dir);
      },
      py::name("build_extension"), py::is_method(cmake_build));

  context.module.attr("CMakeBuild") = cmake_build;
  context.replace("CMakeBuild", cmake_build);
}

}  // namespace ascend_setup
