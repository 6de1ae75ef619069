// ccache's statistics log (its `stats_log` setting, CCACHE_STATSLOG): for
// every ccache call, a line "# <source file as the compiler was given it>"
// followed by the names of the counters that call raised, one per line. The
// log is the build's own record of each compile's outcome, unlike
// `ccache --print-stats`, whose counters every build sharing the cache
// directory raises. Read as outside text: unknown lines are ignored, a
// counter before any "#" line belongs to no compile, nothing throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

enum class CacheOutcome {
  local_hit,    // found in the local cache directory
  remote_hit,   // found in the remote storage (then written locally)
  miss,         // compiled, and the result stored
  uncacheable,  // ccache did not cache this call (a link, an unsupported option, ...)
};

// "local hit", "remote hit", "miss", "uncacheable".
std::string_view cache_outcome_name(CacheOutcome outcome);

struct CompileCacheFigures {
  int local_hits = 0;
  int remote_hits = 0;
  int misses = 0;
  int uncacheable = 0;
  int remote_errors = 0;  // calls that could not reach the remote storage
  bool any() const { return local_hits + remote_hits + misses + uncacheable > 0; }
};

struct CachedCompile {
  std::string source;  // as the log names it (CMake passes absolute paths)
  CacheOutcome outcome = CacheOutcome::uncacheable;
  bool remote_error = false;
};

struct CompileCacheLog {
  std::vector<CachedCompile> compiles;  // in the log's order
  CompileCacheFigures figures;
};

// remote_storage_hit → remote hit; else direct_cache_hit or
// preprocessed_cache_hit → local hit; else cache_miss → miss; else uncacheable.
CompileCacheLog parse_ccache_stats_log(std::string_view text);

}  // namespace ascend_setup
