#include "base/build/build_summary.hpp"

#include "base/util/shown_url.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

bool is_object(const std::string& output) {
  return output.size() > 2 &&
         (output.compare(output.size() - 2, 2, ".o") == 0 ||
          (output.size() > 4 && output.compare(output.size() - 4, 4, ".obj") == 0));
}

bool is_link(const std::string& output) {
  const std::string name = fs::path(output).filename().string();
  return name.find(".so") != std::string::npos || (name.size() > 2 && name.ends_with(".a")) ||
         (name.find('.') == std::string::npos && output.find("CMakeFiles") == std::string::npos);
}

using Interval = std::pair<long long, long long>;  // ms after a ninja run's start

// The union of `intervals`: sorted, disjoint, none empty.
std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& interval : intervals) {
    if (interval.second <= interval.first) {
      continue;
    }
    if (!out.empty() && interval.first <= out.back().second) {
      out.back().second = std::max(out.back().second, interval.second);
    } else {
      out.push_back(interval);
    }
  }
  return out;
}

// `pieces` (merged) joined across each gap in which none of `others` ran:
// the moments ninja spends between one job and the next belong to the
// stretch they interrupt; a gap filled by the other phase's jobs splits it.
std::vector<Interval> joined(std::vector<Interval> pieces, const std::vector<Interval>& others) {
  std::vector<Interval> out;
  for (const Interval& piece : pieces) {
    const bool other_between =
        !out.empty() && std::any_of(others.begin(), others.end(), [&](const Interval& other) {
          return other.first < piece.first && other.second > out.back().second;
        });
    if (!out.empty() && !other_between) {
      out.back().second = piece.second;
    } else {
      out.push_back(piece);
    }
  }
  return out;
}

WallClock::time_point span_end(const PhaseSpan& span) {
  return span.start + std::chrono::duration_cast<WallClock::duration>(
                          std::chrono::duration<double>(span.seconds));
}

// The seconds some span of `phases` ran: their union, overlaps counted once.
double union_seconds(const std::vector<PhaseSpan>& spans,
                     std::initializer_list<BuildPhase> phases) {
  std::vector<std::pair<WallClock::time_point, WallClock::time_point>> intervals;
  for (const PhaseSpan& span : spans) {
    if (std::find(phases.begin(), phases.end(), span.phase) != phases.end()) {
      intervals.emplace_back(span.start, span_end(span));
    }
  }
  std::sort(intervals.begin(), intervals.end());
  double seconds = 0;
  std::optional<WallClock::time_point> covered;
  for (const auto& [from, to] : intervals) {
    const WallClock::time_point begin = covered ? std::max(from, *covered) : from;
    if (to > begin) {
      seconds += std::chrono::duration<double>(to - begin).count();
    }
    covered = covered ? std::max(*covered, to) : to;
  }
  return seconds;
}

// "N hits (L local, R remote), M misses, U not cacheable".
std::string cache_figures_text(const CompileCacheFigures& cache) {
  return fmt::format("{} hits ({} local, {} remote), {} misses, {} not cacheable",
                     cache.local_hits + cache.remote_hits, cache.local_hits, cache.remote_hits,
                     cache.misses, cache.uncacheable);
}

}  // namespace

bool BuildSummary::overlap(BuildPhase a, BuildPhase b) const {
  for (const PhaseSpan& one : phases) {
    for (const PhaseSpan& other : phases) {
      if (one.phase == a && other.phase == b && one.start < span_end(other) &&
          other.start < span_end(one)) {
        return true;
      }
    }
  }
  return false;
}

std::vector<std::pair<std::string, double>> phase_rows(const BuildSummary& summary) {
  const bool together = summary.overlap(BuildPhase::compile, BuildPhase::link);
  std::vector<std::pair<std::string, double>> rows;
  for (const BuildPhase phase : all_build_phases) {
    if (together && phase == BuildPhase::compile) {
      rows.emplace_back("compile and link",
                        union_seconds(summary.phases, {BuildPhase::compile, BuildPhase::link}));
    } else if (!(together && phase == BuildPhase::link)) {
      rows.emplace_back(build_phase_name(phase), summary.seconds(phase));
    }
  }
  return rows;
}

double BuildSummary::seconds(BuildPhase phase) const {
  double total = 0;
  for (const PhaseSpan& span : phases) {
    if (span.phase == phase) {
      total += span.seconds;
    }
  }
  return total;
}

BuildSummary& build_summary() {
  static BuildSummary summary;
  return summary;
}

NinjaLogEntries ninja_log_entries(const fs::path& build_dir) {
  NinjaLogEntries entries;
  std::istringstream lines(read_whole_file(build_dir / ".ninja_log").value_or(""));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream fields(line);
    std::string start;
    std::string end;
    std::string mtime;
    std::string output;
    if (fields >> start >> end >> mtime >> output) {
      entries[output] = line;
    }
  }
  return entries;
}

std::vector<NinjaJob> ninja_jobs_since(const fs::path& build_dir, const NinjaLogEntries& before) {
  std::vector<NinjaJob> jobs;
  for (const auto& [output, line] : ninja_log_entries(build_dir)) {
    const auto old = before.find(output);
    if (old != before.end() && old->second == line) {
      continue;  // not run since
    }
    std::istringstream fields(line);
    NinjaJob job;
    if (fields >> job.start_ms >> job.end_ms) {
      job.output = output;
      jobs.push_back(std::move(job));
    }
  }
  return jobs;
}

void add_ninja_build(const fs::path& build_dir, const NinjaLogEntries& before) {
  BuildSummary& summary = build_summary();
  summary.any = true;
  std::set<std::string> compiled;
  for (const NinjaJob& job : ninja_jobs_since(build_dir, before)) {
    if (is_object(job.output)) {
      compiled.insert(job.output);
    }
  }
  // build.ninja: "build <object>: CXX_COMPILER__..." (CMake's rules).
  std::set<std::string> objects;
  std::istringstream ninja(read_whole_file(build_dir / "build.ninja").value_or(""));
  for (std::string line; std::getline(ninja, line);) {
    if (line.rfind("build ", 0) != 0 || line.find("_COMPILER__") == std::string::npos) {
      continue;
    }
    const auto colon = line.find(": ");
    if (colon == std::string::npos) {
      continue;
    }
    const std::string output = line.substr(6, colon - 6);
    if (is_object(output)) {
      objects.insert(output);
    }
  }
  const int built = static_cast<int>(compiled.size());
  summary.objects_compiled += built;
  summary.objects_up_to_date += std::max(0, static_cast<int>(objects.size()) - built);
}

void add_ninja_run(const fs::path& build_dir, const NinjaLogEntries& before,
                   WallClock::time_point start) {
  BuildSummary& summary = build_summary();
  summary.build_dir = build_dir;
  std::vector<Interval> compiles;
  std::vector<Interval> links;
  for (NinjaJob& job : ninja_jobs_since(build_dir, before)) {
    (!is_object(job.output) && is_link(job.output) ? links : compiles)
        .emplace_back(job.start_ms, job.end_ms);
    job.run_start = start;
    summary.jobs.push_back(std::move(job));
  }
  const std::vector<Interval> compile_pieces = merged(compiles);
  const std::vector<Interval> link_pieces = merged(links);
  for (const auto& [phase, pieces] :
       {std::pair{BuildPhase::compile, joined(compile_pieces, link_pieces)},
        std::pair{BuildPhase::link, joined(link_pieces, compile_pieces)}}) {
    for (const auto& [from, to] : pieces) {
      summary.phases.push_back(
          {phase,
           start + std::chrono::duration_cast<WallClock::duration>(std::chrono::milliseconds(from)),
           static_cast<double>(to - from) / 1000.0});
    }
  }
}

std::string format_build_summary(const BuildSummary& s) {
  if (!s.any) {
    return "";
  }
  // Every phase from configure on; download and patch when they ran.
  std::vector<std::string> phases;
  for (const auto& [name, seconds] : phase_rows(s)) {
    if (seconds > 0 || (name != build_phase_name(BuildPhase::download) &&
                        name != build_phase_name(BuildPhase::patch))) {
      phases.push_back(fmt::format("{} {:.1f} s", name, seconds));
    }
  }
  std::string text =
      fmt::format("ascend-setup: build summary: {} objects compiled, {} up to date; {}\n",
                  s.objects_compiled, s.objects_up_to_date, join(phases, ", "));
  if (const CompileCacheFigures& cache = s.compile_cache; cache.any()) {
    text += "ascend-setup: build summary: compile cache " + cache_figures_text(cache) + "\n";
  }
  if (s.wheel) {
    std::error_code error;
    const auto size = fs::file_size(*s.wheel, error);
    text += fmt::format(
        "ascend-setup: build summary: wheel {} ({:.1f} MB; {} entries: {} compressed, {} reused "
        "from the "
        "previous wheel; {} hard links)\n",
        s.wheel->string(), error ? 0.0 : static_cast<double>(size) / 1e6, s.entries,
        s.entries_compressed, s.entries_reused, s.hard_links);
  }
  return text;
}

std::string format_build_summary_markdown(const BuildSummary& s) {
  if (!s.any) {
    return "";
  }
  std::string text = "### ascend-setup build summary\n\n| measure | value |\n|---|---|\n";
  const auto row = [&text](const std::string& what, const std::string& value) {
    // A cell holds no pipe and no line break.
    std::string cell = replace_all(replace_all(value, "|", "\\|"), "\n", " ");
    text += "| " + what + " | " + cell + " |\n";
  };
  row("objects compiled", std::to_string(s.objects_compiled));
  row("objects up to date", std::to_string(s.objects_up_to_date));
  for (const auto& [name, seconds] : phase_rows(s)) {
    row(name, fmt::format("{:.1f} s", seconds));
  }
  if (const CompileCacheFigures& cache = s.compile_cache; cache.any()) {
    row("compile cache", cache_figures_text(cache));
  }
  if (s.wheel) {
    std::error_code error;
    const auto size = fs::file_size(*s.wheel, error);
    row("wheel", fmt::format("`{}` ({:.1f} MB, {} entries)", s.wheel->filename().string(),
                             error ? 0.0 : static_cast<double>(size) / 1e6, s.entries));
  }
  return text + "\n";
}

void print_build_summary() {
  const std::string text = format_build_summary(build_summary());
  if (!text.empty()) {
    std::cerr << shown_text(text) << std::flush;
  }
}

}  // namespace ascend_setup
