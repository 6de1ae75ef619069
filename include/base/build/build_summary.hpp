// The one summary at the end of a build, on stderr: objects compiled and up
// to date (from ninja's .ninja_log and build.ninja), seconds in each phase
// (build_phases.hpp: the spans its scopes record; "compile and link" as one
// when they overlapped), the compile cache's hits
// (local and remote) and misses, the wheel's size and path. The overrides
// add to it as the phases run; print_build_summary() prints it once, when
// something was built or packed (a --name or --version run prints nothing).
// The jobs and the spans are also the build trace's and report's material
// (build_report.hpp).
#pragma once

#include "base/build/build_phases.hpp"
#include "base/build/compile_cache_log.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ascend_setup {

struct BuildSummary {
  bool any = false;
  int objects_compiled = 0;
  int objects_up_to_date = 0;
  std::vector<PhaseSpan> phases;    // in the order they ended
  std::vector<NinjaJob> jobs;       // every job the build's ninja runs ran
  std::filesystem::path build_dir;  // the last ninja run's build directory
  size_t entries = 0;
  size_t entries_reused = 0;
  size_t entries_compressed = 0;
  size_t hard_links = 0;
  std::optional<std::filesystem::path> wheel;
  // The compile cache's outcomes for this build's compiles (ccache's stats
  // log); printed when any compile went through the cache.
  CompileCacheFigures compile_cache;

  // The seconds of all of `phase`'s spans.
  double seconds(BuildPhase phase) const;
  // Whether a span of `a` and a span of `b` ran at the same time.
  bool overlap(BuildPhase a, BuildPhase b) const;
};

// Each phase's seconds as the summaries name them, in all_build_phases'
// order; where a link ran while a compile did, one row "compile and link"
// (the wall time either ran) in place of both.
std::vector<std::pair<std::string, double>> phase_rows(const BuildSummary& summary);

BuildSummary& build_summary();

// The entries of `build_dir`/.ninja_log: each output's last line, as ninja
// wrote it (empty when there is no log).
NinjaLogEntries ninja_log_entries(const std::filesystem::path& build_dir);

// The jobs of `build_dir`/.ninja_log whose entry is new or changed since the
// log held `before` (`run_start` left unset), in the log's order of outputs.
// Entries, not a byte offset: CMake's configure recompacts the log (`ninja -t
// recompact`), which rewrites it shorter.
std::vector<NinjaJob> ninja_jobs_since(const std::filesystem::path& build_dir,
                                       const NinjaLogEntries& before);

// What ninja did in `build_dir` since the log held `before`: objects whose
// entry is new or changed were built; objects of build.ninja not built are up
// to date. Adds to the summary.
void add_ninja_build(const std::filesystem::path& build_dir, const NinjaLogEntries& before);

// One ninja run that started at `start`: its jobs (since `before`) into the
// summary's jobs, and its spans as ninja's log has them: a link span for each
// stretch of time some link job ran, a compile span for each stretch some
// other job ran (parallel jobs counted once; a moment between two jobs of a
// stretch, when no job of the other phase ran, does not end it). Links
// interleave with compiles, so the two may overlap; the spans say so as it
// happened.
void add_ninja_run(const std::filesystem::path& build_dir, const NinjaLogEntries& before,
                   WallClock::time_point start);

// The lines; empty when nothing was built or packed.
std::string format_build_summary(const BuildSummary& summary);
// The same as a Markdown section with one table (a `|---|` row), for
// GitHub's step summary; empty when nothing was built or packed.
std::string format_build_summary_markdown(const BuildSummary& summary);
void print_build_summary();

}  // namespace ascend_setup
