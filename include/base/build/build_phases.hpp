// The build's phases, named once: download, patch, configure, compile, link,
// pack, repair, as the summary, the trace and the report name them. Each
// phase's place in the build marks its span with a PhaseScope (the one ninja
// run of a `cmake --build` call with a NinjaRunScope), which records the
// span's wall-clock start and its duration into build_summary(); on GitHub
// Actions the span's output sits in a collapsed group (util/github_actions.hpp),
// closed however the span ends.
#pragma once

#include "base/util/github_actions.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace ascend_setup {

enum class BuildPhase { download, patch, configure, compile, link, pack, repair };
inline constexpr BuildPhase all_build_phases[] = {
    BuildPhase::download, BuildPhase::patch, BuildPhase::configure, BuildPhase::compile,
    BuildPhase::link,     BuildPhase::pack,  BuildPhase::repair};

// "download", "patch", "configure", "compile", "link", "pack", "repair".
std::string_view build_phase_name(BuildPhase phase);

// The clock of the trace: wall-clock time, comparable across processes.
using WallClock = std::chrono::system_clock;

struct PhaseSpan {
  BuildPhase phase = BuildPhase::compile;
  WallClock::time_point start;
  double seconds = 0;
};

// A job of a ninja run, as its .ninja_log line has it: the output path as
// ninja writes it, its start and end in ms after the run's start, and the
// wall-clock start of that run.
struct NinjaJob {
  std::string output;
  long long start_ms = 0;
  long long end_ms = 0;
  WallClock::time_point run_start;
};

// The entries of a build directory's .ninja_log: each output's last line.
using NinjaLogEntries = std::map<std::string, std::string>;

// The span of `phase` from construction to destruction; on GitHub Actions,
// in a group named by the phase (unless a group is open already).
class PhaseScope {
 public:
  explicit PhaseScope(BuildPhase phase);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  BuildPhase phase_;
  WallClock::time_point start_;
  std::chrono::steady_clock::time_point steady_start_;
  WorkflowGroup group_;
};

// One `cmake --build` call's ninja run in `build_dir`: the call's start, made
// the origin of the times ninja logs for it, and the log as it was before;
// at its end (a failed build too) the jobs it ran and its compile and link
// spans, as ninja's log times them, go into the summary (add_ninja_run). On
// GitHub Actions, in the group "compile and link".
class NinjaRunScope {
 public:
  explicit NinjaRunScope(std::filesystem::path build_dir);
  ~NinjaRunScope();
  NinjaRunScope(const NinjaRunScope&) = delete;
  NinjaRunScope& operator=(const NinjaRunScope&) = delete;

 private:
  std::filesystem::path build_dir_;
  NinjaLogEntries before_;
  WallClock::time_point start_;
  WorkflowGroup group_;
};

}  // namespace ascend_setup
