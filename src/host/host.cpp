#include "host/host.hpp"

#include "base/jobs/compile_cache.hpp"
#include "base/jobs/compile_cluster.hpp"
#include "base/jobs/job_limits.hpp"
#include "base/tree/run_start.hpp"
#include "base/layer/environment.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/github_actions.hpp"
#include "base/util/machine_output.hpp"
#include "host/doctor.hpp"
#include "host/python/captured_setup.hpp"
#include "host/python/embedded_python.hpp"
#include "host/python/env_read_watch.hpp"
#include "host/python/in_tree_layer.hpp"
#include "host/python/kwargs_json.hpp"
#include "host/setup_call.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

namespace py = pybind11;

namespace ascend_setup {

namespace {

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
    const nlohmann::ordered_json captured_json =
        options.dump == DumpMode::diff ? to_json(captured.kwargs) : nlohmann::ordered_json();

    phase = Phase::patching;
    const SetupCall call{tree.root, profile, options.mode, options.force_patches,
                         options.allow_version_mismatch};
    py::dict kwargs = apply_layer(call, captured.module, captured.kwargs);
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
    build_with_layer(call, captured.real_setup, kwargs);
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
  if (github_actions_from_environment().on) {
    flush_python_streams();
    for (const auto& annotation : doctor_annotations(report)) {
      write_workflow_command(annotation);
    }
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
  const bool compiling = options.dump == DumpMode::none && compiles(options.setup_args);
  if (options.list_env != ListEnv::none) {
    // The distcc cluster probed and the job counts set, as a build has them.
    apply_job_limits(compiling, &apply_compile_cluster(compiling));
    apply_compile_cache(tree.root, false);
    const Interpreter interpreter = choose_interpreter(options.python);
    const MachineOutput out;  // before Python starts: setup.py's prints go to stderr
    EmbeddedPython python(interpreter, tree.script, options.setup_args, tree.run_dir);
    make_in_tree_layer_inert(profile->layer);
    return list_environment_of(options, tree, *profile, out);
  }
  prepare_build(tree.root, *profile, compiling);

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
