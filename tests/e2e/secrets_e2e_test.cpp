// Canary secrets, one distinct string in each variable that may hold one (the
// proxies of every scheme and case, the compile cache's redis password and
// bearer token, the package mirror's password), through the built binary:
// --list-env in both forms, --doctor and the error of a bad compile cache
// URL show none of them (cheap, no server); a real build of the example tree
// on GitHub Actions shows none on stdout or stderr and writes none to any
// file (the tree's build/ with the trace and the report, TRITON_HOME, HOME,
// TMPDIR, the step summary), while the tools that need them got them: the
// LLVM package came from a TLS nginx through tinyproxy, which asks for the
// proxy's password, and ccache wrote every object to a redis that asks for
// the cache's. The build's test is a CmakeBuild one (kept out of the
// sanitized run, as every real build).
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "network_servers.hpp"
#include "package_build.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace test_support;
namespace code = ascend_setup::exit_code;

namespace {

const std::string kProxyPassword = "CANARY-PROXY-PW-7f3a";  // https_proxy
const std::string kUpperProxyPassword = "CANARY-UPPER-PROXY-PW-51c2";
const std::string kHttpProxyPassword = "CANARY-HTTP-PROXY-PW-93d0";
const std::string kHttpProxyToken = "CANARY-HTTP-PROXY-TOKEN-0a6e";
const std::string kAllProxyPassword = "CANARY-ALL-PROXY-PW-d45f";
const std::string kRedisPassword = "CANARY-REDIS-PW-c41d";
const std::string kBearerToken = "CANARY-BEARER-TOKEN-e07b";
const std::string kMirrorPassword = "CANARY-MIRROR-PW-2b8e";

const std::vector<std::string> kCanaries = {
    kProxyPassword,    kUpperProxyPassword, kHttpProxyPassword, kHttpProxyToken,
    kAllProxyPassword, kRedisPassword,      kBearerToken,       kMirrorPassword};

// A port where nothing listens (connections refused at once).
constexpr const char* kNobody = "127.0.0.1:1";

class SecretsE2e : public PackageBuildTest {
 protected:
  SecretsE2e() {
    fs::create_directories(tmp);
    env["TMPDIR"] = tmp.string();
    env["https_proxy"] = "http://alice:" + kProxyPassword + "@" + kNobody;
    env["HTTPS_PROXY"] = "http://carol:" + kUpperProxyPassword + "@" + kNobody;
    env["http_proxy"] = "dave:" + kHttpProxyPassword + "@" + kNobody;  // curl's way: no scheme
    env["HTTP_PROXY"] = "http://" + kHttpProxyToken + "@" + kNobody;
    env["all_proxy"] = "socks5h://erin:" + kAllProxyPassword + "@" + kNobody;
    env["ALL_PROXY"] = std::nullopt;
    for (const char* name : {"no_proxy", "NO_PROXY", "CURL_CA_BUNDLE", "SSL_CERT_FILE",
                             "REQUESTS_CA_BUNDLE", "CCACHE_REMOTE_STORAGE", "CCACHE_STATSLOG",
                             "CCACHE_BASEDIR", "ASCEND_SETUP_COMPILE_CACHE_TOOL"}) {
      env[name] = std::nullopt;
    }
    cache_at(":" + kRedisPassword, kNobody);
    env["ASCEND_SETUP_PACKAGE_MIRROR"] =
        "http://bob:" + kMirrorPassword + "@" + std::string(kNobody) + "/mirror";
  }

  // The compile cache's redis at `host_port`, with `userinfo` (the password:
  // ccache's `PASSWORD`, or `:PASSWORD` as redis-cli writes it) and a bearer
  // token.
  void cache_at(const std::string& userinfo, const std::string& host_port,
                const std::string& path = "") {
    env["ASCEND_SETUP_COMPILE_CACHE"] =
        "redis://" + userinfo + "@" + host_port + path + "|bearer-token=" + kBearerToken;
  }

  // No canary in a run's stdout or stderr.
  static void expect_none_shown(const ascend_setup::ProcessResult& run, const std::string& what) {
    for (const std::string& canary : kCanaries) {
      EXPECT_FALSE(contains(run.out, canary)) << canary << " on the stdout of " << what << ":\n"
                                              << run.out;
      EXPECT_FALSE(contains(run.err, canary)) << canary << " on the stderr of " << what << ":\n"
                                              << run.err;
    }
  }

  // No canary in any file under the test's directory but the servers' own
  // (their configurations hold the passwords they ask for).
  void expect_none_written() const {
    size_t files = 0;
    for (auto it = fs::recursive_directory_iterator(dir.path()); it != fs::end(it); ++it) {
      if (it->path() == servers) {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file() || it->is_symlink()) {
        continue;
      }
      ++files;
      const std::string bytes = read_file(it->path());
      for (const std::string& canary : kCanaries) {
        EXPECT_FALSE(contains(bytes, canary)) << canary << " written to " << it->path();
      }
    }
    EXPECT_GT(files, 0u);
  }

  fs::path servers = dir.path() / "servers";
  fs::path tmp = dir.path() / "tmp";
  fs::path summary = dir.path() / "step-summary.md";
};

// --list-env (both forms), --doctor, and a bad compile cache URL's error:
// each variable listed masked, the cache's warning and error masked too.
TEST_F(SecretsE2e, ListEnvDoctorAndABadCacheUrlShowNoCanary) {
  const auto table = host({"--list-env"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  expect_none_shown(table, "--list-env");
  EXPECT_TRUE(contains(table.out, "= http://alice:****@127.0.0.1:1  [user]")) << table.out;
  EXPECT_TRUE(contains(table.out, "= dave:****@127.0.0.1:1  [user]")) << table.out;
  EXPECT_TRUE(contains(table.out, "= http://****@127.0.0.1:1  [user]")) << table.out;
  EXPECT_TRUE(contains(table.out, "= redis://:****@127.0.0.1:1|bearer-token=****  [user]"))
      << table.out;
  EXPECT_TRUE(contains(table.err, "the compile cache redis://:****@127.0.0.1:1 does not answer"))
      << table.err;

  const auto json = host({"--list-env=json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_none_shown(json, "--list-env=json");
  std::map<std::string, std::string> values;
  for (const auto& row : parse_json(json.out)) {
    if (row["value"].is_string()) {
      values[row["name"].get<std::string>()] = row["value"].get<std::string>();
    }
  }
  EXPECT_EQ(values["ASCEND_SETUP_PACKAGE_MIRROR"], "http://bob:****@127.0.0.1:1/mirror");
  EXPECT_EQ(values["all_proxy"], "socks5h://erin:****@127.0.0.1:1");

  env["GITHUB_ACTIONS"] = "true";
  for (const char* mode : {"--doctor", "--doctor=json"}) {
    const auto doctor = host({mode});
    EXPECT_EQ(doctor.exit_code, 0) << doctor.err;
    expect_none_shown(doctor, mode);
  }

  cache_at(":" + kRedisPassword, kNobody, "/not-a-database");
  const auto bad = host({"bdist_wheel"});
  EXPECT_EQ(bad.exit_code, code::usage) << bad.err;
  expect_none_shown(bad, "a bad cache URL's run");
  EXPECT_TRUE(contains(bad.err,
                       "`redis://:****@127.0.0.1:1/not-a-database|bearer-token=****`: "
                       "redis's path `/not-a-database`"))
      << bad.err;
  expect_none_written();
}

// A real build that needs every secret it must not show: the package through
// the proxy that asks for its password (after the mirror, tried through
// http_proxy, which does not answer), every compile written to the redis
// that asks for the cache's.
TEST_F(SecretsE2e, NoCanaryShownOrWrittenByACmakeBuildThatUsesThem) {
  make_package(0);
  TestCa ca(servers / "ca");
  TlsNginx origin(servers / "origin", ca, www);
  TinyProxy proxy(servers / "proxy", {origin.port()}, std::make_pair("alice", kProxyPassword));
  RedisServer redis(servers / "redis", kRedisPassword);
  env["https_proxy"] = proxy.url("alice:" + kProxyPassword);
  env["CURL_CA_BUNDLE"] = ca.ca_certificate.string();
  cache_at(kRedisPassword, "127.0.0.1:" + std::to_string(redis.port()));  // ccache's form
  env["CCACHE_DIR"] = (dir.path() / "ccache").string();  // cold: every compile goes to redis
  env["MAX_JOBS"] = "2";
  env["GITHUB_ACTIONS"] = "true";
  env["GITHUB_STEP_SUMMARY"] = summary.string();
  const std::string origin_host = "localhost:" + std::to_string(origin.port());

  const auto build = host(with_profile("https://" + origin_host, {"bdist_wheel"}));
  ASSERT_EQ(build.exit_code, 0) << build.err;
  expect_none_shown(build, "the build");
  // The tools got the real secrets.
  EXPECT_TRUE(contains(proxy.connects(), origin_host)) << proxy.log();
  EXPECT_GT(redis.keys(), 0) << "ccache wrote nothing to redis: "
                             << read_file(tree / "build/ascend-setup/compile-cache.log");
  EXPECT_TRUE(contains(build.err, "the package mirror cannot serve http://bob:****@127.0.0.1:1/"))
      << build.err;
  // What the build leaves to read was written, and holds none either.
  EXPECT_TRUE(fs::exists(ascend_setup::build_trace_path(tree)));
  EXPECT_TRUE(fs::exists(ascend_setup::build_report_path(tree)));
  EXPECT_TRUE(contains(read_file(summary), "| objects compiled | 8 |")) << read_file(summary);
  expect_none_written();
}

}  // namespace
