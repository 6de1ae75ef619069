#include "host/setup_call.hpp"

#include "base/build/build_report.hpp"
#include "base/build/build_summary.hpp"
#include "base/build/compile_cache_log.hpp"
#include "base/jobs/compile_cache.hpp"
#include "base/jobs/compile_cluster.hpp"
#include "base/jobs/job_limits.hpp"
#include "base/layer/environment.hpp"
#include "base/npuir/npuir_build.hpp"
#include "base/tree/build_lock.hpp"
#include "base/tree/distributed_sources.hpp"
#include "base/tree/patch_engine.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/github_actions.hpp"
#include "base/util/platform_info.hpp"
#include "base/util/whole_file.hpp"
#include "host/layer/carried_layer.hpp"
#include "host/layer/setup_kwargs.hpp"
#include "host/layer/upstream_version.hpp"
#include "host/overrides/overrides.hpp"
#include "host/python/embedded_python.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace py = pybind11;

namespace ascend_setup {

namespace {

// After a build of a git checkout: the Ascend patches stay applied (the next
// build needs them), so `git pull` would stop on them; one line says how to
// undo them.
void warn_if_left_patched(const SetupCall& call) {
  if (!std::filesystem::exists(call.tree_root / ".git")) {
    return;
  }
  const ModeChoice mode = choose_build_mode(call.forced_mode, *call.profile, call.tree_root);
  const PatchStatus status = PatchEngine(call.tree_root, *call.profile, mode.mode,
                                         PatchEngine::default_state_dir(call.tree_root))
                                 .status();
  if (std::any_of(status.patches.begin(), status.patches.end(),
                  [](const PatchStatus::Patch& patch) { return patch.applied; })) {
    spdlog::warn(
        "the Ascend patches stay applied to this checkout's sources, so `git pull` sees local "
        "changes: `{}` restores them",
        call.restore_command);
  }
}

}  // namespace

void prepare_build(const std::filesystem::path& tree_root, const Profile& profile, bool compiling) {
  // MAX_JOBS as the user set it, for the NPUIR build's own count.
  const std::optional<std::string> user_max_jobs = env_value(EnvVar::max_jobs, nullptr);
  // The distcc cluster (probed only for a command that compiles), then
  // MAX_JOBS (its slots, else the cgroup's figure) and
  // TRITON_PARALLEL_LINK_JOBS where unset (said when compiling).
  apply_job_limits(compiling, compiling ? &apply_compile_cluster(true) : nullptr);
  if (compiling) {
    apply_compile_cache(tree_root, true);  // before the NPUIR build, which compiles through it
  }
  ensure_distributed_sources(tree_root, profile);
  if (compiling) {
    build_npuir(tree_root, profile, user_max_jobs);  // with its switch on
  }
}

py::dict apply_layer(const SetupCall& call, const py::object& module, const py::dict& captured) {
  // A setup.py with the layer in it: exit 4, before the version check (such
  // trees are older upstreams).
  refuse_carried_layer(module, captured, *call.profile);
  check_upstream_version(*call.profile, module,
                         choose_build_mode(call.forced_mode, *call.profile, call.tree_root).mode,
                         call.allow_version_mismatch);
  const PlatformInfo platform = current_platform();
  apply_overrides({module,
                   captured,
                   call.profile,
                   call.tree_root,
                   platform,
                   call.forced_mode,
                   call.force_patches,
                   {}});
  return rewrite_setup_kwargs(captured, module, *call.profile, call.tree_root, platform);
}

py::object build_with_layer(const SetupCall& call, const py::object& real_setup,
                            const py::dict& kwargs) {
  // GitHub's groups come after what Python printed before them.
  set_workflow_output_flush([] {
    if (PyGILState_Check() != 0) {
      flush_python_streams();
    }
  });
  // Held until the report is written: it is a build output too.
  const BuildLock build_lock(call.tree_root);
  py::object result = real_setup(**kwargs);
  flush_python_streams();
  if (compile_cache().active) {
    const auto log = read_whole_file(compile_cache_log_path(call.tree_root));
    build_summary().compile_cache = parse_ccache_stats_log(log.value_or("")).figures;
  }
  print_build_summary();
  record_build(call.tree_root, build_lock.held());  // the trace, the report, GitHub's step summary
  if (call.profile->layer.warn_left_patched && build_summary().any) {
    warn_if_left_patched(call);
  }
  return result;
}

}  // namespace ascend_setup
