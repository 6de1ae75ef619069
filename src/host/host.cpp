#include "host/host.hpp"

#include "base/build/build_summary.hpp"
#include "base/git/source_repo.hpp"
#include "base/jobs/compile_cluster.hpp"
#include "base/jobs/job_limits.hpp"
#include "base/launch/run_start.hpp"
#include "base/layer/environment.hpp"
#include "base/npuir/npuir_build.hpp"
#include "base/tree/distributed_sources.hpp"
#include "base/tree/file_lock.hpp"
#include "base/tree/patch_engine.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/machine_output.hpp"
#include "host/doctor.hpp"
#include "host/layer/carried_layer.hpp"
#include "host/layer/setup_kwargs.hpp"
#include "host/layer/upstream_version.hpp"
#include "host/overrides/overrides.hpp"
#include "host/python/captured_setup.hpp"
#include "host/python/embedded_python.hpp"
#include "host/python/env_read_watch.hpp"
#include "host/python/in_tree_layer.hpp"
#include "host/python/kwargs_json.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// After a build of a git checkout: the Ascend patches stay applied (the next
// build needs them), so `git pull` would stop on them; one line says how to
// undo them.
void warn_if_left_patched(const std::filesystem::path& root, const Profile& profile,
                          std::optional<BuildMode> forced_mode) {
  if (!std::filesystem::exists(root / ".git")) {
    return;
  }
  const ModeChoice mode = choose_build_mode(forced_mode, profile, root);
  const PatchStatus status =
      PatchEngine(root, profile, mode.mode, PatchEngine::default_state_dir(root)).status();
  if (std::any_of(status.patches.begin(), status.patches.end(),
                  [](const PatchStatus::Patch& patch) { return patch.applied; })) {
    spdlog::warn(
        "the Ascend patches stay applied to this checkout's sources, so `git pull` sees local "
        "changes: `ascend-setup --restore-sources` restores them");
  }
}

void print_json(const MachineOutput& out, const nlohmann::ordered_json& value) {
  flush_python_streams();
  out.write(value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
}

// From "capture setup()" on; every Python object lives in here, so
// that none outlives the interpreter.
int run_setup_py(const HostOptions& options, const SourceTree& tree,
                 const std::shared_ptr<const Profile>& profile,
                 const std::optional<MachineOutput>& out) {
  Phase phase = Phase::loading_setup_py;
  try {
    const auto started = std::chrono::steady_clock::now();
    auto elapsed_ms = [&started] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
          .count();
    };
    CapturedSetup captured =
        capture_setup(tree.setup_py, state_dir(tree.root) / bytecode_cache_name());
    spdlog::debug("setup.py executed ({:.1f} ms)", elapsed_ms());
    if (options.dump == DumpMode::captured) {
      print_json(*out, to_json(captured.kwargs));
      return exit_code::ok;
    }
    // A setup.py with the layer in it: exit 4, before the version check.
    refuse_carried_layer(captured.module, captured.kwargs, *profile);
    const nlohmann::ordered_json captured_json =
        options.dump == DumpMode::diff ? to_json(captured.kwargs) : nlohmann::ordered_json();

    phase = Phase::patching;
    check_upstream_version(*profile, captured.module,
                           choose_build_mode(options.mode, *profile, tree.root).mode,
                           options.allow_version_mismatch);
    const PlatformInfo platform = current_platform();
    apply_overrides({captured.module,
                     captured.kwargs,
                     profile,
                     tree.root,
                     platform,
                     options.mode,
                     options.force_patches,
                     {}});
    py::dict kwargs =
        rewrite_setup_kwargs(captured.kwargs, captured.module, *profile, tree.root, platform);
    spdlog::debug("overrides applied, kwargs rewritten ({:.1f} ms)", elapsed_ms());
    if (options.dump == DumpMode::rewritten) {
      print_json(*out, to_json(kwargs));
      return exit_code::ok;
    }
    if (options.dump == DumpMode::diff) {
      print_json(*out, kwargs_diff(captured_json, to_json(kwargs)));
      return exit_code::ok;
    }

    resume_garbage_collection();  // the build runs with the collector, as Python has it
    phase = Phase::calling_setup;
    // One run builds in a tree's build directory at a time.
    const FileLock build_lock(state_dir(tree.root) / "build.lock",
                              "building in " + (tree.root / "build").string());
    captured.real_setup(**kwargs);
    flush_python_streams();
    print_build_summary();
    if (profile->layer.warn_left_patched && build_summary().any) {
      warn_if_left_patched(tree.root, *profile, options.mode);
    }
    return exit_code::ok;
  } catch (py::error_already_set& error) {
    return report_python_error(error, phase);
  }
}

// --doctor: every finding on stdout, nothing written.
int run_doctor_command(const HostOptions& options, const SourceTree& tree, const Profile& profile,
                       const MachineOutput& out) {
  DoctorReport report;
  try {
    report = run_doctor(tree.root, tree.setup_py, profile, options.mode);
  } catch (py::error_already_set& error) {
    return report_python_error(error, Phase::loading_setup_py);
  }
  if (options.doctor == DoctorMode::json) {
    print_json(out, doctor_json(report));
  } else {
    flush_python_streams();
    std::ostringstream text;
    print_doctor_text(report, text);
    out.write(text.str());
  }
  return report.healthy() ? exit_code::ok : exit_code::doctor_findings;
}

// --list-env: the registry for this tree, with what setup.py reads while it
// loads found by watching it (setup() is captured, nothing is built).
int list_environment_of(const HostOptions& options, const SourceTree& tree, const Profile& profile,
                        const MachineOutput& out) {
  std::set<std::string> read_by_setup_py;
  try {
    EnvReadWatch watch(tree.root);
    capture_setup(tree.setup_py);
    read_by_setup_py = watch.names();
  } catch (py::error_already_set& error) {
    return report_python_error(error, Phase::loading_setup_py);
  }
  const std::vector<EnvEntry> entries = list_environment(profile, read_by_setup_py);
  if (options.list_env == ListEnv::json) {
    print_json(out, to_json(entries));
  } else {
    flush_python_streams();
    out.write(to_table(entries));
  }
  return exit_code::ok;
}

}  // namespace

int run_host(const HostOptions& options) {
  const RunStart start = start_run(options);
  const SourceTree& tree = start.tree;
  const std::shared_ptr<const Profile>& profile = start.profile;
  if (options.patch_action != PatchAction::none) {
    return run_patch_action(options, tree, *profile);
  }
  if (options.doctor != DoctorMode::none) {
    const Interpreter interpreter = choose_interpreter(options.python);
    const MachineOutput out;  // before Python starts: setup.py's prints go to stderr
    EmbeddedPython python(interpreter, tree.script, {}, tree.run_dir);
    make_in_tree_layer_inert(profile->layer);
    return run_doctor_command(options, tree, *profile, out);
  }
  // MAX_JOBS as the user set it, for the NPUIR build's own count.
  const std::optional<std::string> user_max_jobs = env_value(EnvVar::max_jobs, nullptr);
  // The distcc cluster (probed only for a command that compiles, or for
  // --list-env), then MAX_JOBS (its slots, else the cgroup's figure) and
  // TRITON_PARALLEL_LINK_JOBS where unset (said when compiling).
  const bool compiling = options.dump == DumpMode::none && compiles(options.setup_args);
  const CompileCluster* cluster =
      compiling || options.list_env != ListEnv::none ? &apply_compile_cluster(compiling) : nullptr;
  apply_job_limits(compiling, cluster);
  if (options.list_env != ListEnv::none) {
    const Interpreter interpreter = choose_interpreter(options.python);
    const MachineOutput out;  // before Python starts: setup.py's prints go to stderr
    EmbeddedPython python(interpreter, tree.script, options.setup_args, tree.run_dir);
    make_in_tree_layer_inert(profile->layer);
    return list_environment_of(options, tree, *profile, out);
  }
  ensure_distributed_sources(tree.root, *profile);
  if (compiling) {
    build_npuir(tree.root, *profile, user_max_jobs);  // with its switch on
  }

  const Interpreter interpreter = choose_interpreter(options.python);
  std::optional<MachineOutput> out;
  if (options.dump != DumpMode::none) {
    out.emplace();  // before Python starts: setup.py's prints go to stderr
  }
  EmbeddedPython python(interpreter, tree.script, options.setup_args, tree.run_dir);
  make_in_tree_layer_inert(profile->layer);
  return run_setup_py(options, tree, profile, out);
}

}  // namespace ascend_setup
