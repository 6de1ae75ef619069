// The one summary at the end of a build, on stderr: objects compiled and up
// to date (from ninja's .ninja_log and build.ninja), seconds in configure,
// compile, link, pack and repair, the compile cache's hits (local and
// remote) and misses, the wheel's size and path. The overrides
// add to it as the phases run; print_build_summary() prints it once, when
// something was built or packed (a --name or --version run prints nothing).
#pragma once

#include "base/build/compile_cache_log.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace ascend_setup {

struct BuildSummary {
  bool any = false;
  int objects_compiled = 0;
  int objects_up_to_date = 0;
  double configure_seconds = 0;
  double compile_seconds = 0;
  double link_seconds = 0;
  double pack_seconds = 0;
  double repair_seconds = 0;
  size_t entries = 0;
  size_t entries_reused = 0;
  size_t entries_compressed = 0;
  size_t hard_links = 0;
  std::optional<std::filesystem::path> wheel;
  // The compile cache's outcomes for this build's compiles (ccache's stats
  // log); printed when any compile went through the cache.
  CompileCacheFigures compile_cache;
};

BuildSummary& build_summary();

// The entries of `build_dir`/.ninja_log: each output's last line, as ninja
// wrote it (empty when there is no log).
using NinjaLogEntries = std::map<std::string, std::string>;
NinjaLogEntries ninja_log_entries(const std::filesystem::path& build_dir);

// What ninja did in `build_dir` since the log held `before`: objects whose
// entry is new or changed were built, and the link steps' seconds; objects
// of build.ninja not built are up to date. Entries, not a byte offset: CMake's
// configure recompacts the log (`ninja -t recompact`), which rewrites it
// shorter. Adds to the summary; `build_seconds` (the wall time of the build
// calls) is split into compile = build - link.
void add_ninja_build(const std::filesystem::path& build_dir, const NinjaLogEntries& before,
                     double build_seconds);

// The lines; empty when nothing was built or packed.
std::string format_build_summary(const BuildSummary& summary);
void print_build_summary();

}  // namespace ascend_setup
