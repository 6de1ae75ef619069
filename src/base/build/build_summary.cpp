#include "base/build/build_summary.hpp"

#include "base/util/whole_file.hpp"

#include <spdlog/fmt/fmt.h>

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

}  // namespace

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

void add_ninja_build(const fs::path& build_dir, const NinjaLogEntries& before,
                     double build_seconds) {
  BuildSummary& summary = build_summary();
  summary.any = true;
  std::set<std::string> compiled;
  double link_ms = 0;
  for (const auto& [output, line] : ninja_log_entries(build_dir)) {
    const auto old = before.find(output);
    if (old != before.end() && old->second == line) {
      continue;  // not run by this build
    }
    std::istringstream fields(line);
    long long start = 0;
    long long end = 0;
    if (!(fields >> start >> end)) {
      continue;
    }
    if (is_object(output)) {
      compiled.insert(output);
    } else if (is_link(output)) {
      link_ms += static_cast<double>(end - start);
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
  const double link_seconds = std::min(build_seconds, link_ms / 1000.0);
  summary.link_seconds += link_seconds;
  summary.compile_seconds += build_seconds - link_seconds;
}

std::string format_build_summary(const BuildSummary& s) {
  if (!s.any) {
    return "";
  }
  std::string text = fmt::format(
      "ascend-setup: build summary: {} objects compiled, {} up to date; configure {:.1f} s, "
      "compile {:.1f} s, "
      "link {:.1f} s, pack {:.1f} s, repair {:.1f} s\n",
      s.objects_compiled, s.objects_up_to_date, s.configure_seconds, s.compile_seconds,
      s.link_seconds, s.pack_seconds, s.repair_seconds);
  if (const CompileCacheFigures& cache = s.compile_cache; cache.any()) {
    text += fmt::format(
        "ascend-setup: build summary: compile cache {} hits ({} local, {} remote), {} misses, {} "
        "not cacheable\n",
        cache.local_hits + cache.remote_hits, cache.local_hits, cache.remote_hits, cache.misses,
        cache.uncacheable);
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

void print_build_summary() {
  const std::string text = format_build_summary(build_summary());
  if (!text.empty()) {
    std::cerr << text << std::flush;
  }
}

}  // namespace ascend_setup
