#include "base/build/build_report.hpp"
#include "base/tree/state_paths.hpp"
#include "ninja_run.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <tuple>

namespace fs = std::filesystem;

namespace {

using namespace ascend_setup;
using test_support::record_ninja_run;
using test_support::TempDir;
using test_support::write_file;

long long micros(WallClock::time_point time) {
  return std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
}

// Jobs from a real .ninja_log through add_ninja_run, and phase spans.
BuildSummary summary_of_a_build(const fs::path& build_dir, WallClock::time_point start) {
  build_summary() = BuildSummary{};
  build_summary().phases.push_back({BuildPhase::configure, start - std::chrono::seconds(2), 1.5});
  record_ninja_run(build_dir, "# ninja log v5\n0\t10\t1\tCMakeFiles/old.dir/kept.cpp.o\tx0\n",
                   "# ninja log v5\n0\t10\t1\tCMakeFiles/old.dir/kept.cpp.o\tx0\n"
                   "3\t420\t2\tCMakeFiles/a.dir/src/util.cpp.o\tx1\n"
                   "5\t380\t2\tCMakeFiles/b.dir/src/util.cpp.o\tx2\n"
                   "7\t100\t2\tCMakeFiles/b.dir/lib/ir.cpp.o\tx3\n"
                   "420\t900\t3\tlib/libtriton.so\tx4\n",
                   start);
  build_summary().phases.push_back({BuildPhase::pack, start + std::chrono::seconds(1), 0.25});
  return build_summary();
}

// One complete event per job this build ran (not the log's older lines),
// named by its output with its directories, dur = end - start, ts = the
// run's start + ninja's start; overlapping jobs never share a lane; one
// event per phase span, named as the summary names it.
TEST(BuildTrace, EveryJobAndEveryPhaseIsACompleteEvent) {
  TempDir dir;
  const WallClock::time_point start = WallClock::now();
  const BuildSummary summary = summary_of_a_build(dir.path(), start);
  const nlohmann::json trace =
      build_trace(summary, {{"CMakeFiles/b.dir/lib/ir.cpp.o", CacheOutcome::remote_hit}});
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::map<std::string, nlohmann::json> jobs;
  std::multiset<std::string> phases;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") {
      continue;
    }
    if (event["cat"] == "job") {
      EXPECT_TRUE(jobs.emplace(event["name"].get<std::string>(), event).second) << event;
    } else {
      EXPECT_EQ(event["tid"], 0);
      phases.insert(event["name"].get<std::string>());
    }
  }
  const std::map<std::string, std::pair<long long, long long>> expected = {
      {"CMakeFiles/a.dir/src/util.cpp.o", {3, 420}},
      {"CMakeFiles/b.dir/src/util.cpp.o", {5, 380}},
      {"CMakeFiles/b.dir/lib/ir.cpp.o", {7, 100}},
      {"lib/libtriton.so", {420, 900}}};
  ASSERT_EQ(jobs.size(), expected.size()) << trace.dump(1);
  for (const auto& [output, times] : expected) {
    ASSERT_EQ(jobs.count(output), 1u) << output;
    const auto& event = jobs[output];
    EXPECT_EQ(event["dur"].get<long long>(), (times.second - times.first) * 1000) << event;
    EXPECT_EQ(event["ts"].get<long long>(), micros(start) + times.first * 1000) << event;
  }
  EXPECT_EQ(jobs["CMakeFiles/b.dir/lib/ir.cpp.o"]["args"]["compile cache"], "remote hit");
  // The three compiles overlap: three lanes; the link starts when one is free.
  std::set<int> lanes;
  for (const char* output : {"CMakeFiles/a.dir/src/util.cpp.o", "CMakeFiles/b.dir/src/util.cpp.o",
                             "CMakeFiles/b.dir/lib/ir.cpp.o"}) {
    lanes.insert(jobs[output]["tid"].get<int>());
  }
  EXPECT_EQ(lanes.size(), 3u);
  EXPECT_EQ(phases, (std::multiset<std::string>{"configure", "compile", "link", "pack"}));
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["name"] == "configure") {
      EXPECT_EQ(event["dur"], 1500000);
      EXPECT_EQ(event["ts"].get<long long>(), micros(start - std::chrono::seconds(2)));
    }
  }
}

// A link that ran while compiles did (a static library of one target while
// another target's objects compile) is drawn where it ran, overlapping the
// compile on a phase lane of its own, never as a block after the compiles;
// the jobs' lanes come after the phases'.
TEST(BuildTrace, ALinkDuringTheCompilesOverlapsThemOnALaneOfItsOwn) {
  TempDir dir;
  build_summary() = BuildSummary{};
  const WallClock::time_point start = WallClock::now();
  record_ninja_run(dir.path(), "# ninja log v5\n",
                   "# ninja log v5\n0\t500\t1\tCMakeFiles/a.dir/a.cpp.o\tx1\n"
                   "50\t600\t1\tCMakeFiles/b.dir/b.cpp.o\tx2\n100\t300\t2\tlib/liba.a\tx3\n"
                   "600\t900\t3\tlib/libb.so\tx4\n",
                   start);
  const nlohmann::json trace = build_trace(build_summary(), {});
  std::vector<std::tuple<std::string, long long, long long, int>> phases;
  int first_job_lane = 1 << 20;
  std::map<int, std::string> lane_names;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event.contains("tid")) {
      lane_names[event["tid"].get<int>()] = event["args"]["name"].get<std::string>();
    } else if (event["ph"] == "X" && event["cat"] == "phase") {
      phases.emplace_back(event["name"].get<std::string>(),
                          event["ts"].get<long long>() - micros(start),
                          event["dur"].get<long long>(), event["tid"].get<int>());
    } else if (event["ph"] == "X") {
      first_job_lane = std::min(first_job_lane, event["tid"].get<int>());
    }
  }
  // The compile from 0 to 600 ms on lane 0; the static library's link from
  // 100 to 300 ms beside it on lane 1; the last link from 600 to 900 ms.
  const std::vector<std::tuple<std::string, long long, long long, int>> expected = {
      {"compile", 0, 600000, 0}, {"link", 100000, 200000, 1}, {"link", 600000, 300000, 0}};
  EXPECT_EQ(phases, expected) << trace.dump(1);
  EXPECT_EQ(lane_names[0], "phases");
  EXPECT_EQ(lane_names[1], "phases 2");
  EXPECT_EQ(first_job_lane, 2);
  EXPECT_EQ(lane_names[2], "ninja job lane 1");
}

// compile_commands.json maps ccache's sources to ninja's outputs: by its
// "output", else the command's -o, relative to the build directory.
TEST(BuildReport, CacheOutcomesAreKeyedByNinjaOutputs) {
  const fs::path build = "/t/build/cmake.linux";
  const std::string commands = R"([
    {"directory": "/t/build/cmake.linux", "file": "/t/src/a.cpp",
     "output": "CMakeFiles/x.dir/src/a.cpp.o", "command": "c++ -c /t/src/a.cpp"},
    {"directory": "/t/build/cmake.linux", "file": "../../src/b.cpp",
     "command": "/usr/bin/ccache c++ -o CMakeFiles/x.dir/src/b.cpp.o -c ../../src/b.cpp"},
    {"directory": "/t/build/cmake.linux", "file": "/t/src/c.cpp",
     "arguments": ["c++", "-oCMakeFiles/x.dir/src/c.cpp.o", "-c", "/t/src/c.cpp"]},
    {"directory": "/t/build/cmake.linux", "file": "/t/src/d.cpp",
     "output": "CMakeFiles/x.dir/src/d.cpp.o"}
  ])";
  const std::string log =
      "# /t/src/a.cpp\ndirect_cache_hit\n# /t/src/b.cpp\nremote_storage_hit\n"
      "# /t/src/c.cpp\ncache_miss\n";
  const auto outcomes = cache_outcomes_by_output(build, commands, log);
  EXPECT_EQ(outcomes, (std::map<std::string, CacheOutcome>{
                          {"CMakeFiles/x.dir/src/a.cpp.o", CacheOutcome::local_hit},
                          {"CMakeFiles/x.dir/src/b.cpp.o", CacheOutcome::remote_hit},
                          {"CMakeFiles/x.dir/src/c.cpp.o", CacheOutcome::miss}}));
  EXPECT_TRUE(cache_outcomes_by_output(build, "not json", log).empty());
}

// Every job's name is in the page as text, its cache outcome marked; a job
// or a wheel entry named like markup is escaped, never markup.
TEST(BuildReport, NamesAreEscapedTextNeverMarkup) {
  TempDir dir;
  const WallClock::time_point start = WallClock::now();
  BuildSummary summary = summary_of_a_build(dir.path(), start);
  summary.jobs.push_back({"CMakeFiles/<script>alert(1)</script>.o", 1, 2, start});
  summary.jobs.push_back({"CMakeFiles/q\"'&.o", 1, 2, start});
  const std::string html = build_report_html(
      summary, {{"CMakeFiles/a.dir/src/util.cpp.o", CacheOutcome::local_hit}},
      {{"triton/<img src=x onerror=alert(1)>.so", 2048, 1024}, {"triton/_C/libtriton.so", 10, 5}});
  EXPECT_EQ(html.find("<script"), std::string::npos) << html;
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_NE(html.find("CMakeFiles/&lt;script&gt;alert(1)&lt;/script&gt;.o"), std::string::npos);
  EXPECT_NE(html.find("CMakeFiles/q&quot;&#39;&amp;.o"), std::string::npos);
  EXPECT_NE(html.find("triton/&lt;img src=x onerror=alert(1)&gt;.so"), std::string::npos);
  for (const char* output : {"CMakeFiles/a.dir/src/util.cpp.o", "CMakeFiles/b.dir/src/util.cpp.o",
                             "CMakeFiles/b.dir/lib/ir.cpp.o", "lib/libtriton.so"}) {
    EXPECT_NE(html.find(std::string("<td class=\"name\">") + output + "</td>"), std::string::npos)
        << output;
  }
  EXPECT_NE(html.find("<td class=\"name\">CMakeFiles/a.dir/src/util.cpp.o</td><td>local hit</td>"),
            std::string::npos);
  EXPECT_NE(html.find("class=\"bar local-hit\""), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos) << "nothing fetched";
}

// A build that ran no job keeps the last trace and report; one that did
// replaces both, a name that is not UTF-8 included (ninja logs bytes).
TEST(BuildReport, WrittenAfterABuildThatRanAJobOnly) {
  TempDir dir;
  const fs::path tree = dir.path() / "tree";
  write_file(build_trace_path(tree), "last\n");
  write_file(build_report_path(tree), "last\n");
  build_summary() = BuildSummary{};
  build_summary().any = true;
  build_summary().build_dir = dir.path() / "build";
  record_build(tree, test_support::test_writer_lock());
  EXPECT_EQ(test_support::read_file(build_trace_path(tree)), "last\n");
  EXPECT_EQ(test_support::read_file(build_report_path(tree)), "last\n");

  build_summary().jobs.push_back({"CMakeFiles/x.dir/bad\xff.cpp.o", 0, 5, WallClock::now()});
  record_build(tree, test_support::test_writer_lock());
  const auto trace = nlohmann::json::parse(test_support::read_file(build_trace_path(tree)));
  EXPECT_EQ(trace["traceEvents"].back()["name"], "CMakeFiles/x.dir/bad\xef\xbf\xbd.cpp.o");
  EXPECT_NE(test_support::read_file(build_report_path(tree)).find("CMakeFiles/x.dir/bad"),
            std::string::npos);
  build_summary() = BuildSummary{};
}

}  // namespace
