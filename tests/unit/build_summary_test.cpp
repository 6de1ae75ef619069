#include "base/build/build_summary.hpp"
#include "ninja_run.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace {

using namespace ascend_setup;
using test_support::record_ninja_run;
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
  add_ninja_build(dir.path(), before);
  EXPECT_EQ(build_summary().objects_compiled, 1);
  EXPECT_EQ(build_summary().objects_up_to_date, 2);

  // Nothing ran: nothing built.
  build_summary() = BuildSummary{};
  add_ninja_build(dir.path(), ninja_log_entries(dir.path()));
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

// A ninja run's jobs keep the run's start; the spans are ninja's intervals:
// the link span where link jobs ran (two in parallel counted once), the
// compile span where the other jobs ran, both named in the line.
TEST(BuildSummary, ANinjaRunSplitsIntoCompileAndLinkSpans) {
  TempDir dir;
  build_summary() = BuildSummary{};
  const WallClock::time_point start = WallClock::now();
  record_ninja_run(dir.path(), "# ninja log v5\n0\t10\t1\tCMakeFiles/x.dir/a.cpp.o\tx1\n",
                   "# ninja log v5\n0\t10\t1\tCMakeFiles/x.dir/a.cpp.o\tx1\n"
                   "5\t900\t2\tCMakeFiles/x.dir/b.cpp.o\tx2\n900\t1400\t3\tlib/libx.so\tx3\n"
                   "1000\t1300\t3\tbin/tool\tx4\n",
                   start);
  const BuildSummary& summary = build_summary();
  ASSERT_EQ(summary.jobs.size(), 3u);
  EXPECT_EQ(summary.jobs[0].output, "CMakeFiles/x.dir/b.cpp.o");
  EXPECT_EQ(summary.jobs[2].output, "lib/libx.so");
  EXPECT_EQ(summary.jobs[2].start_ms, 900);
  EXPECT_EQ(summary.jobs[2].end_ms, 1400);
  EXPECT_EQ(summary.jobs[2].run_start, start);
  EXPECT_DOUBLE_EQ(summary.seconds(BuildPhase::link), 0.5);
  EXPECT_DOUBLE_EQ(summary.seconds(BuildPhase::compile), 0.895);
  EXPECT_FALSE(summary.overlap(BuildPhase::compile, BuildPhase::link));
  EXPECT_EQ(summary.build_dir, dir.path());
  build_summary().any = true;
  const std::string line = format_build_summary(summary);
  EXPECT_NE(line.find("compile 0.9 s, link 0.5 s"), std::string::npos) << line;
  EXPECT_EQ(line.find("download"), std::string::npos) << "no download ran: " << line;
}

// Links interleave with compiles: a static library links while objects of
// another target compile. The spans are where the jobs ran, not a link
// block drawn after the compiles, and the summary, which cannot split one
// second between two phases, says "compile and link" for their union.
TEST(BuildSummary, ALinkDuringTheCompilesIsSaidAsCompileAndLink) {
  TempDir dir;
  build_summary() = BuildSummary{};
  const WallClock::time_point start = WallClock::now();
  record_ninja_run(dir.path(), "# ninja log v5\n",
                   "# ninja log v5\n0\t500\t1\tCMakeFiles/a.dir/a.cpp.o\tx1\n"
                   "50\t600\t1\tCMakeFiles/b.dir/b.cpp.o\tx2\n100\t300\t2\tlib/liba.a\tx3\n"
                   "600\t900\t3\tlib/libb.so\tx4\n1000\t1200\t4\tCMakeFiles/c.dir/c.cpp.o\tx5\n"
                   "1201\t1300\t4\tCMakeFiles/c.dir/d.cpp.o\tx6\n",
                   start);
  BuildSummary& summary = build_summary();
  const auto at = [&](long long ms) {
    return start + std::chrono::duration_cast<WallClock::duration>(std::chrono::milliseconds(ms));
  };
  std::vector<std::tuple<BuildPhase, WallClock::time_point, double>> spans;
  for (const PhaseSpan& span : summary.phases) {
    spans.emplace_back(span.phase, span.start, span.seconds);
  }
  const std::vector<std::tuple<BuildPhase, WallClock::time_point, double>> expected = {
      {BuildPhase::compile, at(0), 0.6},
      {BuildPhase::compile, at(1000), 0.3},  // ninja's moment between two jobs included
      {BuildPhase::link, at(100), 0.2},
      {BuildPhase::link, at(600), 0.3}};
  EXPECT_EQ(spans, expected);
  EXPECT_TRUE(summary.overlap(BuildPhase::compile, BuildPhase::link));
  summary.any = true;
  const std::string line = format_build_summary(summary);
  // [0, 900] and [1000, 1300]: 1.2 s.
  EXPECT_NE(line.find("configure 0.0 s, compile and link 1.2 s, pack 0.0 s"), std::string::npos)
      << line;
  const std::string table = format_build_summary_markdown(summary);
  EXPECT_NE(table.find("| compile and link | 1.2 s |\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("| compile |"), std::string::npos) << table;
  EXPECT_EQ(table.find("| link |"), std::string::npos) << table;
}

// GitHub's step summary: a Markdown table (a |---| row) with every phase.
TEST(BuildSummary, TheMarkdownSummaryIsATable) {
  BuildSummary summary;
  EXPECT_EQ(format_build_summary_markdown(summary), "");
  summary.any = true;
  summary.objects_compiled = 8;
  summary.phases.push_back({BuildPhase::download, WallClock::now(), 2.5});
  const std::string text = format_build_summary_markdown(summary);
  EXPECT_NE(text.find("\n|---|---|\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| objects compiled | 8 |\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| download | 2.5 s |\n"), std::string::npos) << text;
  for (const BuildPhase phase : all_build_phases) {
    EXPECT_NE(text.find("| " + std::string(build_phase_name(phase)) + " | "), std::string::npos)
        << text;
  }
}

}  // namespace
