#include "base/build/build_summary.hpp"

#include "base/util/shown_url.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <iostream>
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

// "N hits (L local, R remote), M misses, U not cacheable".
std::string cache_figures_text(const CompileCacheFigures& cache) {
  return fmt::format("{} hits ({} local, {} remote), {} misses, {} not cacheable",
                     cache.local_hits + cache.remote_hits, cache.local_hits, cache.remote_hits,
                     cache.misses, cache.uncacheable);
}

}  // namespace

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
                   WallClock::time_point start, double seconds) {
  BuildSummary& summary = build_summary();
  summary.build_dir = build_dir;
  // The wall time some link job ran: the union of their intervals (parallel
  // links counted once).
  std::vector<std::pair<long long, long long>> links;
  for (NinjaJob& job : ninja_jobs_since(build_dir, before)) {
    if (!is_object(job.output) && is_link(job.output)) {
      links.emplace_back(job.start_ms, job.end_ms);
    }
    job.run_start = start;
    summary.jobs.push_back(std::move(job));
  }
  std::sort(links.begin(), links.end());
  long long link_ms = 0;
  long long covered_to = 0;
  for (const auto& [from, to] : links) {
    link_ms += std::max(0LL, to - std::max(from, covered_to));
    covered_to = std::max(covered_to, to);
  }
  const double link_seconds = std::min(seconds, static_cast<double>(link_ms) / 1000.0);
  const double compile_seconds = seconds - link_seconds;
  summary.phases.push_back({BuildPhase::compile, start, compile_seconds});
  if (link_seconds > 0) {
    summary.phases.push_back({BuildPhase::link,
                              start + std::chrono::duration_cast<WallClock::duration>(
                                          std::chrono::duration<double>(compile_seconds)),
                              link_seconds});
  }
}

std::string format_build_summary(const BuildSummary& s) {
  if (!s.any) {
    return "";
  }
  // Every phase from configure on; download and patch when they ran.
  std::vector<std::string> phases;
  for (const BuildPhase phase : all_build_phases) {
    const double seconds = s.seconds(phase);
    if (seconds > 0 || (phase != BuildPhase::download && phase != BuildPhase::patch)) {
      phases.push_back(fmt::format("{} {:.1f} s", build_phase_name(phase), seconds));
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
  for (const BuildPhase phase : all_build_phases) {
    row(std::string(build_phase_name(phase)), fmt::format("{:.1f} s", s.seconds(phase)));
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
