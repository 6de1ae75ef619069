#include "base/build/build_report.hpp"

#include "base/layer/environment.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/github_actions.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/staged_replacement.hpp"
#include "base/util/system_error.hpp"
#include "base/util/whole_file.hpp"
#include "base/wheel/zip_reader.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <sstream>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr size_t listed_rows = 20;  // the slowest jobs, the largest entries

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double seconds_between(WallClock::time_point from, WallClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

WallClock::time_point job_start(const NinjaJob& job) {
  return job.run_start + std::chrono::milliseconds(job.start_ms);
}

WallClock::time_point job_end(const NinjaJob& job) {
  return job.run_start + std::chrono::milliseconds(job.end_ms);
}

std::string outcome_class(const std::map<std::string, CacheOutcome>& outcomes,
                          const std::string& output) {
  const auto found = outcomes.find(output);
  if (found == outcomes.end()) {
    return "none";
  }
  std::string name(cache_outcome_name(found->second));
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

std::string outcome_text(const std::map<std::string, CacheOutcome>& outcomes,
                         const std::string& output) {
  const auto found = outcomes.find(output);
  return found == outcomes.end() ? "" : std::string(cache_outcome_name(found->second));
}

fs::path absolute_in(const fs::path& path, const fs::path& directory) {
  return (path.is_absolute() ? path : directory / path).lexically_normal();
}

// The path after the command's -o (or -o<path>), "" when none.
std::string output_of_command(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "-o" && i + 1 < words.size()) {
      return words[i + 1];
    }
    if (words[i].size() > 2 && words[i].rfind("-o", 0) == 0) {
      return words[i].substr(2);
    }
  }
  return "";
}

const char* report_style = R"(
body { font: 14px/1.4 sans-serif; margin: 1.5em; color: #1d2330; background: #ffffff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
pre.summary { background: #eef1f6; padding: 0.8em; white-space: pre-wrap; }
table { border-collapse: collapse; }
th, td { padding: 2px 8px; text-align: left; vertical-align: middle; }
tr:nth-child(even) td { background: #f5f6f9; }
td.name { font-family: monospace; word-break: break-all; max-width: 36em; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.track { width: 48em; min-width: 24em; position: relative; height: 14px; padding: 0; }
.bar { position: absolute; top: 2px; height: 11px; border-radius: 2px; min-width: 2px; }
.legend .bar { position: static; display: inline-block; width: 2em; vertical-align: middle; }
.phase { background: #5b6b8c; }
.local-hit { background: #2e9e57; }
.remote-hit { background: #1f7bd1; }
.miss { background: #d9822b; }
.uncacheable { background: #9a9a9a; }
.none { background: #b5651d; }
)";

}  // namespace

std::map<std::string, CacheOutcome> cache_outcomes_by_output(const fs::path& build_dir,
                                                             std::string_view compile_commands_json,
                                                             std::string_view stats_log) {
  std::map<std::string, CacheOutcome> by_source;
  for (const CachedCompile& compile : parse_ccache_stats_log(stats_log).compiles) {
    by_source[absolute_in(compile.source, build_dir).string()] = compile.outcome;
  }
  std::map<std::string, CacheOutcome> by_output;
  const nlohmann::json commands = nlohmann::json::parse(compile_commands_json, nullptr, false);
  if (!commands.is_array()) {
    return by_output;
  }
  for (const auto& entry : commands) {
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string()) {
      continue;
    }
    const fs::path directory = entry.contains("directory") && entry["directory"].is_string()
                                   ? fs::path(entry["directory"].get<std::string>())
                                   : build_dir;
    const auto outcome =
        by_source.find(absolute_in(entry["file"].get<std::string>(), directory).string());
    if (outcome == by_source.end()) {
      continue;
    }
    std::string output;
    if (entry.contains("output") && entry["output"].is_string()) {
      output = entry["output"].get<std::string>();
    } else if (entry.contains("arguments") && entry["arguments"].is_array()) {
      std::vector<std::string> words;
      for (const auto& word : entry["arguments"]) {
        if (word.is_string()) {
          words.push_back(word.get<std::string>());
        }
      }
      output = output_of_command(words);
    } else if (entry.contains("command") && entry["command"].is_string()) {
      std::istringstream split(entry["command"].get<std::string>());
      std::vector<std::string> words;
      for (std::string word; split >> word;) {
        words.push_back(word);
      }
      output = output_of_command(words);
    }
    if (output.empty()) {
      continue;
    }
    // As ninja names it: relative to the build directory.
    const fs::path absolute = absolute_in(output, directory);
    const fs::path relative = absolute.lexically_relative(build_dir.lexically_normal());
    const bool inside = !relative.empty() && *relative.begin() != "..";
    by_output[inside ? relative.string() : absolute.string()] = outcome->second;
  }
  return by_output;
}

std::string build_report_html(const BuildSummary& summary,
                              const std::map<std::string, CacheOutcome>& outcomes,
                              const std::vector<WheelEntrySize>& largest_entries) {
  std::vector<const NinjaJob*> jobs;
  for (const NinjaJob& job : summary.jobs) {
    jobs.push_back(&job);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const NinjaJob* a, const NinjaJob* b) {
    return job_start(*a) < job_start(*b);
  });
  // The timeline's extent: every span and every job.
  std::optional<WallClock::time_point> first;
  std::optional<WallClock::time_point> last;
  const auto extend = [&](WallClock::time_point from, WallClock::time_point to) {
    first = first ? std::min(*first, from) : from;
    last = last ? std::max(*last, to) : to;
  };
  const auto span_end = [](const PhaseSpan& span) {
    return span.start + std::chrono::duration_cast<WallClock::duration>(
                            std::chrono::duration<double>(span.seconds));
  };
  for (const PhaseSpan& span : summary.phases) {
    extend(span.start, span_end(span));
  }
  for (const NinjaJob* job : jobs) {
    extend(job_start(*job), job_end(*job));
  }
  const WallClock::time_point origin = first.value_or(WallClock::time_point{});
  const double total = std::max(1e-3, first ? seconds_between(*first, *last) : 0.0);
  const auto row = [&](const std::string& cls, const std::string& name, const std::string& cache,
                       WallClock::time_point from, WallClock::time_point to) {
    const double left = seconds_between(origin, from) / total * 100;
    const double width = seconds_between(from, to) / total * 100;
    return fmt::format(
        "<tr class=\"{}\"><td class=\"name\">{}</td><td>{}</td><td class=\"number\">{:.2f}</td>"
        "<td class=\"number\">{:.2f}</td><td class=\"track\"><div class=\"bar {}\" "
        "style=\"left:{:.3f}%;width:{:.3f}%\" title=\"{}\"></div></td></tr>\n",
        cls == "phase" ? "phase-row" : "job-row", html_escape(name), html_escape(cache),
        seconds_between(origin, from), seconds_between(from, to), cls, left, width,
        html_escape(name));
  };

  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>ascend-setup build report</title>\n<style>";
  html += report_style;
  html += "</style>\n</head>\n<body>\n<h1>ascend-setup build report</h1>\n";
  html += "<pre class=\"summary\">" + html_escape(format_build_summary(summary)) + "</pre>\n";

  html += fmt::format("<h2>Timeline: {} phase spans, {} jobs, {:.1f} s</h2>\n",
                      summary.phases.size(), jobs.size(), total);
  html +=
      "<p class=\"legend\">compile cache: <span class=\"bar local-hit\"></span> local hit "
      "<span class=\"bar remote-hit\"></span> remote hit <span class=\"bar miss\"></span> miss "
      "<span class=\"bar uncacheable\"></span> not cacheable <span class=\"bar none\"></span> "
      "not through the cache (link, custom command) <span class=\"bar phase\"></span> "
      "phase</p>\n";
  html +=
      "<table class=\"timeline\">\n<thead><tr><th>phase or job</th><th>compile cache</th>"
      "<th>start (s)</th><th>seconds</th><th>timeline</th></tr></thead>\n<tbody>\n";
  for (const PhaseSpan& span : summary.phases) {
    html += row("phase", std::string(build_phase_name(span.phase)), "", span.start, span_end(span));
  }
  for (const NinjaJob* job : jobs) {
    html += row(outcome_class(outcomes, job->output), job->output,
                outcome_text(outcomes, job->output), job_start(*job), job_end(*job));
  }
  html += "</tbody>\n</table>\n";

  std::vector<const NinjaJob*> slowest = jobs;
  std::stable_sort(slowest.begin(), slowest.end(), [](const NinjaJob* a, const NinjaJob* b) {
    return a->end_ms - a->start_ms > b->end_ms - b->start_ms;
  });
  slowest.resize(std::min(slowest.size(), listed_rows));
  html +=
      "<h2>Slowest jobs</h2>\n<table class=\"slowest\">\n<thead><tr><th>job</th><th>seconds</th>"
      "<th>compile cache</th></tr></thead>\n<tbody>\n";
  for (const NinjaJob* job : slowest) {
    html += fmt::format(
        "<tr><td class=\"name\">{}</td><td class=\"number\">{:.3f}</td><td>{}</td></tr>\n",
        html_escape(job->output), static_cast<double>(job->end_ms - job->start_ms) / 1000.0,
        html_escape(outcome_text(outcomes, job->output)));
  }
  html += "</tbody>\n</table>\n";

  html += "<h2>Largest wheel entries</h2>\n";
  if (largest_entries.empty()) {
    html += "<p>No wheel was written by this build.</p>\n";
  } else {
    html += "<p class=\"name\">" + html_escape(summary.wheel ? summary.wheel->string() : "") +
            "</p>\n<table class=\"entries\">\n<thead><tr><th>entry</th><th>bytes</th>"
            "<th>compressed</th></tr></thead>\n<tbody>\n";
    for (const WheelEntrySize& entry : largest_entries) {
      html += fmt::format(
          "<tr><td class=\"name\">{}</td><td class=\"number\">{}</td><td "
          "class=\"number\">{}</td></tr>\n",
          html_escape(entry.name), entry.size, entry.compressed_size);
    }
    html += "</tbody>\n</table>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

namespace {

std::vector<WheelEntrySize> largest_wheel_entries(const BuildSummary& summary) {
  std::vector<WheelEntrySize> entries;
  if (!summary.wheel) {
    return entries;
  }
  const ZipReader wheel(*summary.wheel);
  for (const ZipEntry& entry : wheel.entries()) {
    entries.push_back({entry.name, entry.size, entry.compressed_size});
  }
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const WheelEntrySize& a, const WheelEntrySize& b) { return a.size > b.size; });
  entries.resize(std::min(entries.size(), listed_rows));
  return entries;
}

// `target` replaced whole by `bytes` as shown (shown_url.hpp): a page
// people read and share.
void replace_file(const HeldLock& build_lock, const fs::path& target, const std::string& bytes) {
  fs::create_directories(target.parent_path());
  StagedReplacement staged(build_lock, target, "report");
  write_whole_file(staged.staged(), shown_text(bytes));
  staged.commit();
}

}  // namespace

void record_build(const fs::path& tree_root, const HeldLock& build_lock) {
  const BuildSummary& summary = build_summary();
  try {
    if (!summary.jobs.empty()) {
      std::map<std::string, CacheOutcome> outcomes;
      if (const auto log = read_whole_file(compile_cache_log_path(tree_root))) {
        outcomes = cache_outcomes_by_output(
            summary.build_dir,
            read_whole_file(summary.build_dir / "compile_commands.json").value_or(""), *log);
      }
      std::vector<WheelEntrySize> entries;
      try {
        entries = largest_wheel_entries(summary);
      } catch (const Error& error) {
        spdlog::warn("the build report lists no wheel entries: {}", error.what());
      }
      // A name that is not UTF-8 (ninja writes bytes) gets U+FFFD, not an error.
      replace_file(build_lock, build_trace_path(tree_root),
                   build_trace(summary, outcomes)
                           .dump(1, ' ', false, nlohmann::json::error_handler_t::replace) +
                       "\n");
      replace_file(build_lock, build_report_path(tree_root),
                   build_report_html(summary, outcomes, entries));
      spdlog::info("build trace {} (Perfetto opens it), build report {}",
                   build_trace_path(tree_root).string(), build_report_path(tree_root).string());
    }
  } catch (const Error& error) {
    spdlog::warn("the build trace and report were not written: {}", error.what());
  } catch (const fs::filesystem_error& error) {
    spdlog::warn("the build trace and report were not written: {}", system_error(error).what());
  }
  try {
    const GithubActions github = github_actions_from_environment();
    if (github.on && github.step_summary && summary.any) {
      append_step_summary(*github.step_summary, format_build_summary_markdown(summary));
    }
  } catch (const Error& error) {
    spdlog::warn("the GitHub step summary was not written: {}", error.what());
  }
}

}  // namespace ascend_setup
