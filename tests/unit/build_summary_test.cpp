#include "base/build/build_summary.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

namespace {

using namespace ascend_setup;
using test_support::TempDir;
using test_support::write_file;

// CMake's configure recompacts .ninja_log (ninja -t recompact): the log
// comes back shorter, its older lines dropped. Only entries that are new or
// changed count as built; a byte offset taken before would have counted the
// whole log again.
TEST(BuildSummary, ARecompactedLogCountsOnlyWhatThisBuildRan) {
  TempDir dir;
  write_file(
      dir.path() / "build.ninja",
      "build a.o: CXX_COMPILER__x\nbuild b.o: CXX_COMPILER__x\nbuild c.o: CXX_COMPILER__x\n");
  write_file(dir.path() / ".ninja_log",
             "# ninja log v5\n0\t10\t100\ta.o\tx1\n0\t10\t100\tb.o\tx2\n0\t10\t100\tc.o\tx3\n"
             "0\t20\t90\ta.o\tx0\n0\t10\t100\ta.o\tx1\n");
  const NinjaLogEntries before = ninja_log_entries(dir.path());
  EXPECT_EQ(before.size(), 3u);
  // Recompacted (one line an output), then b.o built again.
  write_file(dir.path() / ".ninja_log",
             "# ninja log v5\n0\t10\t100\ta.o\tx1\n0\t10\t100\tc.o\tx3\n0\t12\t200\tb.o\tx2\n");
  build_summary() = BuildSummary{};
  add_ninja_build(dir.path(), before, 1.0);
  EXPECT_EQ(build_summary().objects_compiled, 1);
  EXPECT_EQ(build_summary().objects_up_to_date, 2);

  // Nothing ran: nothing built.
  build_summary() = BuildSummary{};
  add_ninja_build(dir.path(), ninja_log_entries(dir.path()), 0.0);
  EXPECT_EQ(build_summary().objects_compiled, 0);
  EXPECT_EQ(build_summary().objects_up_to_date, 3);
}

TEST(BuildSummary, TheCompileCacheLineOnlyWhenCompilesWentThroughIt) {
  BuildSummary summary;
  summary.any = true;
  EXPECT_EQ(format_build_summary(summary).find("compile cache"), std::string::npos);
  summary.compile_cache = parse_ccache_stats_log(
                              "# /t/a.cpp\ncache_miss\n# /t/b.cpp\ndirect_cache_hit\n"
                              "remote_storage_hit\n# /t/c.cpp\ndirect_cache_hit\n")
                              .figures;
  EXPECT_NE(format_build_summary(summary).find(
                "compile cache 2 hits (1 local, 1 remote), 1 misses, 0 not cacheable"),
            std::string::npos);
}

}  // namespace
