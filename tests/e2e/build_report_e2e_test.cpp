// What a build leaves to look at: the trace and the report after a build of
// the example tree, the report rendered by headless Chromium (Debian's
// `chromium`: every job of the build's .ninja_log in the rendered page, a
// screenshot that is not one colour), and GitHub Actions' conventions (the
// groups, the step summary, the annotations of a stale patch and of the
// doctor's findings).
#include "base/build/build_summary.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <set>
#include <sstream>

using namespace test_support;
namespace code = ascend_setup::exit_code;

namespace {

// The build directory upstream's setup.py configured (the one .ninja_log).
fs::path ninja_build_dir(const fs::path& tree) {
  for (const auto& entry : fs::recursive_directory_iterator(tree / "build")) {
    if (entry.path().filename() == ".ninja_log") {
      return entry.path().parent_path();
    }
  }
  return {};
}

// A PNG's pixels as RGBA rows, unfiltered (8-bit RGB or RGBA, not
// interlaced: what Chromium writes); empty when it is not such a PNG.
std::vector<std::vector<uint8_t>> png_rows(const std::string& png) {
  const auto be32 = [&png](size_t at) {
    return static_cast<uint32_t>(static_cast<uint8_t>(png[at])) << 24 |
           static_cast<uint32_t>(static_cast<uint8_t>(png[at + 1])) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(png[at + 2])) << 8 |
           static_cast<uint32_t>(static_cast<uint8_t>(png[at + 3]));
  };
  if (png.size() < 33 || png.compare(1, 3, "PNG") != 0) {
    return {};
  }
  uint32_t width = 0;
  uint32_t height = 0;
  int channels = 0;
  std::string compressed;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t length = be32(at);
    const std::string type = png.substr(at + 4, 4);
    if (at + 12 + length > png.size()) {
      return {};
    }
    if (type == "IHDR") {
      width = be32(at + 8);
      height = be32(at + 12);
      const int depth = png[at + 16];
      const int colour = png[at + 17];
      if (depth != 8 || (colour != 2 && colour != 6) || png[at + 20] != 0) {
        return {};
      }
      channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed += png.substr(at + 8, length);
    }
    at += 12 + length;
  }
  const size_t stride = static_cast<size_t>(width) * channels;
  std::vector<uint8_t> raw((stride + 1) * height);
  uLongf raw_size = raw.size();
  if (channels == 0 ||
      uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                 compressed.size()) != Z_OK ||
      raw_size != raw.size()) {
    return {};
  }
  std::vector<std::vector<uint8_t>> rows;
  std::vector<uint8_t> previous(stride, 0);
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    std::vector<uint8_t> row(raw.begin() + y * (stride + 1) + 1,
                             raw.begin() + (y + 1) * (stride + 1));
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<size_t>(channels) ? row[x - channels] : 0;
      const int b = previous[x];
      const int c = x >= static_cast<size_t>(channels) ? previous[x - channels] : 0;
      int predicted = 0;
      switch (filter) {
        case 1:
          predicted = a;
          break;
        case 2:
          predicted = b;
          break;
        case 3:
          predicted = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c;
          const int pa = std::abs(p - a);
          const int pb = std::abs(p - b);
          const int pc = std::abs(p - c);
          predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          break;
      }
      row[x] = static_cast<uint8_t>(row[x] + predicted);
    }
    previous = row;
    rows.push_back(std::move(row));
  }
  return rows;
}

// Whether `part` starts a line of `text`.
bool at_line_start(const std::string& text, const std::string& part) {
  return text.rfind(part, 0) == 0 || contains(text, "\n" + part);
}

// The distinct colours of a PNG (at most `limit` counted).
size_t png_colours(const std::string& png, size_t limit = 16) {
  std::set<std::vector<uint8_t>> colours;
  const auto rows = png_rows(png);
  const size_t channels = rows.empty() || rows[0].empty() ? 0 : (rows[0].size() % 4 == 0 ? 4 : 3);
  for (const auto& row : rows) {
    for (size_t x = 0; channels != 0 && x + channels <= row.size() && colours.size() < limit;
         x += channels) {
      colours.insert(std::vector<uint8_t>(row.begin() + x, row.begin() + x + channels));
    }
  }
  return colours.size();
}

class BuildReportE2e : public ExampleTreeTest {
 protected:
  BuildReportE2e() {
    env["MAX_JOBS"] = "2";
    env["TRITON_BUILD_WITH_CCACHE"] = "ON";
    env["CCACHE_DIR"] = (dir.path() / "ccache").string();
    // The compile cache as a user sets it: ascend-setup points ccache's
    // stats log where the report reads it.
    env["ASCEND_SETUP_COMPILE_CACHE"] = redis.url();
    for (const char* name : {"CCACHE_STATSLOG", "CCACHE_REMOTE_STORAGE", "CCACHE_BASEDIR"}) {
      env[name] = std::nullopt;
    }
  }

  // Chromium on `page`, headless in its own process group with a scratch
  // profile, bounded in time; `mode` is --dump-dom or --screenshot=<file>.
  // Returns what it wrote on stdout.
  std::string chromium(const fs::path& page, const std::string& mode) const {
    static int run = 0;
    const fs::path scratch = dir.path() / ("chromium-" + std::to_string(++run));
    fs::create_directories(scratch);
    const fs::path out = scratch / "stdout";
    BackgroundProcess browser(
        {"/bin/sh", "-c",
         "exec chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
         "--window-size=1400,1000 --user-data-dir=\"$1/profile\" \"$2\" \"$3\" >\"$1/stdout\" "
         "2>\"$1/stderr\"",
         "chromium", scratch.string(), mode, "file://" + page.string()});
    const auto exit = browser.exit_code(120);
    EXPECT_EQ(exit, std::optional<int>(0)) << read_file(scratch / "stderr");
    return fs::exists(out) ? read_file(out) : "";
  }

  RedisServer redis{dir.path() / "redis"};
};

// Checkout built twice (the second from an empty build directory: every
// compile a local cache hit): the trace has every job of the last build's
// .ninja_log with ninja's duration, the report renders each of them in
// Chromium with its cache outcome, and its screenshot is not blank.
TEST_F(BuildReportE2e, EveryJobOfTheBuildRendersInHeadlessChromium) {
  const auto first = host({"bdist_wheel"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path build_dir = ninja_build_dir(tree);
  ASSERT_FALSE(build_dir.empty());
  fs::remove_all(build_dir);
  const auto second = host({"bdist_wheel"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto jobs = ascend_setup::ninja_log_entries(build_dir);
  ASSERT_GE(jobs.size(), 8u);

  // The trace: one complete event per job, dur = ninja's end - start.
  const fs::path trace_path = ascend_setup::build_trace_path(tree);
  const auto trace = nlohmann::json::parse(read_file(trace_path));
  std::map<std::string, long long> durations;
  std::set<std::string> phases;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["cat"] == "job") {
      durations[event["name"]] = event["dur"];
    } else if (event["ph"] == "X") {
      phases.insert(event["name"].get<std::string>());
    }
  }
  EXPECT_EQ(durations.size(), jobs.size()) << trace.dump(1);
  for (const auto& [output, line] : jobs) {
    std::istringstream fields(line);
    long long start = 0;
    long long end = 0;
    fields >> start >> end;
    EXPECT_EQ(durations[output], (end - start) * 1000) << output;
  }
  for (const char* phase : {"configure", "compile", "pack"}) {
    EXPECT_EQ(phases.count(phase), 1u) << phase << " in " << trace.dump(1);
  }

  // The report as Chromium renders it: every job, the local hits marked.
  const fs::path report = ascend_setup::build_report_path(tree);
  const std::string dom = chromium(report, "--dump-dom");
  ASSERT_TRUE(contains(dom, "ascend-setup build report")) << dom.substr(0, 2000);
  int hits = 0;
  for (const auto& [output, line] : jobs) {
    const std::string cell = "<td class=\"name\">" + output + "</td>";
    EXPECT_TRUE(contains(dom, cell)) << output;
    hits += contains(dom, cell + "<td>local hit</td>") ? 1 : 0;
  }
  EXPECT_EQ(hits, 8) << "every object a local hit";
  EXPECT_TRUE(contains(dom, "Largest wheel entries")) << dom;
  EXPECT_TRUE(contains(dom, "libtriton")) << "the wheel's extension listed";

  const fs::path shot = dir.path() / "report.png";
  chromium(report, "--screenshot=" + shot.string());
  ASSERT_TRUE(fs::exists(shot));
  EXPECT_GT(png_colours(read_file(shot)), 2u) << "the screenshot is blank";
}

// The groups as GitHub's runner reads them: on their own lines, never
// nested, each closed, on a failing build too; the step summary keeps what
// the file held and gains a table.
TEST_F(BuildReportE2e, OnGithubActionsGroupsAndTheStepSummary) {
  const fs::path summary = dir.path() / "step-summary.md";
  write_file(summary, "# an earlier step\n");
  env["GITHUB_ACTIONS"] = "true";
  env["GITHUB_STEP_SUMMARY"] = summary.string();

  const auto check_groups = [](const std::string& err) {
    std::istringstream lines(err);
    std::optional<std::string> open;
    std::vector<std::string> names;
    for (std::string line; std::getline(lines, line);) {
      const auto group = line.find("::group::");
      const auto end = line.find("::endgroup::");
      if (group == std::string::npos && end == std::string::npos) {
        continue;
      }
      EXPECT_TRUE(group == 0 || end == 0) << "not at the start of a line: " << line;
      if (group == 0) {
        EXPECT_FALSE(open) << "nested in " << *open << ": " << line;
        open = line.substr(9);
        names.push_back(*open);
      } else {
        EXPECT_EQ(line, "::endgroup::");
        EXPECT_TRUE(open) << "closed twice";
        open.reset();
      }
    }
    EXPECT_FALSE(open) << "left open: " << *open;
    return names;
  };

  // stdout and stderr in one pipe, in the order written: the compile's output
  // (ninja's, on stdout) inside its group (on stderr).
  const auto merged = [this] {
    return ascend_setup::run_process(
        {{"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", ASCEND_SETUP_BINARY, "bdist_wheel"},
         tree,
         env,
         {}});
  };
  const auto built = merged();
  ASSERT_EQ(built.exit_code, 0) << built.out;
  const auto names = check_groups(built.out);
  for (const char* name : {"configure", "compile and link", "pack"}) {
    EXPECT_TRUE(contains(names, name)) << name << " in\n" << built.out;
  }
  const auto compile_group = built.out.find("::group::compile and link\n");
  const auto compiled = built.out.find("Building CXX object");
  ASSERT_NE(compile_group, std::string::npos);
  ASSERT_NE(compiled, std::string::npos) << built.out;
  EXPECT_GT(compiled, compile_group);
  EXPECT_LT(compiled, built.out.find("::endgroup::", compile_group)) << built.out;

  const std::string text = read_file(summary);
  EXPECT_EQ(text.rfind("# an earlier step\n", 0), 0u) << text;
  EXPECT_TRUE(contains(text, "\n|---|---|\n")) << text;
  EXPECT_TRUE(contains(text, "| objects compiled | 8 |")) << text;

  // A compile that fails: the group it was in is closed all the same.
  write_file(tree / "python/src/main.cc",
             "#error broken on purpose\n" + read_file(tree / "python/src/main.cc"));
  const auto failed = merged();
  ASSERT_NE(failed.exit_code, 0) << failed.out;
  const auto broken = failed.out.find("broken on purpose");
  ASSERT_NE(broken, std::string::npos) << failed.out;
  EXPECT_TRUE(contains(check_groups(failed.out), "compile and link")) << failed.out;
  // Closed before the error is said.
  EXPECT_LT(failed.out.rfind("::endgroup::"), failed.out.find("ascend-setup: error:"))
      << failed.out;
  EXPECT_EQ(read_file(summary), text) << "a failed build appends nothing";
}

// A stale patch hunk (patch_stale) and the doctor's findings are error
// annotations with the file and the line, on GitHub Actions only.
TEST_F(BuildReportE2e, StalePatchesAndDoctorFindingsAreAnnotations) {
  make_git_repo(tree, dir.path());
  edit("python/src/ir.cc", "m.def(\"add\", [](int a, int b) { return a + b; });",
       "m.def(\"add\", [](long a, long b) { return a + b; });");
  must_run({"git", "commit", "-qam", "upstream moved"}, tree, git_env(dir.path()));

  const auto quiet = host({"--apply-patches"});
  EXPECT_EQ(quiet.exit_code, code::patch_stale) << quiet.err;
  EXPECT_FALSE(contains(quiet.err, "::error")) << quiet.err;

  env["GITHUB_ACTIONS"] = "true";
  const std::string annotation =
      "::error file=python/src/ir.cc,line=10::the Ascend patch triton-ascend-3.6.0.patch no "
      "longer fits: python/src/ir.cc @@ -8,4 +8,6 @@: line 10 has";
  const auto stale = host({"--apply-patches"});
  EXPECT_EQ(stale.exit_code, code::patch_stale) << stale.err;
  EXPECT_TRUE(at_line_start(stale.err, annotation)) << stale.err;
  const auto build = host({"bdist_wheel"});
  EXPECT_EQ(build.exit_code, code::patch_stale) << build.err;
  EXPECT_TRUE(at_line_start(build.err, annotation)) << build.err;

  const auto doctor = host({"--doctor"});
  EXPECT_EQ(doctor.exit_code, code::doctor_findings) << doctor.err;
  EXPECT_TRUE(
      at_line_start(doctor.err,
                    "::error file=python/src/ir.cc,line=10::patches: "
                    "triton-ascend-3.6.0.patch: python/src/ir.cc @@ -8,4 +8,6 @@: line 10 has"))
      << doctor.err;
  EXPECT_FALSE(contains(doctor.out, "::error")) << "stdout is the doctor's report";
}

}  // namespace
