// The shared compile cache: real bdist_wheel builds of the example tree (real
// CMake, Ninja, clang++, ccache) against Debian's redis-server and nginx's
// WebDAV (PUT) on loopback, started by the test. Checkout A builds; checkout
// B (another directory at another depth, another HOME with its own copy of
// the LLVM package under .triton, an empty local ccache directory) compiles
// no object: every compile a remote hit, with debug info on (REL_WITH_DEB_INFO:
// -g), and its wheel is byte-identical to A's (SOURCE_DATE_EPOCH). A server
// that does not answer: one warning and a local build. The CmakeBuild suite
// name keeps the builds out of the sanitized run; the settings' checks (a bad
// URL, no sccache setting, --list-env) build nothing.
#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sstream>

using namespace test_support;

namespace {

// One CI job: its own directory (the tree `depth` directories below it), its
// own HOME holding the LLVM package as upstream's cache keeps it, its own
// empty ccache directory.
struct Checkout {
  Checkout(const fs::path& root, int depth, const std::string& cache_url) {
    fs::path parent = root;
    for (int i = 0; i < depth; ++i) {
      parent /= "ci" + std::to_string(i);
    }
    fs::create_directories(parent);
    tree = copy_example_tree(parent);
    home = root / "home";
    const fs::path llvm = home / ".triton" / "llvm" / "llvm-stub";
    fs::create_directories(llvm.parent_path());
    fs::copy(STUB_LLVM, llvm, fs::copy_options::recursive);
    env = offline_env(home);
    env["LLVM_SYSPATH"] = llvm.string();
    env["CCACHE_DIR"] = (root / "ccache").string();
    for (const char* name :
         {"CCACHE_BASEDIR", "CCACHE_REMOTE_STORAGE", "CCACHE_STATSLOG", "CCACHE_PREFIX",
          "CCACHE_NOHASHDIR", "CCACHE_HASHDIR", "CCACHE_SLOPPINESS", "CCACHE_REMOTE_ONLY",
          "DISTCC_HOSTS", "ASCEND_SETUP_DISTCC_HOSTS", "CFLAGS", "CXXFLAGS"}) {
      env[name] = std::nullopt;
    }
    env["REL_WITH_DEB_INFO"] = "1";  // -g: the compile's directory is in the object
    env["SOURCE_DATE_EPOCH"] = "1700000000";
    env["ASCEND_SETUP_COMPILE_CACHE"] = cache_url;
  }
  ascend_setup::ProcessResult build() const { return run_host({"bdist_wheel"}, tree, env); }
  std::string wheel() const {
    const auto wheels = files_in(tree / "dist", ".whl");
    return wheels.size() == 1 ? read_file(wheels[0]) : "";
  }
  std::string stats_log() const {
    return read_file(tree / "build" / "ascend-setup" / "compile-cache.log");
  }
  fs::path tree;
  fs::path home;
  Env env;
};

// The counters of each compile in a ccache stats log, by source.
std::map<std::string, std::vector<std::string>> compiles(const std::string& log) {
  std::map<std::string, std::vector<std::string>> by_source;
  std::istringstream in(log);
  std::string source;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) {
      source = line.substr(2);
      by_source[source];
    } else if (!line.empty()) {
      by_source[source].push_back(line);
    }
  }
  return by_source;
}

bool has(const std::vector<std::string>& counters, const std::string& name) {
  return std::find(counters.begin(), counters.end(), name) != counters.end();
}

// An object of the build, for its debug info.
fs::path some_object(const fs::path& tree) {
  for (const auto& entry : fs::recursive_directory_iterator(tree / "build")) {
    if (entry.path().filename() == "Dialect.cpp.o") {
      return entry.path();
    }
  }
  return {};
}

// Upstream's CMake build directory (build/cmake.<platform>-<python>).
fs::path cmake_dir(const fs::path& tree) {
  for (const auto& entry : fs::directory_iterator(tree / "build")) {
    if (entry.path().filename().string().rfind("cmake.", 0) == 0) {
      return entry.path();
    }
  }
  return {};
}

class CompileCacheCmakeBuildTest : public ::testing::Test {
 protected:
  // A builds and fills the cache; B, elsewhere, then compiles nothing.
  void shares_between_checkouts(const std::string& url) {
    const Checkout a(dir.path() / "a", 1, url);
    const Checkout b(dir.path() / "b", 3, url);
    ASSERT_EQ(run_host({"--host-version"}, a.tree, a.env).exit_code, 0);

    const auto first = a.build();
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_TRUE(lines_with(first.err, kAscendSetupWarning).empty()) << first.err;
    EXPECT_NE(first.err.find("build summary: 8 objects compiled"), std::string::npos) << first.err;
    EXPECT_NE(first.err.find("compile cache 0 hits (0 local, 0 remote), 8 misses"),
              std::string::npos)
        << first.err;
    for (const auto& [source, counters] : compiles(a.stats_log())) {
      EXPECT_TRUE(has(counters, "remote_storage_write")) << source << " not written remotely";
    }
    // The LLVM package under HOME reached the compiles through a link in the
    // build directory.
    EXPECT_TRUE(fs::is_symlink(cmake_dir(a.tree) / ".triton"));

    const auto second = b.build();
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_TRUE(lines_with(second.err, kAscendSetupWarning).empty()) << second.err;
    EXPECT_NE(second.err.find("compile cache 8 hits (0 local, 8 remote), 0 misses"),
              std::string::npos)
        << second.err;
    const auto b_compiles = compiles(b.stats_log());
    EXPECT_EQ(b_compiles.size(), 8u) << b.stats_log();
    for (const auto& [source, counters] : b_compiles) {
      EXPECT_TRUE(has(counters, "remote_storage_hit")) << source << ": " << b.stats_log();
      EXPECT_FALSE(has(counters, "cache_miss")) << source << " compiled in B";
    }
    // Debug info is there, its directory relative to the tree's root.
    const fs::path object = some_object(b.tree);
    ASSERT_FALSE(object.empty());
    const std::string info =
        must_run({"readelf", "--debug-dump=info", object.string()}, b.tree, {});
    EXPECT_NE(info.find("DW_AT_comp_dir"), std::string::npos);
    EXPECT_EQ(info.find(dir.path().string()), std::string::npos)
        << "an absolute path of a checkout in the debug info";
    const std::string wheel = a.wheel();
    EXPECT_FALSE(wheel.empty());
    EXPECT_TRUE(wheel == b.wheel()) << "B's wheel differs from A's";
  }

  TempDir dir;
};

TEST_F(CompileCacheCmakeBuildTest, RedisServesASecondCheckoutElsewhereWithoutACompile) {
  const RedisServer redis(dir.path() / "redis");
  shares_between_checkouts(redis.url());
  EXPECT_GE(redis.keys(), 8) << "the objects are not on the server";
}

TEST_F(CompileCacheCmakeBuildTest, HttpWebDavServesASecondCheckoutElsewhereWithoutACompile) {
  const fs::path store = dir.path() / "dav";
  fs::create_directories(store);
  int port = 0;
  const auto nginx = start_nginx(
      dir.path() / "nginx", "$request_method $status",
      [&](int listen) {
        return "    listen 127.0.0.1:" + std::to_string(listen) + ";\n    root " + store.string() +
               ";\n    client_max_body_size 0;\n    location /cache/ {\n      dav_methods PUT "
               "DELETE;\n      create_full_put_path on;\n    }\n";
      },
      port);
  ASSERT_TRUE(nginx);
  shares_between_checkouts("http://127.0.0.1:" + std::to_string(port) + "/cache|layout=subdirs");
  const std::string log = read_file(dir.path() / "nginx" / "access.log");
  EXPECT_GE(lines_with(log, "PUT 201").size(), 8u) << log;
  EXPECT_GE(lines_with(log, "GET 200").size(), 8u) << log;
  size_t stored = 0;
  for (const auto& entry : fs::recursive_directory_iterator(store)) {
    stored += entry.is_regular_file() ? 1 : 0;
  }
  EXPECT_GE(stored, 8u);
}

TEST_F(CompileCacheCmakeBuildTest, ServerDownGivesOneWarningAndALocalBuild) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(free_port());
  const Checkout a(dir.path() / "a", 1, url);
  const auto result = a.build();
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const auto warnings = lines_with(result.out + result.err, kAscendSetupWarning);
  ASSERT_EQ(warnings.size(), 1u) << result.err;
  EXPECT_NE(warnings[0].find("the compile cache " + url +
                             " does not answer (Connection refused): this build compiles with "
                             "the local cache only"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(result.err.find("compile cache 0 hits (0 local, 0 remote), 8 misses"),
            std::string::npos)
      << result.err;
  for (const auto& [source, counters] : compiles(a.stats_log())) {
    EXPECT_FALSE(has(counters, "remote_storage_error")) << source;
    EXPECT_FALSE(has(counters, "remote_storage_write")) << source;
  }
  EXPECT_EQ(files_in(a.tree / "dist", ".whl").size(), 1u);
}

class CompileCacheSettingsTest : public ExampleTreeTest {};

TEST_F(CompileCacheSettingsTest, ABadUrlIsOneUsageError) {
  for (const std::string url :
       {"redis//127.0.0.1", "ftp://127.0.0.1", "redis://:6379", "http://127.0.0.1:99999/c",
        "redis://127.0.0.1|frobnicate=1", "https://127.0.0.1/c"}) {
    env["ASCEND_SETUP_COMPILE_CACHE"] = url;
    const auto result = host({"bdist_wheel"});
    EXPECT_EQ(result.exit_code, 2) << url << "\n" << result.err;
    const auto lines = lines_with(result.err, "ASCEND_SETUP_COMPILE_CACHE `" + url + "`");
    EXPECT_EQ(lines.size(), 1u) << result.err;
    EXPECT_TRUE(lines_with(result.err, "Traceback").empty()) << result.err;
    EXPECT_FALSE(fs::exists(tree / "dist")) << url;
  }
}

// sccache is no choice (no sccache Debian ships can serve the URLs): the
// registry has no setting for it, and a variable of that name left over in
// an environment changes nothing, whichever sccache is on PATH.
TEST_F(CompileCacheSettingsTest, NoSettingChoosesSccache) {
  const TcpListener listener;
  env["ASCEND_SETUP_COMPILE_CACHE"] = "redis://127.0.0.1:" + std::to_string(listener.port());
  env["ASCEND_SETUP_COMPILE_CACHE_TOOL"] = "sccache";
  const auto result = host({"--list-env=json", "bdist_wheel"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const auto& row : parse_json(result.out)) {
    EXPECT_EQ(row["name"].get<std::string>().find("TOOL"), std::string::npos) << row;
  }
  EXPECT_FALSE(contains(read_file(fs::path(SOURCE_DIR) / "doc" / "environment.md"),
                        "ASCEND_SETUP_COMPILE_CACHE_TOOL"));
}

TEST_F(CompileCacheSettingsTest, ListEnvShowsTheCacheAndCcachesSettings) {
  const TcpListener listener;
  const std::string url = "redis://127.0.0.1:" + std::to_string(listener.port());
  env["ASCEND_SETUP_COMPILE_CACHE"] = url;
  env["CCACHE_BASEDIR"] = std::nullopt;
  env["CCACHE_REMOTE_STORAGE"] = std::nullopt;
  const auto result = host({"--list-env=json", "bdist_wheel"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::map<std::string, nlohmann::ordered_json> rows;
  for (const auto& row : parse_json(result.out)) {
    rows[row["name"].get<std::string>()] = row;
  }
  EXPECT_EQ(rows["ASCEND_SETUP_COMPILE_CACHE"]["value"], url);
  EXPECT_EQ(rows["ASCEND_SETUP_COMPILE_CACHE"]["set_by"], "user");
  EXPECT_EQ(rows["CCACHE_REMOTE_STORAGE"]["value"], url);
  EXPECT_EQ(rows["CCACHE_REMOTE_STORAGE"]["set_by"], "ascend-setup");
  EXPECT_EQ(rows["CCACHE_BASEDIR"]["value"], fs::canonical(tree).string());
  // --list-env leaves the last build's log alone.
  EXPECT_FALSE(fs::exists(tree / "build" / "ascend-setup" / "compile-cache.log"));
}

}  // namespace
