#include "base/build/compile_cache_log.hpp"

#include "base/util/strings.hpp"

#include <optional>
#include <set>
#include <sstream>

namespace ascend_setup {

std::string_view cache_outcome_name(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::local_hit:
      return "local hit";
    case CacheOutcome::remote_hit:
      return "remote hit";
    case CacheOutcome::miss:
      return "miss";
    case CacheOutcome::uncacheable:
      break;
  }
  return "uncacheable";
}

namespace {

CachedCompile classify(std::string source, const std::set<std::string, std::less<>>& counters) {
  CachedCompile compile{std::move(source), CacheOutcome::uncacheable, false};
  if (counters.contains("remote_storage_hit")) {
    compile.outcome = CacheOutcome::remote_hit;
  } else if (counters.contains("direct_cache_hit") || counters.contains("preprocessed_cache_hit")) {
    compile.outcome = CacheOutcome::local_hit;
  } else if (counters.contains("cache_miss")) {
    compile.outcome = CacheOutcome::miss;
  }
  compile.remote_error =
      counters.contains("remote_storage_error") || counters.contains("remote_storage_timeout");
  return compile;
}

void count(CompileCacheFigures& figures, const CachedCompile& compile) {
  switch (compile.outcome) {
    case CacheOutcome::local_hit:
      ++figures.local_hits;
      break;
    case CacheOutcome::remote_hit:
      ++figures.remote_hits;
      break;
    case CacheOutcome::miss:
      ++figures.misses;
      break;
    case CacheOutcome::uncacheable:
      ++figures.uncacheable;
      break;
  }
  figures.remote_errors += compile.remote_error ? 1 : 0;
}

}  // namespace

CompileCacheLog parse_ccache_stats_log(std::string_view text) {
  CompileCacheLog log;
  std::optional<std::string> source;
  std::set<std::string, std::less<>> counters;
  const auto finish = [&] {
    if (source) {
      log.compiles.push_back(classify(std::move(*source), counters));
      count(log.figures, log.compiles.back());
    }
    source.reset();
    counters.clear();
  };
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# ")) {
      finish();
      source = trim(std::string_view(line).substr(2), "\r");
    } else if (std::string counter = trim(line); source && !counter.empty()) {
      counters.insert(std::move(counter));
    }
  }
  finish();
  return log;
}

}  // namespace ascend_setup
