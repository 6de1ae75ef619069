// The LLVM package of a build on loopback, through the built ascend-setup on
// the example tree: the profile's LLVM URL points at a real nginx started by
// the test (LLVM_SYSPATH and TRITON_OFFLINE_BUILD unset, the package a
// tarball of the stub LLVM). A SIGKILL mid-download, then a rerun that
// resumes; the unreachable server's one line and exit 3; the offline switch
// keeping its meaning; the job counts under a fake 5 GiB cgroup.
#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "loopback_servers.hpp"
#include "package_build.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>
#include <utility>

using namespace test_support;

namespace {

class DownloadE2eTest : public PackageBuildTest {
 protected:
  // The package: the stub LLVM plus an incompressible payload.
  DownloadE2eTest() { make_package(kPayload); }

  static constexpr std::uint64_t kPayload = 24 << 20;
};

TEST_F(DownloadE2eTest, KilledMidDownloadThenTheRerunResumes) {
  // Half the package passes, the rest waits at the gate: the first run is
  // mid-download when killed, however fast the machine.
  const StreamGate gate = gate_downloads(kPayload / 2);
  NginxServer nginx(dir.path() / "nginx", www, &gate);
  const std::string base = "http://127.0.0.1:" + std::to_string(nginx.port());
  const std::string url = base + "/llvm-e2e.tar.gz";
  cmake_failing_after_version();
  // The first run, killed once a quarter of the package has arrived.
  const auto argv = host_command(tree, env, with_profile(base, {"build_ext"}));
  const std::uint64_t size = fs::file_size(www / "llvm-e2e.tar.gz");
  {
    BackgroundProcess first(argv, dir.path() / "first-run.log");
    wait_until(first, [&] { return downloaded() >= size / 4; });
    ASSERT_GE(downloaded(), size / 4) << read_file(dir.path() / "first-run.log");
    ASSERT_LT(downloaded(), size);
    ASSERT_TRUE(first.signal(SIGKILL)) << read_file(dir.path() / "first-run.log");
  }
  gate.open();
  expect_no_partial_package(url);
  EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));
  EXPECT_TRUE(fs::exists(package_root / ".llvm-e2e.download.part"));

  const auto rerun = host(with_profile(base, {"build_ext"}));
  EXPECT_NE(rerun.err.find("resuming .llvm-e2e.download.part"), std::string::npos) << rerun.err;
  EXPECT_NE(rerun.err.find("configure refused by the test"), std::string::npos) << rerun.err;
  EXPECT_EQ(read_file(package_root / "llvm-e2e" / "version.txt"), url);
  EXPECT_EQ(fs::file_size(package_root / "llvm-e2e" / "lib" / "payload.bin"), kPayload);
  expect_no_partial_package(url);
  // Bytes fetched by both runs: near the package's size.
  EXPECT_LE(nginx.body_bytes_sent(), size * 115 / 100) << nginx.body_bytes_sent() << " of " << size;
  // Nothing left beside the package but upstream's symlink and the lock.
  for (const auto& entry : fs::directory_iterator(package_root)) {
    EXPECT_TRUE(entry.path().filename() == "llvm-e2e" ||
                entry.path().filename() == ".llvm-e2e.lock" || fs::is_symlink(entry.path()))
        << entry.path();
  }
}

TEST_F(DownloadE2eTest, UnreachableServerIsOneLineAndExit3) {
  const std::string base = "http://127.0.0.1:" + std::to_string(free_port());
  env["ASCEND_SETUP_DOWNLOAD_ATTEMPTS"] = "2";
  cmake_failing_after_version();
  const auto result = host(with_profile(base, {"build_ext"}));
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  const std::string start = "ascend-setup: error: offline or unreachable: cannot download " + base +
                            "/llvm-e2e.tar.gz to " + (package_root / "llvm-e2e").string();
  const auto at = result.err.find(start);
  ASSERT_NE(at, std::string::npos) << result.err;
  const std::string line = result.err.substr(at, result.err.find('\n', at) - at);
  EXPECT_NE(line.find("; by hand: curl -fL -C - -o"), std::string::npos) << line;
  EXPECT_NE(line.find("&& tar -xf"), std::string::npos) << line;
  EXPECT_EQ(result.err.find("Traceback"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));
}

// A package mirror inside the CI cluster: nginx's proxy_cache in front of the
// origin nginx. The first build fills it (the origin sends the package
// once); a second build with another TRITON_HOME fetches from the mirror
// only, asking the origin for the package's length alone (one byte's range).
// A mirror that lacks a file: one warning, then the origin.
TEST_F(DownloadE2eTest, AMirrorServesASecondTritonHomeAndAMissingFileFallsBack) {
  NginxServer origin(dir.path() / "origin", www);
  const std::string base = "http://127.0.0.1:" + std::to_string(origin.port());
  CachingMirror mirror(dir.path() / "mirror", base);
  cmake_doing_nothing();
  env["ASCEND_SETUP_PACKAGE_MIRROR"] = mirror.base_url() + "/";
  const auto first = host(with_profile(base, {"build_ext"}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("from the package mirror (" + mirror.base_url() + "/llvm-e2e.tar.gz)"),
            std::string::npos)
      << first.err;
  EXPECT_EQ(read_file(package_root / "llvm-e2e" / "version.txt"), base + "/llvm-e2e.tar.gz");
  const std::uint64_t size = fs::file_size(www / "llvm-e2e.tar.gz");
  EXPECT_LE(origin.body_bytes_sent(), size + size / 10)
      << ::testing::PrintToString(origin.log_lines());
  const size_t origin_requests = origin.log_lines().size();

  TempDir other_home;
  env["TRITON_HOME"] = other_home.path().string();
  const auto second = host(with_profile(base, {"build_ext"}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(read_file(other_home.path() / ".triton" / "llvm" / "llvm-e2e" / "version.txt"),
            base + "/llvm-e2e.tar.gz");
  const auto asked = origin.log_lines();
  ASSERT_EQ(asked.size(), origin_requests + 1) << ::testing::PrintToString(asked);
  EXPECT_EQ(asked.back(), "206 1 bytes=0-0") << ::testing::PrintToString(asked);
  EXPECT_GE(mirror.responses_with("HIT"), 1) << ::testing::PrintToString(mirror.log_lines());
  EXPECT_EQ(second.err.find("warning"), std::string::npos) << second.err;

  // The mirror in front of a server without the file: 404, one warning, the origin.
  TempDir third_home;
  env["TRITON_HOME"] = third_home.path().string();
  const fs::path empty = dir.path() / "empty-www";
  fs::create_directories(empty);
  NginxServer empty_origin(dir.path() / "empty-origin", empty);
  CachingMirror lacking(dir.path() / "lacking",
                        "http://127.0.0.1:" + std::to_string(empty_origin.port()));
  env["ASCEND_SETUP_PACKAGE_MIRROR"] = lacking.base_url();
  const auto third = host(with_profile(base, {"build_ext"}));
  ASSERT_EQ(third.exit_code, 0) << third.err;
  const std::string warning =
      "warning: the package mirror cannot serve " + lacking.base_url() + "/llvm-e2e.tar.gz";
  const auto at = third.err.find(warning);
  EXPECT_NE(at, std::string::npos) << third.err;
  EXPECT_EQ(third.err.find(warning, at + 1), std::string::npos) << third.err;
  EXPECT_EQ(read_file(third_home.path() / ".triton" / "llvm" / "llvm-e2e" / "version.txt"),
            base + "/llvm-e2e.tar.gz");
  EXPECT_GT(origin.log_lines().size(), origin_requests);

  // A mirror that is down: one warning, the origin.
  TempDir fourth_home;
  env["TRITON_HOME"] = fourth_home.path().string();
  env["ASCEND_SETUP_PACKAGE_MIRROR"] = "http://127.0.0.1:" + std::to_string(free_port());
  const auto fourth = host(with_profile(base, {"build_ext"}));
  ASSERT_EQ(fourth.exit_code, 0) << fourth.err;
  const auto first_warning = fourth.err.find("warning:");
  EXPECT_NE(first_warning, std::string::npos) << fourth.err;
  EXPECT_EQ(fourth.err.find("warning:", first_warning + 1), std::string::npos) << fourth.err;
  EXPECT_TRUE(fs::exists(fourth_home.path() / ".triton" / "llvm" / "llvm-e2e" / "version.txt"));
}

// A download from the origin stopped by SIGINT at 40%, then a rerun whose
// package mirror cannot serve: one that answers 404, one that is down. The
// mirror's attempt leaves the origin's part as it was, so the rerun resumes
// it and the origin serves the package about once in all (it served 1.41
// times when the mirror's attempt emptied the part).
TEST_F(DownloadE2eTest, StoppedThenAMirrorThatCannotServeLeavesTheOriginsPartToResume) {
  const std::uint64_t size = fs::file_size(www / "llvm-e2e.tar.gz");
  const fs::path empty = dir.path() / "empty-www";
  fs::create_directories(empty);
  NginxServer lacking(dir.path() / "lacking", empty);
  cmake_doing_nothing();
  for (const auto& [what, mirror] :
       {std::pair<std::string, std::string>{"404",
                                            "http://127.0.0.1:" + std::to_string(lacking.port())},
        {"down", "http://127.0.0.1:" + std::to_string(free_port())}}) {
    SCOPED_TRACE("a mirror that is " + what);
    fs::remove_all(package_root);
    fs::remove_all(dir.path() / "gate");
    // 40% of the package passes, the rest waits at the gate: the run is
    // mid-download when the signal comes, however fast the machine.
    const StreamGate gate = gate_downloads(size * 2 / 5);
    NginxServer origin(dir.path() / ("origin-" + what), www, &gate);
    const std::string base = "http://127.0.0.1:" + std::to_string(origin.port());
    const auto args = with_profile(base, {"build_ext"});
    env["ASCEND_SETUP_PACKAGE_MIRROR"] = std::nullopt;
    const fs::path log = dir.path() / ("first-" + what + ".log");
    {
      BackgroundProcess first(host_command(tree, env, args), log);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while (std::chrono::steady_clock::now() < deadline && first.running() &&
             !(gate.holding() && downloaded() >= size * 3 / 10)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ASSERT_TRUE(first.running()) << read_file(log);
      ASSERT_TRUE(first.signal(SIGINT)) << read_file(log);
      EXPECT_EQ(first.exit_code(120), 128 + SIGINT) << read_file(log);
    }
    ASSERT_TRUE(fs::exists(package_root / ".llvm-e2e.download.part"));
    gate.open();
    env["ASCEND_SETUP_PACKAGE_MIRROR"] = mirror;
    const auto rerun = host(args);
    ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
    EXPECT_NE(
        rerun.err.find("warning: the package mirror cannot serve " + mirror + "/llvm-e2e.tar.gz"),
        std::string::npos)
        << rerun.err;
    EXPECT_NE(rerun.err.find("resuming .llvm-e2e.download.part"), std::string::npos) << rerun.err;
    EXPECT_EQ(read_file(package_root / "llvm-e2e" / "version.txt"), base + "/llvm-e2e.tar.gz");
    EXPECT_EQ(fs::file_size(package_root / "llvm-e2e" / "lib" / "payload.bin"), kPayload);
    EXPECT_LE(origin.body_bytes_sent(), size * 115 / 100)
        << origin.body_bytes_sent() << " of " << size;
  }
  EXPECT_GE(lacking.responses(404), 1);
}

// The LLVM package's pin reaches its download: the profile's [llvm] sha256
// entry for the package's name (a wrong one: exit 3 naming both digests,
// nothing kept), then ASCEND_SETUP_LLVM_SHA256, which wins (the right one:
// the package arrives).
TEST_F(DownloadE2eTest, ThePinOfTheProfileOrOfTheVariableIsChecked) {
  NginxServer nginx(dir.path() / "nginx", www);
  const std::string base = "http://127.0.0.1:" + std::to_string(nginx.port());
  const std::string right = ascend_setup::sha256_hex(read_file(www / "llvm-e2e.tar.gz"));
  const std::string wrong(64, '0');
  cmake_doing_nothing();
  const auto args = with_profile(base, {"build_ext"});
  const fs::path profile = args.at(1);
  write_file(profile, replace_once(read_file(profile), "ubuntu_min_glibc = 229\n",
                                   "ubuntu_min_glibc = 229\nsha256 = { \"llvm-e2e\" = \"" + wrong +
                                       "\" }\n"));
  const auto refused = host(args);
  EXPECT_EQ(refused.exit_code, ascend_setup::exit_code::bad_input) << refused.err;
  EXPECT_NE(refused.err.find("ascend-setup: error: the download of " + base +
                             "/llvm-e2e.tar.gz has the SHA-256 " + right + ", not the " + wrong +
                             " pinned by the profile's [llvm] sha256; the download was removed"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));
  EXPECT_FALSE(fs::exists(package_root / ".llvm-e2e.download"));

  env["ASCEND_SETUP_LLVM_SHA256"] = right;
  const auto pinned = host(args);
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  EXPECT_EQ(read_file(package_root / "llvm-e2e" / "version.txt"), base + "/llvm-e2e.tar.gz");
}

TEST_F(DownloadE2eTest, AMirrorThatIsNotAnHttpURLIsOneLineAndExit2) {
  env["ASCEND_SETUP_PACKAGE_MIRROR"] = "ftp://mirror.example/packages";
  cmake_doing_nothing();
  const auto result = host(with_profile("http://127.0.0.1:9", {"build_ext"}));
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::usage) << result.err;
  EXPECT_NE(result.err.find("error: ASCEND_SETUP_PACKAGE_MIRROR: 'ftp://mirror.example/packages' "
                            "is not an http:// or https:// URL"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("Traceback"), std::string::npos) << result.err;
}

TEST_F(DownloadE2eTest, OfflineBuildKeepsItsMeaning) {
  NginxServer nginx(dir.path() / "nginx", www);
  const std::string base = "http://127.0.0.1:" + std::to_string(nginx.port());
  env["TRITON_OFFLINE_BUILD"] = "1";
  cmake_failing_after_version();
  const auto result = host(with_profile(base, {"build_ext"}));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("Requested an offline build but LLVM_SYSPATH is not set"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(nginx.log_lines().empty());
}

TEST_F(DownloadE2eTest, ListEnvSaysTheJobFiguresOfTheCgroup) {
  const fs::path cgroup = dir.path() / "cgroup";
  write_file(cgroup / "cgroup.controllers", "cpu memory\n");
  write_file(cgroup / "cpu.max", "32000000 100000\n");
  write_file(cgroup / "memory.max", std::to_string(5ULL << 30) + "\n");
  env["ASCEND_SETUP_CGROUP_ROOT"] = cgroup.string();
  const auto result = host({"--list-env=json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  bool found = false;
  for (const auto& row : parse_json(result.out)) {
    if (row["name"] == "MAX_JOBS") {
      found = true;
      EXPECT_EQ(row["value"], "2");
      EXPECT_EQ(row["set_by"], "ascend-setup");
      EXPECT_NE(row["description"].get<std::string>().find(
                    "; here: min(2 CPUs (2 online; cgroup v2 cpu.max 32000000/100000 = 320 CPUs), "
                    "5.0 GiB (cgroup v2 memory.max) / 2.5 GiB a job) = 2"),
                std::string::npos)
          << row;
    }
    if (row["name"] == "TRITON_PARALLEL_LINK_JOBS") {
      EXPECT_EQ(row["value"], "1");
    }
  }
  EXPECT_TRUE(found);
  // Not a compiling command: the figures are in the listing, not on the log.
  EXPECT_EQ(result.err.find("MAX_JOBS=2: min("), std::string::npos) << result.err;
}

// The one real build of this suite: the package fetched from nginx is what
// CMake configures against, and a 5 GiB cgroup limit with a 320-CPU quota
// makes `cmake --build` run 2 jobs (not 2 x CPUs).
TEST_F(DownloadE2eTest, BuildUsesTheFetchedPackageAndTwoJobsUnderA5GiBCgroup) {
  NginxServer nginx(dir.path() / "nginx", www);
  const std::string base = "http://127.0.0.1:" + std::to_string(nginx.port());
  const fs::path cgroup = dir.path() / "cgroup";
  write_file(cgroup / "cgroup.controllers", "cpu memory\n");
  write_file(cgroup / "cpu.max", "32000000 100000\n");
  write_file(cgroup / "memory.max", std::to_string(5ULL << 30) + "\n");
  env["ASCEND_SETUP_CGROUP_ROOT"] = cgroup.string();
  const fs::path cmake_log = dir.path() / "cmake-calls.log";
  env["PATH"] = path_with_stand_ins();
  env["CMAKE_CALL_LOG"] = cmake_log.string();
  const auto result = host(with_profile(base, {"build_ext"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("ascend-setup: info: MAX_JOBS=2: min("), std::string::npos)
      << result.err;
  bool built = false;
  for (const auto& call : read_cmake_calls(cmake_log)) {
    if (call.is_configure()) {
      EXPECT_TRUE(contains(call.args, "-DLLVM_SYSPATH=" + (package_root / "llvm-e2e").string()));
      EXPECT_TRUE(contains(call.args, "-DTRITON_PARALLEL_LINK_JOBS=1"));
    } else if (contains(call.args, "--build") && !contains(call.args, "--target")) {
      built = true;
      EXPECT_TRUE(contains(call.args, "-j2")) << ::testing::PrintToString(call.args);
    }
  }
  EXPECT_TRUE(built);
  EXPECT_EQ(read_file(package_root / "llvm-e2e" / "version.txt"), base + "/llvm-e2e.tar.gz");
}

}  // namespace
