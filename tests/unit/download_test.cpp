// The downloader and the package fetch on loopback: a real nginx started by
// the test, and the fault-injecting stand-in server (tests/stand_ins; the
// tests using it say so in their names) that resets, stalls, lies about the
// length, answers 503 or ignores Range. After every fault the cache holds no
// partial package: each package directory is absent or whole with its
// version.txt.
#include "base/download/archive_extract.hpp"
#include "base/download/http_download.hpp"
#include "base/download/package_fetch.hpp"
#include "base/util/error.hpp"
#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

constexpr std::uint64_t kPayload = 3 << 20;  // 3 MiB, incompressible

DownloadOptions test_options() {
  DownloadOptions options;
  options.connections = 8;
  options.attempts = 4;
  options.stall_seconds = 1;
  options.backoff = std::chrono::milliseconds(20);
  options.min_split_bytes = 64 << 10;
  options.progress = false;
  return options;
}

class DownloadTest : public ::testing::Test {
 protected:
  DownloadTest() {
    fs::create_directories(www);
    tarball = make_package_tarball(www, "llvm-test", kPayload);
    cache = dir.path() / "home" / ".triton";
  }

  PackageSpec spec(const std::string& url) const { return {url, cache / "llvm", "llvm-test"}; }

  // Every non-hidden entry of the package root is a whole package of `url`.
  void expect_no_partial_package(const std::string& url) const {
    const fs::path root = cache / "llvm";
    if (!fs::exists(root)) {
      return;
    }
    for (const auto& entry : fs::directory_iterator(root)) {
      const std::string name = entry.path().filename().string();
      if (name.front() == '.') {
        continue;
      }
      EXPECT_EQ(read_file(entry.path() / "version.txt"), url) << name;
      EXPECT_EQ(fs::file_size(entry.path() / "lib" / "payload.bin"), kPayload) << name;
    }
  }

  void expect_whole_package(const std::string& url) const {
    const fs::path package = cache / "llvm" / "llvm-test";
    ASSERT_TRUE(fs::is_directory(package));
    EXPECT_EQ(read_file(package / "version.txt"), url);
    EXPECT_EQ(read_file(package / "lib" / "payload.bin"),
              read_file(www / "source-llvm-test" / "llvm-test" / "lib" / "payload.bin"));
    EXPECT_TRUE(fs::is_symlink(package / "lib" / "payload-link.bin"));
    // Nothing left beside it: no part, no state, no staging.
    for (const auto& entry : fs::directory_iterator(cache / "llvm")) {
      EXPECT_EQ(entry.path().filename(), "llvm-test");
    }
  }

  TempDir dir;
  fs::path www = dir.path() / "www";
  fs::path tarball;
  fs::path cache;
};

TEST_F(DownloadTest, NginxServesThePackageInParallelRanges) {
  NginxServer nginx(dir.path() / "nginx", www);
  const std::string url = nginx.url("llvm-test.tar.gz");
  const PackageOutcome outcome = fetch_package(spec(url), test_options());
  EXPECT_TRUE(outcome.fetched);
  EXPECT_TRUE(outcome.download.ranged);
  expect_whole_package(url);
  EXPECT_GE(nginx.responses(206), 8) << ::testing::PrintToString(nginx.log_lines());
  EXPECT_EQ(nginx.responses(200), 0);
  // Every byte written once. (nginx's own count also has what was in flight
  // when a range was cut short for a split: on an unthrottled loopback that
  // can be a socket buffer per cut, so it is not asserted here; the e2e
  // kill test and bench/ measure it at a throttled rate.)
  EXPECT_EQ(outcome.download.fetched, fs::file_size(tarball));
  // Cached: a second call asks nothing.
  const size_t requests = nginx.log_lines().size();
  EXPECT_FALSE(fetch_package(spec(url), test_options()).fetched);
  EXPECT_EQ(nginx.log_lines().size(), requests);
}

TEST_F(DownloadTest, ProgressOnAPipeIsALinePerTenPercent) {
  NginxServer nginx(dir.path() / "nginx", www);
  DownloadOptions options = test_options();
  options.progress = true;
  options.label = "llvm-test";
  ::testing::internal::CaptureStderr();
  download_file(nginx.url("llvm-test.tar.gz"), dir.path() / "file", options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (char c : err) {
    lines += c == '\n' ? 1 : 0;
  }
  EXPECT_LE(lines, 12u) << err;
  EXPECT_EQ(err.find('\r'), std::string::npos) << err;
  EXPECT_NE(err.find("downloaded llvm-test: "), std::string::npos) << err;
}

TEST_F(DownloadTest, FaultServerStandInResetsAreResumedWhereTheyStopped) {
  FaultServer server(dir.path() / "server", tarball, "reset", 6, 200000);
  const std::string url = server.url("llvm-test.tar.gz");
  const PackageOutcome outcome = fetch_package(spec(url), test_options());
  expect_whole_package(url);
  // A faulty request whose range was shorter than 200000 bytes ended cleanly.
  EXPECT_GE(outcome.download.retries, 1);
  // Each retry went on from where its range stopped: every byte was written
  // once (the server's own count also holds what each reset threw away).
  EXPECT_EQ(outcome.download.fetched, fs::file_size(tarball));
}

TEST_F(DownloadTest, FaultServerStandInStallIsALowSpeedLimitThenRetried) {
  FaultServer server(dir.path() / "server", tarball, "stall", 2, 100000);
  const std::string url = server.url("llvm-test.tar.gz");
  const PackageOutcome outcome = fetch_package(spec(url), test_options());
  expect_whole_package(url);
  EXPECT_GE(outcome.download.retries, 2);
}

TEST_F(DownloadTest, FaultServerStandInWrongLengthIsNeverKept) {
  FaultServer server(dir.path() / "server", tarball, "wrong-length", 3, 0);
  const std::string url = server.url("llvm-test.tar.gz");
  const PackageOutcome outcome = fetch_package(spec(url), test_options());
  expect_whole_package(url);
  EXPECT_GE(outcome.download.retries, 1);
}

TEST_F(DownloadTest, FaultServerStandIn503ThenSuccess) {
  FaultServer server(dir.path() / "server", tarball, "503", 2, 0);
  const std::string url = server.url("llvm-test.tar.gz");
  const PackageOutcome outcome = fetch_package(spec(url), test_options());
  expect_whole_package(url);
  EXPECT_EQ(outcome.download.retries, 2);
}

TEST_F(DownloadTest, FaultServerStandInIgnoringRangeIsReadFromZeroInOneStream) {
  // A first run stops (resets, one attempt allowed) with part of the file
  // kept; then the server ignores Range: the rerun restarts from byte 0 in
  // one stream instead of appending to the part, and the file is exact.
  FaultServer server(dir.path() / "server", tarball, "reset", 0, 300000);
  const std::string url = server.url("llvm-test.tar.gz");
  DownloadOptions options = test_options();
  options.attempts = 1;
  EXPECT_THROW(fetch_package(spec(url), options), Error);
  expect_no_partial_package(url);
  EXPECT_TRUE(fs::exists(part_path(package_download(spec(url)))));
  EXPECT_TRUE(fs::exists(state_path(package_download(spec(url)))));
  server.set_mode("ignore-range");
  const PackageOutcome outcome = fetch_package(spec(url), test_options());
  EXPECT_FALSE(outcome.download.ranged);
  EXPECT_GT(outcome.download.resumed_from, 0u);
  expect_whole_package(url);
}

TEST_F(DownloadTest, FaultServerStandInWithEveryRequestFailingGivesUpInOneLine) {
  FaultServer server(dir.path() / "server", tarball, "503", 0, 0);
  const std::string url = server.url("llvm-test.tar.gz");
  try {
    fetch_package(spec(url), test_options());
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.exit_code(), exit_code::bad_input);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find("HTTP 503"), std::string::npos) << message;
    EXPECT_NE(message.find("curl -fL -C - -o"), std::string::npos) << message;
  }
  EXPECT_EQ(server.requests(), 4);  // the attempts, bounded
  expect_no_partial_package(url);
  EXPECT_FALSE(fs::exists(cache / "llvm" / "llvm-test"));
}

TEST_F(DownloadTest, UnreachableServerIsOneLineWithUrlTargetAndManualCommand) {
  const std::string url = "http://127.0.0.1:" + std::to_string(free_port()) + "/llvm-test.tar.gz";
  DownloadOptions options = test_options();
  options.attempts = 2;
  try {
    fetch_package(spec(url), options);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.exit_code(), exit_code::bad_input);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("offline or unreachable: cannot download " + url + " to " +
                                (cache / "llvm" / "llvm-test").string(),
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("by hand: curl -fL -C - -o '" + (cache / "llvm").string() +
                           "/llvm-test.tar.gz' '" + url + "' && tar -xf "),
              std::string::npos)
        << message;
  }
  EXPECT_FALSE(fs::exists(cache / "llvm" / "llvm-test"));
}

TEST_F(DownloadTest, ABadArchiveLeavesNoPackage) {
  write_file(www / "broken.tar.gz", read_file(tarball).substr(0, 100000));
  NginxServer nginx(dir.path() / "nginx", www);
  const std::string url = nginx.url("broken.tar.gz");
  EXPECT_THROW(fetch_package(spec(url), test_options()), Error);
  EXPECT_FALSE(fs::exists(cache / "llvm" / "llvm-test"));
  EXPECT_FALSE(fs::exists(package_staging(spec(url))));
}

// Hostile archives: each written with Python's tarfile, each refused, and
// nothing written outside the staging directory.
class HostileArchiveTest : public ::testing::Test {
 protected:
  fs::path make(const std::string& name, const std::string& members) {
    const fs::path archive = dir.path() / (name + ".tar.gz");
    must_run({SYSTEM_PYTHON, "-c",
              "import io, sys, tarfile\n"
              "t = tarfile.open(sys.argv[1], 'w:gz')\n"
              "def add(name, data=b'x', kind=tarfile.REGTYPE, link=''):\n"
              "    info = tarfile.TarInfo(name); info.type = kind; info.linkname = link\n"
              "    info.size = len(data) if kind == tarfile.REGTYPE else 0\n"
              "    t.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)\n"
              "add('pkg/ok.txt')\n" +
                  members + "t.close()\n",
              archive.string()},
             dir.path());
    return archive;
  }
  // Extracts into outside/staging; true when refused. Nothing may appear
  // outside staging.
  void expect_refused(const fs::path& archive) {
    const fs::path outside = dir.path() / ("outside-" + archive.stem().stem().string());
    const fs::path staging = outside / "a" / "staging";
    fs::create_directories(staging);
    EXPECT_THROW(extract_archive(archive, staging), Error) << archive;
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(outside)) {
      const auto relative = entry.path().lexically_relative(staging);
      if (*relative.begin() == "..") {
        found.push_back(entry.path().lexically_relative(outside).string());
      }
    }
    EXPECT_EQ(found, std::vector<std::string>{"a"}) << archive;
  }
  TempDir dir;
};

TEST_F(HostileArchiveTest, DotDotAbsoluteAndEscapingLinksWriteNothingOutside) {
  const std::string absolute = (dir.path() / "absolute-target").string();
  expect_refused(make("dotdot", "add('pkg/../../evil')\n"));
  expect_refused(make("dotdot-top", "add('../evil')\n"));
  expect_refused(make("absolute", "add('" + absolute + "')\n"));
  expect_refused(make("symlink-out",
                      "add('pkg/up', kind=tarfile.SYMTYPE, link='../../..')\n"
                      "add('pkg/up/evil')\n"));
  expect_refused(make("symlink-absolute", "add('pkg/root', kind=tarfile.SYMTYPE, link='/')\n"));
  expect_refused(make("hardlink-out", "add('pkg/h', kind=tarfile.LNKTYPE, link='../../x')\n"));
  EXPECT_FALSE(fs::exists(absolute));
  EXPECT_FALSE(fs::exists(dir.path() / "evil"));
}

TEST_F(HostileArchiveTest, InsideLinksAreKept) {
  const fs::path archive = make("fine",
                                "add('pkg/lib/a.so.1')\n"
                                "add('pkg/lib/a.so', kind=tarfile.SYMTYPE, link='a.so.1')\n"
                                "add('pkg/bin/x', kind=tarfile.SYMTYPE, link='../lib/a.so')\n");
  const fs::path staging = dir.path() / "staging";
  fs::create_directories(staging);
  EXPECT_EQ(extract_archive(archive, staging), 4u);
  EXPECT_EQ(fs::read_symlink(staging / "pkg/bin/x"), "../lib/a.so");
  EXPECT_EQ(read_file(staging / "pkg/bin/x"), "x");
}

}  // namespace
