#include "base/build/compile_cache_log.hpp"

#include <gtest/gtest.h>

namespace ascend_setup {
namespace {

// Records as ccache 4.7 writes them (taken from real runs against a local
// cache and a redis remote storage).
constexpr const char* kLog =
    "# /t/a.cpp\ncache_miss\ndirect_cache_miss\nlocal_storage_miss\nlocal_storage_write\n"
    "remote_storage_miss\nremote_storage_write\n"
    "# /t/b.cpp\ndirect_cache_hit\nlocal_storage_miss\nlocal_storage_write\nremote_storage_hit\n"
    "remote_storage_read_hit\n"
    "# /t/c.cpp\ndirect_cache_hit\nlocal_storage_hit\nlocal_storage_read_hit\n"
    "# /t/d.cpp\npreprocessed_cache_hit\nlocal_storage_hit\n"
    "# /t/e.cpp\ncache_miss\npreprocessed_cache_miss\nremote_storage_error\n"
    "# /t/f.o\ncalled_for_link\n";

TEST(CompileCacheLog, EachCompileClassifiedInOrder) {
  const CompileCacheLog log = parse_ccache_stats_log(kLog);
  ASSERT_EQ(log.compiles.size(), 6u);
  EXPECT_EQ(log.compiles[0].source, "/t/a.cpp");
  EXPECT_EQ(log.compiles[0].outcome, CacheOutcome::miss);
  EXPECT_EQ(log.compiles[1].outcome, CacheOutcome::remote_hit);
  EXPECT_EQ(log.compiles[2].outcome, CacheOutcome::local_hit);
  EXPECT_EQ(log.compiles[3].outcome, CacheOutcome::local_hit);
  EXPECT_EQ(log.compiles[4].outcome, CacheOutcome::miss);
  EXPECT_TRUE(log.compiles[4].remote_error);
  EXPECT_FALSE(log.compiles[0].remote_error);
  EXPECT_EQ(log.compiles[5].outcome, CacheOutcome::uncacheable);
  EXPECT_EQ(log.figures.local_hits, 2);
  EXPECT_EQ(log.figures.remote_hits, 1);
  EXPECT_EQ(log.figures.misses, 2);
  EXPECT_EQ(log.figures.uncacheable, 1);
  EXPECT_EQ(log.figures.remote_errors, 1);
  EXPECT_TRUE(log.figures.any());
}

TEST(CompileCacheLog, OutsideTextIsReadWithoutThrowing) {
  EXPECT_FALSE(parse_ccache_stats_log("").figures.any());
  EXPECT_FALSE(parse_ccache_stats_log("cache_miss\n\n#\n").figures.any());
  const CompileCacheLog torn = parse_ccache_stats_log("# /t/a.cpp\r\ndirect_cache_hit\r\n# /t/b.c");
  ASSERT_EQ(torn.compiles.size(), 2u);
  EXPECT_EQ(torn.compiles[0].source, "/t/a.cpp");
  EXPECT_EQ(torn.compiles[0].outcome, CacheOutcome::local_hit);
  EXPECT_EQ(torn.compiles[1].outcome, CacheOutcome::uncacheable);
  EXPECT_EQ(cache_outcome_name(CacheOutcome::remote_hit), "remote hit");
}

}  // namespace
}  // namespace ascend_setup
