// Builds that share one TRITON_HOME, and runs stopped or failing while the
// LLVM package is downloaded or unpacked: real processes of the built
// ascend-setup on copies of the example tree, the package on a loopback
// nginx (package_build.hpp: the profile's LLVM URL points at it). The package
// is fetched once per cache, a holder killed mid-download is resumed by the
// build waiting for it, and a stop or a failure while unpacking (SIGINT,
// SIGTERM, SIGKILL, a full disk, a refused member) keeps the finished
// download: the rerun unpacks it without fetching a byte.
//
// The builds run `build_ext` with a cmake that answers --version and does
// nothing else (cmake_doing_nothing): upstream's build_extension reaches
// get_thirdparty_packages exactly as in a full build, and the run ends with
// exit 0 right after it, without the compile four full builds would need.
#include "base/util/error.hpp"
#include "loopback_servers.hpp"
#include "package_build.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

using namespace test_support;

namespace {

std::string this_host() {
  char name[256] = {};
  EXPECT_EQ(::gethostname(name, sizeof name - 1), 0);
  return name;
}

class SharedCacheTest : public PackageBuildTest {
 protected:
  SharedCacheTest() { cmake_doing_nothing(); }

  static std::string base(const NginxServer& nginx) {
    return "http://127.0.0.1:" + std::to_string(nginx.port());
  }
  static std::string url(const NginxServer& nginx) { return base(nginx) + "/llvm-e2e.tar.gz"; }

  fs::path download() const { return package_root / ".llvm-e2e.download"; }

  std::uint64_t package_size() const { return fs::file_size(www / "llvm-e2e.tar.gz"); }

  // The package in place with every file of its source, nothing staged or
  // downloaded left beside it.
  void expect_whole_package(const std::string& package_url) const {
    const fs::path package = package_root / "llvm-e2e";
    ASSERT_TRUE(fs::is_directory(package));
    EXPECT_EQ(read_file(package / "version.txt"), package_url);
    const fs::path source = dir.path() / "package-source" / "llvm-e2e";
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(source)) {
      const fs::path relative = entry.path().lexically_relative(source);
      if (entry.is_regular_file() && relative != "version.txt") {
        ++files;
        ASSERT_TRUE(fs::exists(package / relative)) << relative;
        EXPECT_EQ(fs::file_size(package / relative), entry.file_size()) << relative;
      }
    }
    EXPECT_GT(files, 0u);
    EXPECT_TRUE(staged_copies(package_root).empty())
        << ::testing::PrintToString(staged_copies(package_root));
    EXPECT_FALSE(fs::exists(download()));
    EXPECT_FALSE(fs::exists(package_root / ".llvm-e2e.download.json"));
    expect_no_partial_package(package_url);
  }

  // A package with a big file, unpacked in many writes: 64 MiB of zeros
  // (sparse here, about 64 KiB packed).
  void make_slow_package() {
    make_package(0, [](const fs::path& source) { sparse_zeros(source / "lib" / "big.bin", 64); });
  }

  static void sparse_zeros(const fs::path& file, std::uint64_t mebibytes) {
    write_file(file, "");
    fs::resize_file(file, mebibytes << 20);
  }

  // The first run stopped by `signal` while it unpacks; the download stays,
  // and the rerun unpacks it without fetching.
  void stop_during_extraction(int signal) {
    // TRITON_HOME on a tmpfs: the package is unpacked twice, and a disk
    // shared with other work would only make that slower.
    SmallDisk home(dir.path() / "home", "2g");
    env["TRITON_HOME"] = home.path().string();
    package_root = home.path() / ".triton" / "llvm";
    make_slow_package();
    NginxServer nginx(dir.path() / "nginx", www);
    const auto args = with_profile(base(nginx), {"build_ext"});
    const fs::path log = dir.path() / "first.log";
    {
      // The 8th write of the big file waits at a gate (the fail_nth_write
      // stand-in) until the signal's handler has run: the run is unpacking
      // when the signal comes, however fast the machine.
      const fs::path gate = dir.path() / "write-gate";
      fs::create_directories(gate);
      Env holding = env;
      holding["LD_PRELOAD"] = FAIL_NTH_WRITE;
      holding["FAIL_WRITE_MATCH"] = "big.bin";
      holding["FAIL_WRITE_NTH"] = "8";
      holding["FAIL_WRITE_HOLD"] = gate.string();
      BackgroundProcess first(host_command(tree, holding, args), log);
      const bool unpacking =
          wait_until([&] { return fs::exists(gate / "holding") || !first.running(); }, 180);
      ASSERT_TRUE(unpacking && first.running()) << read_file(log);
      ASSERT_TRUE(first.signal(signal)) << read_file(log);
      const auto code = first.exit_code(120);
      ASSERT_TRUE(code) << read_file(log);
      EXPECT_EQ(*code, 128 + signal) << read_file(log);
    }
    const std::string err = read_file(log);
    if (signal != SIGKILL) {
      const std::string line = error_line(err);
      EXPECT_NE(
          line.find(std::string("interrupted by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                    " while unpacking " + url(nginx)),
          std::string::npos)
          << err;
      EXPECT_NE(line.find("the download is kept in " + download().string()), std::string::npos)
          << err;
      EXPECT_EQ(err.find("Traceback"), std::string::npos) << err;
      EXPECT_TRUE(staged_copies(package_root).empty())
          << ::testing::PrintToString(staged_copies(package_root));
    }
    EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));
    ASSERT_TRUE(fs::exists(download()));
    EXPECT_EQ(fs::file_size(download()), package_size());

    const std::uint64_t served = nginx.body_bytes_sent();
    const auto rerun = host(args);
    ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
    EXPECT_EQ(nginx.body_bytes_sent(), served) << "the rerun fetched again";
    EXPECT_NE(rerun.err.find("unpacking " + download().string() + " kept by an earlier run"),
              std::string::npos)
        << rerun.err;
    expect_whole_package(url(nginx));
  }

  // The first run stopped by `signal` mid-download; the rerun resumes.
  void stop_during_download(int signal) {
    make_package(kPayload);
    // Half the package passes, the rest waits at the gate: the run is
    // mid-download when the signal comes, however fast the machine.
    const StreamGate gate = gate_downloads(kPayload / 2);
    NginxServer nginx(dir.path() / "nginx", www, &gate);
    const auto args = with_profile(base(nginx), {"build_ext"});
    const fs::path log = dir.path() / "first.log";
    {
      BackgroundProcess first(host_command(tree, env, args), log);
      ASSERT_TRUE(
          wait_until([&] { return !first.running() || downloaded() >= package_size() / 4; }, 120))
          << read_file(log);
      ASSERT_TRUE(first.running()) << read_file(log);
      ASSERT_TRUE(first.signal(signal)) << read_file(log);
      const auto code = first.exit_code(120);
      ASSERT_TRUE(code) << read_file(log);
      EXPECT_EQ(*code, 128 + signal) << read_file(log);
    }
    EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));
    EXPECT_TRUE(fs::exists(package_root / ".llvm-e2e.download.part"));
    gate.open();
    const auto rerun = host(args);
    ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
    EXPECT_NE(rerun.err.find("resuming .llvm-e2e.download.part"), std::string::npos) << rerun.err;
    EXPECT_LE(nginx.body_bytes_sent(), package_size() * 115 / 100);
    expect_whole_package(url(nginx));
  }

  static constexpr std::uint64_t kPayload = 24 << 20;
};

// A power loss (SIGKILL, from the write stand-in) at the download's record,
// the window between the download's rename and its record: the whole
// download stays unrecorded, and the rerun records and unpacks it without
// fetching a byte (it used to remove it and fetch the package again).
TEST_F(SharedCacheTest, KilledBeforeTheDownloadIsRecordedThenTheRerunUnpacksItWithoutFetching) {
  make_package(kPayload);
  NginxServer nginx(dir.path() / "nginx", www);
  const auto args = with_profile(base(nginx), {"build_ext"});
  Env killing = env;
  killing["LD_PRELOAD"] = FAIL_NTH_WRITE;
  killing["FAIL_WRITE_MATCH"] = ".llvm-e2e.download.json";
  killing["FAIL_WRITE_NTH"] = "1";
  killing["FAIL_WRITE_KILL"] = "1";
  const auto first = run_host(args, tree, killing);
  EXPECT_EQ(first.exit_code, 128 + SIGKILL) << first.err;
  ASSERT_TRUE(fs::exists(download()));
  EXPECT_EQ(fs::file_size(download()), package_size());
  EXPECT_FALSE(fs::exists(package_root / ".llvm-e2e.download.json"));
  EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));

  const std::uint64_t served = nginx.body_bytes_sent();
  const auto rerun = host(args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_EQ(nginx.body_bytes_sent(), served) << "the rerun fetched again";
  EXPECT_NE(rerun.err.find(download().string() + " is whole but has no record"), std::string::npos)
      << rerun.err;
  EXPECT_NE(rerun.err.find("unpacking " + download().string() + " kept by an earlier run"),
            std::string::npos)
      << rerun.err;
  expect_whole_package(url(nginx));
}

TEST_F(SharedCacheTest, FourBuildsOnAColdCacheFetchThePackageOnce) {
  make_package(kPayload);
  // Nothing of the package passes until every build has started and three
  // wait for the one that fetches: the four overlap, however fast the machine.
  const StreamGate gate = gate_downloads(0);
  NginxServer nginx(dir.path() / "nginx", www, &gate);
  const auto args = with_profile(base(nginx), {"build_ext"});
  std::vector<fs::path> trees{tree};
  for (int i = 1; i < 4; ++i) {
    const fs::path copy = dir.path() / ("copy-" + std::to_string(i));
    fs::create_directories(copy);
    trees.push_back(copy_example_tree(copy));
  }
  std::vector<std::unique_ptr<BackgroundProcess>> builds;
  for (std::size_t i = 0; i < trees.size(); ++i) {
    builds.push_back(std::make_unique<BackgroundProcess>(
        host_command(trees[i], env, args), dir.path() / ("build-" + std::to_string(i) + ".log")));
  }
  std::vector<std::string> pids;
  for (const auto& build : builds) {
    pids.push_back(std::to_string(build->pid()));
  }
  const auto waiting = [&] {
    std::size_t count = 0;
    for (std::size_t i = 0; i < builds.size(); ++i) {
      count += read_file(dir.path() / ("build-" + std::to_string(i) + ".log"))
                           .find("waiting for the lock held by pid ") != std::string::npos
                   ? 1
                   : 0;
    }
    return count;
  };
  const bool overlap = wait_until(
      [&] {
        return waiting() == builds.size() - 1 ||
               std::any_of(builds.begin(), builds.end(), [](auto& b) { return !b->running(); });
      },
      300);
  EXPECT_TRUE(overlap && waiting() == builds.size() - 1) << "the builds did not all wait";
  gate.open();
  std::size_t waited = 0;
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const auto code = builds[i]->exit_code(600);
    const std::string log = read_file(dir.path() / ("build-" + std::to_string(i) + ".log"));
    ASSERT_TRUE(code) << log;
    EXPECT_EQ(*code, 0) << log;
    EXPECT_EQ(log.find("Traceback"), std::string::npos) << log;
    const auto waiting_lines = lines_with(log, "waiting for the lock held by pid ");
    if (waiting_lines.empty()) {
      continue;
    }
    const std::string& line = waiting_lines.front();
    ++waited;
    // "ascend-setup: info: waiting for the lock held by pid N on host H (fetching URL into DIR,
    // LOCK)"
    bool names_a_build = false;
    for (const auto& pid : pids) {
      names_a_build |=
          line.find("held by pid " + pid + " on host " + this_host() + " (") != std::string::npos;
    }
    EXPECT_TRUE(names_a_build) << line;
    EXPECT_NE(
        line.find("(fetching " + url(nginx) + " into " + (package_root / "llvm-e2e").string()),
        std::string::npos)
        << line;
  }
  EXPECT_EQ(waited, builds.size() - 1) << "a build did not wait for the one fetching";
  EXPECT_LE(nginx.body_bytes_sent(), package_size() * 110 / 100)
      << nginx.body_bytes_sent() << " bytes served for a package of " << package_size();
  expect_whole_package(url(nginx));
}

TEST_F(SharedCacheTest, HolderKilledMidDownloadTheWaiterTakesOverAndResumes) {
  make_package(kPayload);
  // Half the package passes, the rest waits at the gate until the holder is
  // dead: it is mid-download when killed, however fast the machine.
  const StreamGate gate = gate_downloads(kPayload / 2);
  NginxServer nginx(dir.path() / "nginx", www, &gate);
  const auto args = with_profile(base(nginx), {"build_ext"});
  fs::create_directories(dir.path() / "copy");
  const fs::path other = copy_example_tree(dir.path() / "copy");
  BackgroundProcess holder(host_command(tree, env, args), dir.path() / "holder.log");
  ASSERT_TRUE(
      wait_until([&] { return !holder.running() || downloaded() >= package_size() / 4; }, 120))
      << read_file(dir.path() / "holder.log");
  ASSERT_TRUE(holder.running()) << read_file(dir.path() / "holder.log");
  BackgroundProcess waiter(host_command(other, env, args), dir.path() / "waiter.log");
  const std::string waiting = "waiting for the lock held by pid " + std::to_string(holder.pid());
  ASSERT_TRUE(wait_until(
      [&] {
        return !waiter.running() ||
               read_file(dir.path() / "waiter.log").find(waiting) != std::string::npos;
      },
      120))
      << read_file(dir.path() / "waiter.log");
  // Killed once its saved state (once a second) holds every byte that passed
  // the gate, the answers' headers aside: the waiter fetches only the rest.
  ASSERT_TRUE(wait_until(
      [&] {
        const auto passed = gate.holding();
        return !holder.running() || (passed && downloaded() + (64 << 10) >= *passed);
      },
      120))
      << read_file(dir.path() / "holder.log");
  ASSERT_TRUE(holder.signal(SIGKILL)) << read_file(dir.path() / "holder.log");
  EXPECT_EQ(holder.exit_code(60), 128 + SIGKILL);
  gate.open();
  const auto code = waiter.exit_code(300);
  const std::string log = read_file(dir.path() / "waiter.log");
  ASSERT_TRUE(code) << log;
  EXPECT_EQ(*code, 0) << log;
  EXPECT_NE(log.find(waiting + " on host " + this_host()), std::string::npos) << log;
  EXPECT_NE(log.find("resuming .llvm-e2e.download.part"), std::string::npos) << log;
  EXPECT_LE(nginx.body_bytes_sent(), package_size() * 115 / 100)
      << nginx.body_bytes_sent() << " bytes served for a package of " << package_size();
  expect_whole_package(url(nginx));
}

// A build waiting for the package's lock (held here, as by a build in
// another container: the lock file names a pid and host this run cannot
// see) says whose it is, and a stop while it waits is a plain stop.
TEST_F(SharedCacheTest, StopWhileWaitingForThePackageLockIsAPlainStop) {
  make_package(0);
  NginxServer nginx(dir.path() / "nginx", www);
  const fs::path lock_file = package_root / ".llvm-e2e.lock";
  HeldFileLock lock(lock_file, "4242 other-container\n");
  ASSERT_TRUE(lock.held());
  const fs::path log = dir.path() / "waiting.log";
  BackgroundProcess waiting(host_command(tree, env, with_profile(base(nginx), {"build_ext"})), log);
  const std::string expected =
      "ascend-setup: info: waiting for the lock held by pid 4242 on host "
      "other-container (fetching " +
      url(nginx) + " into " + (package_root / "llvm-e2e").string() + ", " + lock_file.string() +
      ")";
  const bool waits = wait_until(
      [&] { return !waiting.running() || read_file(log).find(expected) != std::string::npos; },
      120);
  EXPECT_TRUE(waits && waiting.running()) << read_file(log);
  EXPECT_TRUE(waiting.signal(SIGTERM));
  const auto code = waiting.exit_code(60);
  lock.release();
  const std::string err = read_file(log);
  ASSERT_TRUE(code) << err;
  EXPECT_EQ(*code, 128 + SIGTERM) << err;
  EXPECT_NE(err.find("ascend-setup: error: interrupted by SIGTERM"), std::string::npos) << err;
  EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
  EXPECT_EQ(err.find("Traceback"), std::string::npos) << err;
  EXPECT_TRUE(nginx.log_lines().empty());
}

// The phase "download" of doc/stopping.md.
TEST_F(SharedCacheTest, DownloadStoppedBySigintIsResumed) { stop_during_download(SIGINT); }
TEST_F(SharedCacheTest, DownloadStoppedBySigtermIsResumed) { stop_during_download(SIGTERM); }
TEST_F(SharedCacheTest, DownloadStoppedBySigkillIsResumed) { stop_during_download(SIGKILL); }

// The phase "extraction" of doc/stopping.md.
TEST_F(SharedCacheTest, ExtractionStoppedBySigintKeepsTheDownload) {
  stop_during_extraction(SIGINT);
}
TEST_F(SharedCacheTest, ExtractionStoppedBySigtermKeepsTheDownload) {
  stop_during_extraction(SIGTERM);
}
TEST_F(SharedCacheTest, ExtractionStoppedBySigkillKeepsTheDownload) {
  stop_during_extraction(SIGKILL);
}

TEST_F(SharedCacheTest, FullDiskDuringExtractionKeepsTheDownloadThenTheRerunUnpacksIt) {
  // TRITON_HOME on a 64 MiB tmpfs with 24 MiB left: the download (about
  // 100 KiB: 48 MiB of zeros compress) fits, the unpacked package does not.
  SmallDisk disk(dir.path() / "small-home", "64m");
  env["TRITON_HOME"] = disk.path().string();
  package_root = disk.path() / ".triton" / "llvm";
  make_package(0, [](const fs::path& source) { sparse_zeros(source / "lib" / "zeros.bin", 48); });
  disk.fill(24 << 20);
  NginxServer nginx(dir.path() / "nginx", www);
  const auto args = with_profile(base(nginx), {"build_ext"});

  const auto first = host(args);
  EXPECT_EQ(first.exit_code, ascend_setup::exit_code::bad_input) << first.err;
  const std::string line = error_line(first.err);
  EXPECT_EQ(line.rfind("ascend-setup: error: the disk is full: cannot write ", 0), 0u) << first.err;
  EXPECT_NE(line.find(" on " + disk.path().string() + "; the step needs about 48.0 MiB)"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("the download is kept in " + download().string()), std::string::npos) << line;
  EXPECT_EQ(first.err.find("Traceback"), std::string::npos) << first.err;
  EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));
  EXPECT_TRUE(staged_copies(package_root).empty())
      << ::testing::PrintToString(staged_copies(package_root));
  ASSERT_TRUE(fs::exists(download()));

  fs::remove(disk.path() / ".filler");  // room made
  const std::uint64_t served = nginx.body_bytes_sent();
  const auto rerun = host(args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_EQ(nginx.body_bytes_sent(), served) << "the rerun fetched again";
  expect_whole_package(url(nginx));
}

// A refused member makes the archive hostile: nothing of it is kept, the
// download included (issue 38), and each run fetches and refuses it again.
TEST_F(SharedCacheTest, RefusedMemberKeepsNothingAndTheRerunRefusesAgain) {
  must_run({SYSTEM_PYTHON, "-c",
            "import io, sys, tarfile\n"
            "t = tarfile.open(sys.argv[1], 'w:gz')\n"
            "for name in ('llvm-e2e/lib/ok.txt', '../escaped'):\n"
            "    info = tarfile.TarInfo(name); info.size = 2\n"
            "    t.addfile(info, io.BytesIO(b'x\\n'))\n"
            "t.close()\n",
            (www / "llvm-e2e.tar.gz").string()},
           dir.path());
  NginxServer nginx(dir.path() / "nginx", www);
  const auto args = with_profile(base(nginx), {"build_ext"});
  const std::string refusal =
      "holds an entry with an absolute path or a `..` part: '../escaped'; refused (it would be "
      "written outside ";
  for (int run = 0; run < 2; ++run) {
    const std::uint64_t served = nginx.body_bytes_sent();
    const auto result = host(args);
    EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
    const std::string line = error_line(result.err);
    EXPECT_NE(line.find(refusal), std::string::npos) << result.err;
    EXPECT_NE(line.find("; the download was removed (the next run fetches "), std::string::npos)
        << line;
    EXPECT_EQ(result.err.find("Traceback"), std::string::npos) << result.err;
    EXPECT_GT(nginx.body_bytes_sent(), served) << "run " << run << " did not fetch";
    EXPECT_FALSE(fs::exists(download()));
    EXPECT_FALSE(fs::exists(package_root / "llvm-e2e"));
    EXPECT_TRUE(staged_copies(package_root).empty())
        << ::testing::PrintToString(staged_copies(package_root));
    for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
      EXPECT_NE(entry.path().filename(), "escaped") << entry.path();
    }
  }
}

}  // namespace
