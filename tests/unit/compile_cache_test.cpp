// The shared compile cache's settings: ccache's URL syntax (redis and http,
// ports, IPv6, a password kept out of messages, attributes) and its refusals,
// and the configure call rewritten for the cache (the prefix map after the
// call's or the user's flags, ccache as the launcher unless named, values
// under TRITON_HOME or HOME given through links in the build directory, the
// tree's own paths, other paths and names the build directory holds left
// alone).
#include "base/jobs/compile_cache.hpp"
#include "base/tree/build_lock.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ascend_setup;
using namespace test_support;

namespace {

TEST(CompileCacheUrl, ReadsRedisAndHttpWithTheirDefaults) {
  const CompileCacheUrl redis = parse_compile_cache_url("redis://cache.ci");
  EXPECT_EQ(redis.scheme, "redis");
  EXPECT_EQ(redis.host, "cache.ci");
  EXPECT_EQ(redis.port, 6379);
  EXPECT_EQ(parse_compile_cache_url("redis://cache.ci:7000/3").port, 7000);

  const CompileCacheUrl http =
      parse_compile_cache_url("http://user:secret@[::1]:8080/ccache|layout=subdirs|read-only=true");
  EXPECT_EQ(http.scheme, "http");
  EXPECT_EQ(http.host, "::1");
  EXPECT_EQ(http.port, 8080);
  EXPECT_EQ(http.shown, "http://user:****@[::1]:8080/ccache");
  EXPECT_EQ(http.text, "http://user:secret@[::1]:8080/ccache|layout=subdirs|read-only=true");
  ASSERT_EQ(http.attributes.size(), 2u);
  EXPECT_EQ(http.attributes[0], (std::pair<std::string, std::string>{"layout", "subdirs"}));
  EXPECT_EQ(parse_compile_cache_url("http://cache.ci/c").port, 80);
}

TEST(CompileCacheUrl, RefusesWhatCcacheCannotUseAsOneUsageError) {
  const std::pair<const char*, const char*> cases[] = {
      {"cache.ci:6379", "no scheme"},
      {"ftp://cache.ci", "the scheme `ftp` is not redis or http"},
      {"https://cache.ci/c", "ccache's http storage has no TLS"},
      {"redis://:6379", "no host"},
      {"redis://cache.ci:0", "the port `0` is not a whole number from 1 to 65535"},
      {"redis://cache.ci:http", "the port `http`"},
      {"redis://cache.ci/db", "redis's path `/db` is not /DATABASE-NUMBER"},
      {"redis://[::1", "`[` without `]`"},
      {"redis://cache.ci|shards", "the attribute `shards` is not NAME=VALUE"},
      {"redis://cache.ci|colour=red", "unknown attribute `colour`"},
      {"redis://a redis://b", "one storage only"},
      {"|read-only=true", "no URL"},
  };
  for (const auto& [url, why] : cases) {
    try {
      parse_compile_cache_url(url);
      ADD_FAILURE() << url << " accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::usage) << url;
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("ASCEND_SETUP_COMPILE_CACHE `") + url + "`: " + why),
                std::string::npos)
          << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
  // The password and the token stay out of messages, past the path too.
  try {
    parse_compile_cache_url("redis://:hunter2@cache.ci:6379/x|bearer-token=t0ken");
    ADD_FAILURE();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("`redis://:****@cache.ci:6379/x|bearer-token=****`: redis's path `/x`"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
    EXPECT_EQ(message.find("t0ken"), std::string::npos) << message;
  }
  // Without a scheme, the token still does not show.
  try {
    parse_compile_cache_url("cache.ci|bearer-token=t0ken");
    ADD_FAILURE();
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).find("t0ken"), std::string::npos) << error.what();
  }
}

// HOME, TRITON_HOME, CFLAGS and CXXFLAGS set for one test, restored after.
class CompileCacheCallTest : public ::testing::Test {
 protected:
  CompileCacheCallTest() {
    for (const char* name : kNames) {
      const char* value = std::getenv(name);
      saved.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
      ::unsetenv(name);
    }
    ::setenv("HOME", home.c_str(), 1);
    fs::create_directories(build);
    cache.active = true;
    cache.tree = tree;
    cache.ccache = "/usr/bin/ccache";
  }
  ~CompileCacheCallTest() override {
    for (const auto& [name, value] : saved) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  static constexpr const char* kNames[] = {"HOME", "TRITON_HOME", "CFLAGS", "CXXFLAGS"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  TempDir dir;
  fs::path home = dir.path() / "home";
  fs::path tree = dir.path() / "ci" / "tree";
  fs::path build = tree / "build" / "cmake.x";
  CompileCache cache;
};

TEST_F(CompileCacheCallTest, AddsThePrefixMapAndTheLauncherAndLinksPathsUnderHome) {
  const fs::path llvm = home / ".triton/llvm/llvm-x";
  fs::create_directories(llvm / "include");
  ::setenv("CXXFLAGS", " -O1 ", 1);
  const auto call = compile_cache_configure_call(
      cache,
      {"cmake", tree.string(), "-DLLVM_INCLUDE_DIRS=" + (llvm / "include").string(),
       "-DLLVM_SYSPATH:PATH=" + llvm.string(), "-DTRITON_WHEEL_DIR=" + (tree / "x").string(),
       "-DPython3_INCLUDE_DIR=/usr/include/python3.11", "-DCMAKE_C_FLAGS=-Wall"},
      build);
  const std::string map = "-ffile-prefix-map=" + tree.string() + "=.";
  const fs::path link = build / ".triton";
  EXPECT_EQ(
      call,
      (std::vector<std::string>{
          "cmake", tree.string(), "-DLLVM_INCLUDE_DIRS=" + (link / "llvm/llvm-x/include").string(),
          "-DLLVM_SYSPATH:PATH=" + (link / "llvm/llvm-x").string(),
          "-DTRITON_WHEEL_DIR=" + (tree / "x").string(),
          "-DPython3_INCLUDE_DIR=/usr/include/python3.11", "-DCMAKE_C_FLAGS=-Wall " + map,
          "-DCMAKE_CXX_FLAGS=-O1 " + map, "-DCMAKE_C_COMPILER_LAUNCHER=/usr/bin/ccache",
          "-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/ccache"}));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), home / ".triton");
  EXPECT_TRUE(fs::is_directory(link / "llvm/llvm-x/include"));
}

TEST_F(CompileCacheCallTest, TritonHomeFirstTheCallsLauncherKeptNothingWhenInactive) {
  const fs::path triton_home = dir.path() / "th";
  ::setenv("TRITON_HOME", triton_home.c_str(), 1);
  const std::vector<std::string> given{"cmake", "-DX=" + (triton_home / ".triton/p").string(),
                                       "-DCMAKE_CXX_COMPILER_LAUNCHER=sccache"};
  const auto call = compile_cache_configure_call(cache, given, build);
  EXPECT_EQ(call[1], "-DX=" + (build / ".triton/p").string());
  EXPECT_EQ(std::count(call.begin(), call.end(), "-DCMAKE_CXX_COMPILER_LAUNCHER=sccache"), 1);
  EXPECT_EQ(std::count(call.begin(), call.end(), "-DCMAKE_C_COMPILER_LAUNCHER=/usr/bin/ccache"), 1);
  EXPECT_EQ(std::count(call.begin(), call.end(), "-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/ccache"),
            0);
  // The prefix map once, however often the call is rewritten.
  const auto again = compile_cache_configure_call(cache, call, build);
  EXPECT_EQ(again, call);

  cache.active = false;
  EXPECT_EQ(compile_cache_configure_call(cache, given, build), given);
}

TEST_F(CompileCacheCallTest, ATreeInsideHomeIsNotLinkedIntoItself) {
  cache.tree = home / "work" / "tree";
  const std::vector<std::string> given{"cmake", "-DA=" + (home / "work/other").string(),
                                       "-DB=" + (home / "work/tree/lib").string()};
  const auto call = compile_cache_configure_call(cache, given, build);
  EXPECT_EQ(call[1], given[1]);
  EXPECT_EQ(call[2], given[2]);
  EXPECT_FALSE(fs::exists(build / "work"));
}

TEST_F(CompileCacheCallTest, ANameTheBuildDirectoryHoldsIsLeftAlone) {
  fs::create_directories(build / ".triton");
  const std::string value = "-DX=" + (home / ".triton/p").string();
  EXPECT_EQ(compile_cache_configure_call(cache, {"cmake", value}, build)[1], value);
  EXPECT_FALSE(fs::is_symlink(build / ".triton"));
}

// A build without the shared cache after one with it: the earlier build's
// stats log goes, so that the report marks no hits of it on this build's jobs.
TEST(CompileCacheLogFile, ABuildWithoutTheCacheLeavesNoEarlierLog) {
  TempDir dir;
  const fs::path log = compile_cache_log_path(dir.path());
  fs::create_directories(log.parent_path());
  write_file(log, "# /t/a.cpp\nremote_storage_hit\n");
  const char* before = std::getenv("ASCEND_SETUP_COMPILE_CACHE");
  const std::optional<std::string> saved =
      before ? std::optional<std::string>(before) : std::nullopt;
  ::unsetenv("ASCEND_SETUP_COMPILE_CACHE");
  EXPECT_FALSE(apply_compile_cache(dir.path(), false).active);
  EXPECT_TRUE(fs::exists(log));  // --list-env leaves it
  EXPECT_FALSE(apply_compile_cache(dir.path(), true).active);
  EXPECT_FALSE(fs::exists(log));
  release_build_lock();  // taken to remove the log
  if (saved) {
    ::setenv("ASCEND_SETUP_COMPILE_CACHE", saved->c_str(), 1);
  }
}

}  // namespace
