// Compiles through distcc: real bdist_wheel builds of the example tree (real
// CMake, Ninja, clang++) with Debian's distccd started by the test on
// 127.0.0.2 and 127.0.0.3, each logging the compiles it got ("compile from
// SOURCE to OBJECT"): through ccache (upstream's launcher, CCACHE_PREFIX);
// through the configure call's distcc launcher with the first daemon killed
// while it compiles (distcc sends its jobs to the other); with that daemon
// alone in the list (distcc's local fallback compiles the rest); a host with
// nothing listening (one warning, a local build). The CmakeBuild suite name
// keeps them out of the sanitized run. Then --list-env with a cluster of one
// host up and one down.
#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

using namespace test_support;

namespace {

std::set<std::string> file_names(const std::vector<std::string>& paths) {
  std::set<std::string> names;
  for (const std::string& path : paths) {
    names.insert(fs::path(path).filename().string());
  }
  return names;
}

// The compile rules' commands of the tree's CMake build (CMake's Ninja
// generator puts the launcher there, in CMakeFiles/rules.ninja).
std::vector<std::string> compile_rules(const fs::path& tree) {
  for (const auto& entry : fs::recursive_directory_iterator(tree / "build")) {
    if (entry.path().filename() == "rules.ninja") {
      return lines_with(read_file(entry.path()), " -c $in");
    }
  }
  return {};
}

// Every compile rule starts with `launcher` (then the compiler).
::testing::AssertionResult launched_by(const std::vector<std::string>& rules,
                                       const std::string& launcher) {
  if (rules.empty()) {
    return ::testing::AssertionFailure() << "no compile rule in rules.ninja";
  }
  for (const std::string& rule : rules) {
    if (rule.find("command = " + launcher + " /usr/bin/clang++ ") == std::string::npos) {
      return ::testing::AssertionFailure() << "not launched by " << launcher << ": " << rule;
    }
  }
  return ::testing::AssertionSuccess();
}

class DistccCmakeBuildTest : public ExampleTreeTest {
 protected:
  DistccCmakeBuildTest() {
    // distccd, run as root, drops to its own user: its log directories must
    // be reachable.
    fs::permissions(dir.path(), fs::perms::others_exec | fs::perms::group_exec,
                    fs::perm_options::add);
    env["CCACHE_DIR"] = (dir.path() / "ccache").string();  // cold: every object a miss
    env["MAX_JOBS"] = std::nullopt;
    env["TRITON_PARALLEL_LINK_JOBS"] = std::nullopt;
    env["CCACHE_PREFIX"] = std::nullopt;
    env["ASCEND_SETUP_DISTCC_HOSTS"] = std::nullopt;
  }
};

// The example's sources: every one was compiled on one of the two daemons.
const std::set<std::string> kSources{"Dialect.cpp", "main.cc", "ir.cc", "triton-opt.cpp"};

TEST_F(DistccCmakeBuildTest, CompilesOnTwoLoopbackDaemonsThroughCcache) {
  ASSERT_EQ(run_host({"--host-version"}, tree, env).exit_code, 0);
  ASSERT_EQ(ascend_setup::run_process({{"ccache", "--version"}, tree, env, {}}).exit_code, 0)
      << "ccache (in scripts/quickstart.sh's test_packages) is needed";
  DistccDaemon first(dir.path() / "distccd-2", "127.0.0.2", 2);
  DistccDaemon second(dir.path() / "distccd-3", "127.0.0.3", 2);
  env["DISTCC_HOSTS"] = first.host(2) + " " + second.host(2);
  const auto result = host({"bdist_wheel"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.err.find("MAX_JOBS=4: 2 + 2 slots of the distcc cluster (DISTCC_HOSTS: " +
                            first.host(2) + " " + second.host(2) + ") = 4"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("TRITON_PARALLEL_LINK_JOBS="), std::string::npos);
  const auto on_first = file_names(first.compiled());
  const auto on_second = file_names(second.compiled());
  EXPECT_FALSE(on_first.empty()) << first.log();
  EXPECT_FALSE(on_second.empty()) << second.log();
  for (const std::string& source : kSources) {
    EXPECT_TRUE(on_first.count(source) + on_second.count(source) != 0)
        << source << " compiled on neither daemon:\n"
        << first.log() << second.log();
  }
  // Through ccache: it is the launcher, and it ran distcc (CCACHE_PREFIX).
  EXPECT_TRUE(launched_by(compile_rules(tree), "/usr/bin/ccache"));
  EXPECT_TRUE(lines_with(result.out + result.err, kAscendSetupWarning).empty()) << result.err;
  EXPECT_EQ(files_in(tree / "dist", ".whl").size(), 1u);
}

// True when an object named after `source` (CMake's SOURCE.o) is in the
// tree's build directory.
bool object_built(const fs::path& tree, const std::string& source) {
  const std::string object = fs::path(source).filename().string() + ".o";
  for (const auto& entry : fs::recursive_directory_iterator(tree / "build")) {
    if (entry.path().filename() == object) {
      return true;
    }
  }
  return false;
}

// `run` (a build) in the background; `daemon` is killed as soon as its log shows
// a compile in flight. Returns the build's result and the sources the daemon
// had in flight when it died (empty: it never compiled, not killed). The
// daemon is frozen (SIGSTOP) before its log is read again and it is killed,
// so a job cannot complete in between, however fast the machine; a job that
// completed before the freeze only means another look.
std::pair<ascend_setup::ProcessResult, std::vector<std::string>> build_killing(
    DistccDaemon& daemon, const std::function<ascend_setup::ProcessResult()>& run) {
  auto build = std::async(std::launch::async, run);
  std::vector<std::string> lost;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (build.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready &&
         std::chrono::steady_clock::now() < deadline) {
    if (daemon.in_flight().empty()) {
      continue;
    }
    daemon.freeze();
    lost = daemon.in_flight();  // what it has as it dies
    if (!lost.empty()) {
      daemon.kill();
      break;
    }
    daemon.thaw();
  }
  return {build.get(), lost};
}

// distcc fails the lost jobs over to the daemon still up.
TEST_F(DistccCmakeBuildTest, SurvivesADaemonKilledWhileItCompilesWithDistccLauncher) {
  ASSERT_EQ(run_host({"--host-version"}, tree, env).exit_code, 0);
  DistccDaemon killed(dir.path() / "distccd-2", "127.0.0.2", 2);
  DistccDaemon kept(dir.path() / "distccd-3", "127.0.0.3", 2);
  // The daemon to kill first in the list: distcc fills its slots first.
  env["DISTCC_HOSTS"] = killed.host(2) + " " + kept.host(2);
  env["TRITON_BUILD_WITH_CCACHE"] = "OFF";
  const auto [result, lost] = build_killing(killed, [this] { return host({"bdist_wheel"}); });
  ASSERT_FALSE(lost.empty()) << "the first daemon never compiled:\n" << killed.log();
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const std::string output = result.out + result.err;
  // distcc's client saw the daemon die and sent the job again.
  EXPECT_FALSE(lines_with(output, "ERROR: server provided no answer").empty()) << output;
  for (const std::string& source : lost) {
    EXPECT_TRUE(object_built(tree, source)) << source << " (lost with the daemon) not compiled";
  }
  EXPECT_NE(result.err.find("build summary: 8 objects compiled"), std::string::npos) << result.err;
  EXPECT_FALSE(kept.compiled().empty()) << kept.log();
  // Through the configure call's launcher (no ccache).
  EXPECT_TRUE(launched_by(compile_rules(tree), "/usr/bin/distcc"));
  EXPECT_EQ(files_in(tree / "dist", ".whl").size(), 1u);
}

// With no daemon left, distcc's own local fallback compiles the rest here.
TEST_F(DistccCmakeBuildTest, SurvivesItsOnlyDaemonKilledWhileItCompilesByCompilingLocally) {
  ASSERT_EQ(run_host({"--host-version"}, tree, env).exit_code, 0);
  DistccDaemon killed(dir.path() / "distccd-2", "127.0.0.2", 2);
  env["DISTCC_HOSTS"] = killed.host(2);
  env["TRITON_BUILD_WITH_CCACHE"] = "OFF";
  const auto [result, lost] = build_killing(killed, [this] { return host({"bdist_wheel"}); });
  ASSERT_FALSE(lost.empty()) << "the daemon never compiled:\n" << killed.log();
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const std::string output = result.out + result.err;
  EXPECT_FALSE(lines_with(output, "running locally instead").empty()) << output;
  for (const std::string& source : lost) {
    EXPECT_TRUE(object_built(tree, source)) << source << " (lost with the daemon) not compiled";
  }
  // 8 objects, fewer finished on the daemon: the others were compiled here.
  EXPECT_NE(result.err.find("build summary: 8 objects compiled"), std::string::npos) << result.err;
  EXPECT_LT(killed.compiled().size() - lost.size(), 8u);
  EXPECT_TRUE(launched_by(compile_rules(tree), "/usr/bin/distcc"));

  // The next build finds the host down: one warning, and the distcc launcher
  // the first configure left in the cache is emptied.
  const auto again = host({"bdist_wheel"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(lines_with(again.err, kAscendSetupWarning).size(), 1u) << again.err;
  const auto rules = compile_rules(tree);
  EXPECT_FALSE(rules.empty());
  for (const std::string& rule : rules) {
    EXPECT_NE(rule.find("command = /usr/bin/clang++ "), std::string::npos) << rule;
  }
}

TEST_F(DistccCmakeBuildTest, HostDownGivesOneWarningAndALocalBuild) {
  const std::string down = "127.0.0.2:" + std::to_string(free_port("127.0.0.2")) + "/4";
  env["DISTCC_HOSTS"] = down;
  const auto result = host({"bdist_wheel"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const std::string output = result.out + result.err;
  const auto warnings = lines_with(output, kAscendSetupWarning);
  ASSERT_EQ(warnings.size(), 1u) << output;
  EXPECT_NE(warnings[0].find("every distcc host of DISTCC_HOSTS is down: " + down +
                             " (Connection refused): compiling locally"),
            std::string::npos)
      << warnings[0];
  EXPECT_EQ(lines_with(output, down).size(), 1u) << output;
  EXPECT_TRUE(lines_with(result.err, "slots of the distcc cluster").empty());
  EXPECT_NE(result.err.find("MAX_JOBS="), std::string::npos);
  for (const std::string& rule : compile_rules(tree)) {
    EXPECT_EQ(rule.find("distcc"), std::string::npos) << rule;
  }
  EXPECT_EQ(files_in(tree / "dist", ".whl").size(), 1u);
}

// --list-env probes the cluster too: the hosts given to the build, ccache's
// prefix, MAX_JOBS from the slots, one warning for the host that is down.
class DistccListEnvTest : public ExampleTreeTest {};

TEST_F(DistccListEnvTest, ShowsTheClusterItsSlotsAndOneWarningForTheHostDown) {
  const TcpListener listener("127.0.0.2");
  const std::string up = "127.0.0.2:" + std::to_string(listener.port()) + "/3";
  const std::string down = "127.0.0.3:" + std::to_string(free_port("127.0.0.3")) + "/5";
  env["DISTCC_HOSTS"] = up + " " + down;
  env["MAX_JOBS"] = std::nullopt;
  env["CCACHE_PREFIX"] = std::nullopt;
  const auto result = host({"--list-env=json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto warnings = lines_with(result.err, kAscendSetupWarning);
  ASSERT_EQ(warnings.size(), 1u) << result.err;
  EXPECT_NE(warnings[0].find("distcc host down, left out of this build: " + down),
            std::string::npos)
      << warnings[0];
  std::map<std::string, nlohmann::ordered_json> rows;
  for (const auto& row : parse_json(result.out)) {
    rows[row["name"].get<std::string>()] = row;
  }
  ASSERT_EQ(rows.count("DISTCC_HOSTS"), 1u);
  EXPECT_EQ(rows["DISTCC_HOSTS"]["value"], up);
  EXPECT_EQ(rows["DISTCC_HOSTS"]["set_by"], "ascend-setup");
  EXPECT_EQ(rows["DISTCC_HOSTS"]["read_by"], nlohmann::ordered_json({"ascend-setup", "distcc"}));
  EXPECT_NE(rows["DISTCC_HOSTS"]["description"].get<std::string>().find("left out: " + down),
            std::string::npos)
      << rows["DISTCC_HOSTS"];
  EXPECT_EQ(fs::path(rows["CCACHE_PREFIX"]["value"].get<std::string>()).filename(), "distcc");
  EXPECT_EQ(rows["MAX_JOBS"]["value"], "3");
  EXPECT_NE(rows["MAX_JOBS"]["description"].get<std::string>().find(
                "here: 3 slots of the distcc cluster (DISTCC_HOSTS: " + up + ") = 3"),
            std::string::npos)
      << rows["MAX_JOBS"];
  EXPECT_EQ(rows["ASCEND_SETUP_DISTCC_HOSTS"]["value"], nullptr);
  EXPECT_EQ(rows["ASCEND_SETUP_DISTCC_PROBE_MS"]["default"], "1000");
}

}  // namespace
