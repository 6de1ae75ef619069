// scripts/build-static-deps.sh on a prefix it finished: the portable build's
// own (ASCEND_SETUP_STATIC_DEPS), copied without its archives' content. A run
// finds nothing to build, writes PREFIX/versions.json again when it is
// missing, and says which libraries it built older than Debian's security
// versions.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;

namespace {

// The stamp and headers of the build's prefix, and empty archives: what the
// script looks at to decide that the build is done.
fs::path copy_finished_prefix(const fs::path& dir) {
  const fs::path from = STATIC_DEPS;
  const fs::path prefix = dir / "prefix";
  fs::create_directories(prefix / "lib");
  fs::copy(from / "include", prefix / "include", fs::copy_options::recursive);
  fs::copy_file(from / "build-static-deps.stamp", prefix / "build-static-deps.stamp");
  for (const char* archive : {"libgit2.a", "libcurl.a", "libarchive.a", "libz.a"}) {
    write_file(prefix / "lib" / archive, "");
  }
  return prefix;
}

ascend_setup::ProcessResult build_static_deps(const fs::path& prefix) {
  return ascend_setup::run_process(
      {{"bash", std::string(SOURCE_DIR) + "/scripts/build-static-deps.sh", prefix.string()},
       prefix.parent_path(),
       {},
       {}});
}

const nlohmann::ordered_json& library(const nlohmann::ordered_json& versions,
                                      const std::string& name) {
  for (const auto& entry : versions["libraries"]) {
    if (entry["name"] == name) {
      return entry;
    }
  }
  ADD_FAILURE() << "no " << name << " in " << versions.dump();
  static const nlohmann::ordered_json none = nlohmann::ordered_json::object();
  return none;
}

}  // namespace

TEST(StaticDeps, AFinishedPrefixGetsItsVersionsRecordBackAndNamesOlderLibraries) {
  if (!PORTABLE_BUILD) {
    GTEST_SKIP() << "needs the prefix of scripts/build-static-deps.sh (the portable build)";
  }
  TempDir dir;
  const fs::path prefix = copy_finished_prefix(dir.path());
  // The zlib it built is said to be older than a newer Debian version.
  const fs::path stamp = prefix / "build-static-deps.stamp";
  std::string text = read_file(stamp);
  const auto newest = text.find("zlib-newest: zlib ");
  ASSERT_NE(newest, std::string::npos) << text;
  text.replace(newest, text.find('\n', newest) - newest, "zlib-newest: zlib 1:9.9-1");
  write_file(stamp, text);

  const auto run = build_static_deps(prefix);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.err, "nothing to do")) << run.err;
  const auto versions = parse_json(read_file(prefix / "versions.json"));
  const auto original = parse_json(read_file(fs::path(STATIC_DEPS) / "versions.json"));
  EXPECT_EQ(versions["distro"], original["distro"]);
  for (const char* name : {"libgit2", "libcurl", "libarchive", "zlib", "openssl", "libssh2",
                           "http-parser", "pcre2", "liblzma", "libdeflate"}) {
    SCOPED_TRACE(name);
    const auto& entry = library(versions, name);
    EXPECT_EQ(entry["version"], library(original, name)["version"]);
    EXPECT_EQ(entry["debian_version"], library(original, name)["debian_version"]);
    EXPECT_NE(entry["version"], "unknown");
  }
  const auto& zlib = library(versions, "zlib");
  EXPECT_EQ(zlib["origin"], "source");
  EXPECT_EQ(zlib["newer_debian_version"], "1:9.9-1");
  EXPECT_TRUE(contains(run.err, "the portable build ships zlib " +
                                    zlib["debian_version"].get<std::string>() +
                                    ", OLDER than Debian's security version 1:9.9-1"))
      << run.err;
  EXPECT_EQ(library(versions, "openssl")["origin"], "archive");
  EXPECT_EQ(library(versions, "openssl")["debian_source"], "openssl");
}
