// What a build leaves to look at, after a build whose ninja runs ran a job:
// the trace (<tree>/build/ascend-setup/build-trace.json: Chrome trace events
// that Perfetto and chrome://tracing open, one complete event per ninja job
// and per phase span) and the report (build-report.html beside it: one
// self-contained page, nothing fetched, with the timeline of the phases and
// of every job, the compile cache's outcome of each job, the slowest jobs and
// the wheel's largest entries, all rendered as HTML text). A build that ran
// no job (a no-op, a pack only) leaves both as the last build that compiled
// wrote them. On GitHub Actions, the summary is appended to the step summary
// file. Material: build_summary() (jobs, spans, the wheel), ccache's stats
// log (compile_cache_log.hpp) mapped to ninja's outputs through the build
// directory's compile_commands.json, and the wheel's central directory
// (wheel/zip_reader.hpp).
#pragma once

#include "base/build/build_summary.hpp"
#include "base/build/compile_cache_log.hpp"
#include "base/util/held_lock.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

// {"traceEvents": [...]}: per job a "ph":"X" event named by its output as
// ninja writes it, "ts" its run's start plus ninja's start (µs since the
// epoch), "dur" ninja's end minus start (µs), on a lane (tid) of its own
// among the jobs it overlaps; per phase span an "X" event named by its
// phase, at its start for its duration, on the phases' lanes (tid 0, and
// tid 1 on for a span that ran while another did: a link during a compile),
// before the jobs' lanes; thread names as "M" events. A job's compile cache
// outcome, when known, is in its "args".
nlohmann::json build_trace(const BuildSummary& summary,
                           const std::map<std::string, CacheOutcome>& outcomes);

// The outcome of each compile of ccache's stats log, keyed by the ninja
// output that compile wrote: compile_commands.json's entries (its "file"
// against the log's source, both made absolute against the entry's
// "directory"; its "output", else the command's -o) relative to
// `build_dir` as ninja names them. Unreadable JSON gives no outcomes.
std::map<std::string, CacheOutcome> cache_outcomes_by_output(const std::filesystem::path& build_dir,
                                                             std::string_view compile_commands_json,
                                                             std::string_view stats_log);

struct WheelEntrySize {
  std::string name;
  uint64_t size = 0;
  uint64_t compressed_size = 0;
};

// The page. Every name (jobs, entries, paths) is HTML-escaped.
std::string build_report_html(const BuildSummary& summary,
                              const std::map<std::string, CacheOutcome>& outcomes,
                              const std::vector<WheelEntrySize>& largest_entries);

// At the end of a build (setup_call.cpp): the trace and the report of
// `tree_root`, each staged and replaced whole under the build lock
// (tree/build_lock.hpp) and as shown (the secrets of any URL in them masked:
// util/shown_url.hpp), when the build ran a job; the step summary on GitHub
// Actions. A failure to write them is a warning, never the build's failure.
void record_build(const std::filesystem::path& tree_root, const HeldLock& build_lock);

}  // namespace ascend_setup
