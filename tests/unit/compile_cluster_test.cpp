// The distcc cluster: DISTCC_HOSTS' grammar, the probe against real loopback
// sockets (one listening, one port with nothing behind it), the plan from the
// environment (one host down, every host down, our empty list, distcc not on
// PATH) and the launcher arguments of the configure call.
#include "base/jobs/compile_cluster.hpp"
#include "base/layer/environment.hpp"
#include "base/util/error.hpp"
#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>

using namespace ascend_setup;
using namespace test_support;

namespace {

// A host that is up: a socket listening on 127.0.0.2.
class Listener : public TcpListener {
 public:
  Listener() : TcpListener("127.0.0.2") {}
};

// The cluster's variables unset around each test.
class CompileClusterTest : public ::testing::Test {
 protected:
  CompileClusterTest() { clear(); }
  ~CompileClusterTest() override { clear(); }
  static void clear() {
    for (const char* name : {"DISTCC_HOSTS", "ASCEND_SETUP_DISTCC_HOSTS",
                             "ASCEND_SETUP_DISTCC_PROBE_MS", "CCACHE_PREFIX"}) {
      unset_env(name);
    }
  }
};

TEST_F(CompileClusterTest, ParsesEveryFormOfDistccHosts) {
  const DistccHosts parsed = parse_distcc_hosts(
      "--randomize a b:3700 c/8 d:3701/6 e/5:3702\n"
      "localhost localhost/3 user@f/5 @g:/opt/distccd [::1]:3703/2 h,lzo,cpp # a comment x:1\n"
      "--localslots=3 +zeroconf");
  EXPECT_EQ(parsed.options,
            (std::vector<std::string>{"--randomize", "--localslots=3", "+zeroconf"}));
  struct Expected {
    std::string spec;
    DistccHost::Kind kind;
    std::string host;
    int port;
    int limit;
  };
  using K = DistccHost::Kind;
  const std::vector<Expected> expected{
      {"a", K::tcp, "a", 3632, 4},
      {"b:3700", K::tcp, "b", 3700, 4},
      {"c/8", K::tcp, "c", 3632, 8},
      {"d:3701/6", K::tcp, "d", 3701, 6},
      {"e/5:3702", K::tcp, "e", 3702, 5},
      {"localhost", K::local, "", 3632, 2},
      {"localhost/3", K::local, "", 3632, 3},
      {"user@f/5", K::ssh, "f", 3632, 5},
      {"@g:/opt/distccd", K::ssh, "g", 3632, 4},
      {"[::1]:3703/2", K::tcp, "::1", 3703, 2},
      {"h,lzo,cpp", K::tcp, "h", 3632, 4},
  };
  ASSERT_EQ(parsed.hosts.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(parsed.hosts[i].spec, expected[i].spec);
    EXPECT_EQ(parsed.hosts[i].kind, expected[i].kind) << expected[i].spec;
    EXPECT_EQ(parsed.hosts[i].host, expected[i].host) << expected[i].spec;
    EXPECT_EQ(parsed.hosts[i].port, expected[i].port) << expected[i].spec;
    EXPECT_EQ(parsed.hosts[i].limit, expected[i].limit) << expected[i].spec;
  }
}

TEST_F(CompileClusterTest, RefusesSpecsDistccWouldNotTake) {
  for (const char* text : {"a:0", "a/0", "a:70000", "a:1:2", "a/2/3", "a:x", "[::1", ",lzo",
                           "a,bogus", "--bogus", "localhost/none", ":3632"}) {
    EXPECT_THROW(parse_distcc_hosts(text), Error) << text;
  }
}

TEST_F(CompileClusterTest, ProbeFindsTheListeningHostAndTheDownOne) {
  const Listener listener;
  const int nothing = free_port("127.0.0.2");
  const auto hosts =
      parse_distcc_hosts("127.0.0.2:" + std::to_string(listener.port()) +
                         "/3 127.0.0.2:" + std::to_string(nothing) + "/5 localhost @ssh-host");
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> why = probe_distcc_hosts(hosts.hosts, std::chrono::seconds(2));
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(why.size(), 4u);
  EXPECT_EQ(why[0], "");
  EXPECT_EQ(why[1], "Connection refused");
  EXPECT_EQ(why[2], "");  // localhost and ssh hosts are not probed
  EXPECT_EQ(why[3], "");
  EXPECT_LT(seconds, 1.0);  // nothing waited for the deadline
}

TEST_F(CompileClusterTest, ProbeOfAnUnknownNameSaysSo) {
  const auto hosts = parse_distcc_hosts("no-such-host.invalid:3632/2");
  const std::vector<std::string> why =
      probe_distcc_hosts(hosts.hosts, std::chrono::milliseconds(2000));
  ASSERT_EQ(why.size(), 1u);
  EXPECT_NE(why[0], "");
}

TEST_F(CompileClusterTest, OneHostDownIsLeftOutAndTheSlotsAreTheOthers) {
  const Listener listener;
  const std::string up = "127.0.0.2:" + std::to_string(listener.port()) + "/3";
  const std::string down = "127.0.0.2:" + std::to_string(free_port("127.0.0.2")) + "/5";
  set_env("DISTCC_HOSTS", "--randomize " + up + " " + down);
  const CompileCluster& cluster = apply_compile_cluster();
  ASSERT_TRUE(cluster.active);
  EXPECT_EQ(cluster.source, "DISTCC_HOSTS");
  EXPECT_EQ(cluster.slots, 3);
  ASSERT_EQ(cluster.down.size(), 1u);
  EXPECT_EQ(cluster.down[0].spec, down);
  EXPECT_EQ(cluster.hosts_text(), "--randomize " + up);
  EXPECT_EQ(std::string(std::getenv("DISTCC_HOSTS")), "--randomize " + up);
  EXPECT_EQ(fs::path(std::getenv("CCACHE_PREFIX")).filename(), "distcc");
  EXPECT_EQ(cluster.slots_reason(),
            "3 slots of the distcc cluster (DISTCC_HOSTS: --randomize " + up + ") = 3");
  const auto args = cluster_cmake_args(cluster, "/nonexistent");
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0], "-DCMAKE_C_COMPILER_LAUNCHER=" + cluster.distcc.string());
  EXPECT_EQ(args[1], "-DCMAKE_CXX_COMPILER_LAUNCHER=" + cluster.distcc.string());
}

TEST_F(CompileClusterTest, EveryHostDownMeansNoDistcc) {
  set_env("DISTCC_HOSTS", "127.0.0.2:" + std::to_string(free_port("127.0.0.2")) + "/4");
  const CompileCluster& cluster = apply_compile_cluster();
  EXPECT_FALSE(cluster.active);
  EXPECT_EQ(cluster.down.size(), 1u);
  EXPECT_EQ(std::getenv("CCACHE_PREFIX"), nullptr);
}

TEST_F(CompileClusterTest, OurEmptyListTurnsDistccOffAndOursWinsOverDistccHosts) {
  const Listener listener;
  const std::string up = "127.0.0.2:" + std::to_string(listener.port()) + "/2";
  set_env("DISTCC_HOSTS", up);
  set_env("ASCEND_SETUP_DISTCC_HOSTS", "");
  EXPECT_FALSE(plan_compile_cluster().active);
  set_env("ASCEND_SETUP_DISTCC_HOSTS", up + " localhost");
  set_env("DISTCC_HOSTS", "other:1");
  const CompileCluster& cluster = apply_compile_cluster();
  ASSERT_TRUE(cluster.active);
  EXPECT_EQ(cluster.source, "ASCEND_SETUP_DISTCC_HOSTS");
  EXPECT_EQ(cluster.slots, 4);  // 2 + localhost's default 2
  EXPECT_EQ(std::string(std::getenv("DISTCC_HOSTS")), up + " localhost");
}

TEST_F(CompileClusterTest, NoDistccOnPathOrABadListMeansNoDistcc) {
  const Listener listener;
  set_env("DISTCC_HOSTS", "127.0.0.2:" + std::to_string(listener.port()));
  const std::string path = std::getenv("PATH");
  TempDir empty;
  ::setenv("PATH", empty.path().c_str(), 1);
  EXPECT_FALSE(plan_compile_cluster().active);
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_TRUE(plan_compile_cluster().active);
  set_env("DISTCC_HOSTS", "a:1:2");
  EXPECT_FALSE(plan_compile_cluster().active);
  set_env("ASCEND_SETUP_DISTCC_PROBE_MS", "0");
  set_env("DISTCC_HOSTS", "127.0.0.2:" + std::to_string(listener.port()));
  EXPECT_THROW(plan_compile_cluster(), Error);
}

TEST_F(CompileClusterTest, AStaleDistccLauncherIsEmptiedWithoutACluster) {
  TempDir dir;
  write_file(dir.path() / "CMakeCache.txt",
             "CMAKE_BUILD_TYPE:STRING=TritonRelBuildWithAsserts\n"
             "CMAKE_CXX_COMPILER_LAUNCHER:UNINITIALIZED=/usr/bin/distcc\n"
             "CMAKE_C_COMPILER_LAUNCHER:STRING=/usr/bin/ccache\n");
  const CompileCluster off;
  EXPECT_EQ(cluster_cmake_args(off, dir.path()),
            (std::vector<std::string>{"-DCMAKE_CXX_COMPILER_LAUNCHER="}));
  write_file(dir.path() / "CMakeCache.txt", "CMAKE_CXX_COMPILER_LAUNCHER:STRING=/usr/bin/ccache\n");
  EXPECT_TRUE(cluster_cmake_args(off, dir.path()).empty());
}

}  // namespace
