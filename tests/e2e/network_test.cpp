// The network as a corporate CI has it, through the built binary on the
// example tree, every server real and on loopback: a private CA made with
// openssl, nginx over TLS with that CA serving the LLVM package and git's
// smart HTTP (git http-backend through fcgiwrap), Debian's tinyproxy as the
// CONNECT proxy (with and without credentials). The package and the git
// fetches (the distributed part's clone, the NPUIR nested repositories'
// commits, with stand-ins for the NPUIR repository, build.sh and the
// toolkit) arrive through the proxy with the private CA; NO_PROXY bypasses
// it; a refusal and an untrusted certificate are one line each, exit 3, not
// retried; a stop during a clone or a commit fetch leaves nothing behind.
#include "base/process/process.hpp"
#include "base/util/error.hpp"
#include "loopback_servers.hpp"
#include "network_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

using namespace test_support;

namespace {

constexpr const char* kUpstreamLlvmUrl =
    "https://triton-ascend-artifacts.obs.myhuaweicloud.com/llvm-builds/{name}.tar.gz";
constexpr const char* kUpstreamDistributedUrl =
    "https://gitcode.com/Ascend/Triton-distributed-ascend.git";
constexpr const char* kUpstreamPin = "d2ac268c7ab4dc09865ed51638104ee1b97dc460";

size_t count(const std::string& text, const std::string& part) {
  size_t found = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++found;
  }
  return found;
}

class NetworkTest : public ExampleTreeTest {
 protected:
  NetworkTest() {
    for (const char* name :
         {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
          "no_proxy", "NO_PROXY", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
          "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH"}) {
      env[name] = std::nullopt;
    }
    env["ASCEND_SETUP_DOWNLOAD_BACKOFF_MS"] = "50";
    env["ASCEND_SETUP_DOWNLOAD_ATTEMPTS"] = "3";
  }

  // The LLVM package llvm-net (a payload of kPayload random bytes) in www.
  void serve_package() {
    fs::create_directories(www);
    const fs::path tarball = make_package_tarball(dir.path() / "package", "llvm-net", kPayload);
    fs::copy_file(tarball, www / "llvm-net.tar.gz");
    package_root = dir.path() / ".triton" / "llvm";
  }

  // A build of the example tree whose LLVM package is `base`/llvm-net.tar.gz,
  // stopped by a cmake that refuses to configure (the download is what counts).
  ascend_setup::ProcessResult build_with_package(const std::string& base) {
    llvm_profile(base);
    env["LLVM_SYSPATH"] = std::nullopt;
    env["TRITON_OFFLINE_BUILD"] = std::nullopt;
    for (const char* tool :
         {"TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH"}) {
      env[tool] = "/bin/true";
    }
    const fs::path bin = dir.path() / "bin";
    write_file(bin / "cmake",
               "#!/bin/sh\ncase \"$1\" in --version) echo 'cmake version 3.25.1' ;; *) echo "
               "'configure refused by the test' >&2; exit 1 ;; esac\n");
    fs::permissions(bin / "cmake", fs::perms(0755));
    env["PATH"] = path_with(bin);
    return host({"--profile", profile.string(), "build_ext"});
  }
  void llvm_profile(const std::string& base) {
    write_profile(profile, {{"name = \"llvm-{rev}-{patch_hash}-{suffix}\"", "name = \"llvm-net\""},
                            {kUpstreamLlvmUrl, base + "/{name}.tar.gz"}});
  }
  void expect_package_whole(const std::string& url) const {
    EXPECT_EQ(read_file(package_root / "llvm-net" / "version.txt"), url);
    EXPECT_EQ(fs::file_size(package_root / "llvm-net" / "lib" / "payload.bin"), kPayload);
  }
  void expect_no_package() const { EXPECT_FALSE(fs::exists(package_root / "llvm-net")); }

  // The distributed part's remote served at /git/ (with a payload of
  // `payload` random bytes when not 0); the profile pointing at `server`.
  void serve_distributed(std::uint64_t payload = 0) {
    make_git_repo(tree, dir.path());
    const fs::path remote = dir.path() / "remote" / "Triton-distributed-ascend";
    pin = make_distributed_remote(remote, dir.path());
    if (payload > 0) {
      make_package_tarball(dir.path() / "blob", "blob", payload);
      fs::copy_file(dir.path() / "blob/source-blob/blob/lib/payload.bin",
                    remote / "python/triton_dist/blob.bin");
      must_run({"git", "add", "-A"}, remote, git_env(dir.path()));
      must_run({"git", "commit", "-q", "-m", "blob"}, remote, git_env(dir.path()));
      pin = must_run({"git", "rev-parse", "HEAD"}, remote, git_env(dir.path())).substr(0, 40);
    }
    serve_bare_copy(remote, git_root, "Triton-distributed-ascend", dir.path());
    env["TRITON_BUILD_TD"] = "ON";
  }
  void distributed_profile(const TlsNginx& server) {
    write_profile(profile,
                  {{kUpstreamDistributedUrl, server.url("git/Triton-distributed-ascend.git")},
                   {kUpstreamPin, pin}});
  }
  fs::path clone() const { return tree / "third_party/ascend/Triton-distributed-ascend"; }
  std::string head_of(const fs::path& repo) const {
    return must_run({"git", "rev-parse", "HEAD"}, repo, git_env(dir.path())).substr(0, 40);
  }

  // The NPUIR sources: a stand-in AscendNPU-IR (a local remote registered as
  // the tree's submodule, its build.sh the stand-in) recording the nested
  // repositories at commits that are not their tips, each served at /git/
  // (llvm-project with `payload` random bytes when not 0). The run stops at
  // build.sh (exit 7): the fetches are what is tested.
  void serve_npuir(const std::string& git_base, std::uint64_t payload = 0) {
    const fs::path remotes = dir.path() / "remotes";
    recorded = make_npuir_stand_in(
        tree, remotes, dir.path(), kNpuirNested,
        [&git_base](const std::string& name) { return git_base + name + ".git"; },
        [&](const std::string& name, const fs::path& remote) {
          if (payload > 0 && name == kNpuirNested.front()) {
            make_package_tarball(dir.path() / "blob", "blob", payload);
            fs::copy_file(dir.path() / "blob/source-blob/blob/lib/payload.bin",
                          remote / "blob.bin");
          }
        });
    for (const std::string& name : kNpuirNested) {
      serve_bare_copy(remotes / name, git_root, name, dir.path());
    }
    const fs::path toolkit = dir.path() / "toolkit";
    fs::create_directories(toolkit / "tools/bisheng_compiler/bin");
    write_profile(profile,
                  {{"min_free_gib = 30", "min_free_gib = 0"},
                   {"fetch_attempts = 5", "fetch_attempts = 2"},
                   {"fetch_retry_seconds = 10", "fetch_retry_seconds = 0"}},
                  in_tree_profile_text());
    env["TRITON_BUILD_NPUIR"] = "ON";
    env["ASCEND_HOME_PATH"] = toolkit.string();
    env["MAX_JOBS"] = "2";
    env["NPUIR_STAND_IN_LOG"] = (dir.path() / "stand-in-build").string();
    env["NPUIR_STAND_IN_EXIT"] = "7";
  }
  fs::path npuir() const { return tree / "third_party/ascend/AscendNPU-IR"; }

  // Starts the binary with `args`, waits (at most 120 s, a guard against a
  // hang) until a directory staged under `stage` beside `target` holds
  // `bytes` and the server's answer waits at the gate, sends `signal`, and returns the run's exit
  // code (-1 when it did not end within 60 s). The server's answers are held at `gate` past its
  // budget (a multiple of `bytes`), so the transfer is in flight when the
  // signal comes, however fast the machine.
  int stop_mid_transfer(const std::vector<std::string>& args, const fs::path& target,
                        const std::string& stage, std::uint64_t bytes, int signal,
                        const StreamGate& gate) {
    const fs::path log = dir.path() / ("stopped-run-" + std::to_string(signal) + ".log");
    BackgroundProcess run(host_command(tree, env, args), log);
    const std::string part = "." + target.filename().string() + ".ascend-setup-" + stage + "-";
    std::uint64_t seen = 0;
    wait_until(run, [&] {
      seen = 0;
      for (const std::string& name : entries_containing(target.parent_path(), part)) {
        seen += bytes_under(target.parent_path() / name);
      }
      return seen >= bytes && gate.holding();
    });
    EXPECT_GE(seen, bytes) << read_file(log);
    EXPECT_TRUE(gate.holding()) << "the transfer was not held at the gate: " << read_file(log);
    EXPECT_TRUE(run.signal(signal)) << "the run ended before the stop: " << read_file(log);
    const auto code = run.exit_code(60);
    stopped_log = read_file(log);
    return code.value_or(-1);
  }

  static constexpr std::uint64_t kPayload = 3 << 20;
  TestCa ca{dir.path() / "ca"};
  fs::path www = dir.path() / "www";
  fs::path git_root = dir.path() / "git-root";
  fs::path profile = dir.path() / "profile.toml";
  fs::path package_root;
  std::string pin;
  std::map<std::string, std::string> recorded;  // nested repository -> its gitlink's commit
  std::string stopped_log;
};

// The case: a CONNECT proxy's "200 Connection established" was
// taken for the server's answer and the package came out truncated.
TEST_F(NetworkTest, PackageArrivesThroughTheConnectProxyWithThePrivateCa) {
  serve_package();
  TlsNginx nginx(dir.path() / "nginx", ca, www);
  TinyProxy proxy(dir.path() / "proxy", {nginx.port()});
  env["HTTPS_PROXY"] = proxy.url();
  env["CURL_CA_BUNDLE"] = ca.ca_certificate.string();
  const std::string base = "https://localhost:" + std::to_string(nginx.port());
  const auto result = build_with_package(base);
  EXPECT_TRUE(contains(result.err, "configure refused by the test")) << result.err;
  expect_package_whole(base + "/llvm-net.tar.gz");
  EXPECT_TRUE(contains(proxy.connects(), "localhost:" + std::to_string(nginx.port())))
      << proxy.log();
}

TEST_F(NetworkTest, ProxyCredentialsComeFromTheProxyUrlPercentDecoded) {
  serve_package();
  TlsNginx nginx(dir.path() / "nginx", ca, www);
  TinyProxy proxy(dir.path() / "proxy", {nginx.port()}, std::make_pair("ci", "s3cret"));
  env["https_proxy"] = proxy.url("ci:s%33cret");  // "s3cret", one letter percent-encoded
  env["HTTPS_PROXY"] = proxy.url("ci:wrong");     // the lower case wins
  env["SSL_CERT_FILE"] = ca.ca_certificate.string();
  const std::string base = "https://localhost:" + std::to_string(nginx.port());
  const auto result = build_with_package(base);
  EXPECT_TRUE(contains(result.err, "configure refused by the test")) << result.err;
  expect_package_whole(base + "/llvm-net.tar.gz");
  EXPECT_FALSE(proxy.connects().empty()) << proxy.log();
}

TEST_F(NetworkTest, ProxyRefusingTheCredentialsIsOneLineNamingTheProxyNotRetried) {
  serve_package();
  TlsNginx nginx(dir.path() / "nginx", ca, www);
  TinyProxy proxy(dir.path() / "proxy", {nginx.port()}, std::make_pair("ci", "s3cret"));
  env["CURL_CA_BUNDLE"] = ca.ca_certificate.string();
  const std::string base = "https://localhost:" + std::to_string(nginx.port());
  for (const std::string& userinfo : {std::string("ci:wrong"), std::string()}) {
    env["HTTPS_PROXY"] = proxy.url(userinfo);
    const auto result = build_with_package(base);
    EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
    const std::string line = error_line(result.err);
    const std::string shown = userinfo.empty() ? proxy.url() : proxy.url("ci:****");
    EXPECT_TRUE(
        contains(line, "the proxy " + shown + " (from HTTPS_PROXY) refused the way to " + base))
        << result.err;
    EXPECT_TRUE(contains(line, userinfo.empty() ? "it wants a user and password"
                                                : "does not accept the user and password"))
        << line;
    EXPECT_FALSE(contains(result.err, "wrong")) << "the password is shown: " << result.err;
    EXPECT_FALSE(contains(result.err, "retrying")) << result.err;
    EXPECT_EQ(count(result.err, "ascend-setup: error:"), 1u) << result.err;
    expect_no_package();
  }
  EXPECT_TRUE(nginx.log_lines().empty());
}

// A corporate proxy under load (the flaky CONNECT proxy stand-in): its
// first two CONNECTs answered 503, or reset without an answer, then
// tunnelled. Both are retried with the download's backoff, one warning each,
// and the package arrives; before, a 503 was taken for a refusal (exit 3).
TEST_F(NetworkTest, PackageArrivesThroughAProxyThatFailsTwiceThenTunnels_StandInProxy) {
  serve_package();
  TlsNginx nginx(dir.path() / "nginx", ca, www);
  env["CURL_CA_BUNDLE"] = ca.ca_certificate.string();
  const std::string base = "https://localhost:" + std::to_string(nginx.port());
  const std::string target = "localhost:" + std::to_string(nginx.port());
  for (const std::string answer : {"503", "reset"}) {
    SCOPED_TRACE(answer);
    fs::remove_all(package_root);
    FlakyConnectProxy proxy(dir.path() / ("proxy-" + answer), 2, answer);
    env["HTTPS_PROXY"] = proxy.url();
    const auto result = build_with_package(base);
    EXPECT_TRUE(contains(result.err, "configure refused by the test")) << result.err;
    expect_package_whole(base + "/llvm-net.tar.gz");
    const auto connects = proxy.connects();
    ASSERT_GE(connects.size(), 3u) << result.err;
    EXPECT_EQ(connects[0], target + " " + answer);
    EXPECT_EQ(connects[1], target + " " + answer);
    EXPECT_EQ(connects[2], target + " 200");
    EXPECT_EQ(count(result.err, "retrying from byte 0"), 2u) << result.err;
    if (answer == "503") {
      EXPECT_TRUE(
          contains(result.err, "the proxy answered HTTP 503 to CONNECT (through the proxy " +
                                   proxy.url() + " from HTTPS_PROXY)"))
          << result.err;
    }
  }
}

TEST_F(NetworkTest, NoProxyHostIsReachedDirectly) {
  serve_package();
  TlsNginx nginx(dir.path() / "nginx", ca, www);
  TinyProxy proxy(dir.path() / "proxy", {nginx.port()});
  env["HTTPS_PROXY"] = proxy.url();
  env["NO_PROXY"] = "localhost,127.0.0.0/8";
  env["CURL_CA_BUNDLE"] = ca.ca_certificate.string();
  const std::string base = "https://localhost:" + std::to_string(nginx.port());
  const auto result = build_with_package(base);
  EXPECT_TRUE(contains(result.err, "configure refused by the test")) << result.err;
  expect_package_whole(base + "/llvm-net.tar.gz");
  EXPECT_TRUE(proxy.connects().empty()) << proxy.log();
  EXPECT_FALSE(contains(proxy.log(), "Request (")) << proxy.log();
}

TEST_F(NetworkTest, UntrustedCertificateIsOneLineNamingTheHostAndTheVariables) {
  serve_package();
  TlsNginx nginx(dir.path() / "nginx", ca, www);
  TinyProxy proxy(dir.path() / "proxy", {nginx.port()});
  env["HTTPS_PROXY"] = proxy.url();
  const std::string base = "https://localhost:" + std::to_string(nginx.port());
  const auto result = build_with_package(base);
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  const std::string line = error_line(result.err);
  EXPECT_TRUE(contains(line, "the certificate of " + base + " is not trusted (")) << result.err;
  EXPECT_TRUE(contains(line, "a private CA's bundle goes in CURL_CA_BUNDLE or SSL_CERT_FILE"))
      << line;
  EXPECT_FALSE(contains(result.err, "retrying")) << result.err;
  EXPECT_EQ(count(result.err, "ascend-setup: error:"), 1u) << result.err;
  expect_no_package();
}

TEST_F(NetworkTest, DistributedCloneThroughTheProxyWithGitSslCainfo) {
  serve_distributed();
  TlsNginx nginx(dir.path() / "nginx", ca, www, git_root);
  TinyProxy proxy(dir.path() / "proxy", {nginx.port()});
  distributed_profile(nginx);
  env["https_proxy"] = proxy.url();
  env["GIT_SSL_CAINFO"] = ca.ca_certificate.string();
  const auto result = host({"--profile", profile.string(), "--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(head_of(clone()), pin);
  EXPECT_TRUE(fs::exists(clone() / "python/triton_dist/layers/nested/ops.pyi"));
  EXPECT_TRUE(contains(proxy.connects(), "localhost:" + std::to_string(nginx.port())))
      << proxy.log();
  bool fetched = false;
  for (const std::string& line : nginx.log_lines()) {
    fetched |= line.rfind("POST /git/Triton-distributed-ascend.git/git-upload-pack 200 ", 0) == 0;
  }
  EXPECT_TRUE(fetched) << ::testing::PrintToString(nginx.log_lines());
}

// The git side of the same proxy: the distributed part's clone (three
// attempts) meets two 503s to CONNECT, classified from libgit2's error class
// as the proxy's transient answer, tried again, then clones.
TEST_F(NetworkTest, DistributedCloneThroughAProxyThatAnswers503TwiceThenTunnels_StandInProxy) {
  serve_distributed();
  TlsNginx nginx(dir.path() / "nginx", ca, www, git_root);
  FlakyConnectProxy proxy(dir.path() / "proxy", 2, "503");
  distributed_profile(nginx);
  write_file(profile, replace_once(read_file(profile), "link = \"python/triton_dist\"\n",
                                   "link = \"python/triton_dist\"\nnetwork_attempts = 3\n"
                                   "retry_seconds = 0\n"));
  env["https_proxy"] = proxy.url();
  env["GIT_SSL_CAINFO"] = ca.ca_certificate.string();
  const auto result = host({"--profile", profile.string(), "--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(head_of(clone()), pin);
  const std::string refused = "the proxy " + proxy.url() +
                              " (from https_proxy) answered HTTP 503 to CONNECT for "
                              "https://localhost:" +
                              std::to_string(nginx.port());
  EXPECT_EQ(count(result.err, refused), 2u) << result.err;
  EXPECT_TRUE(contains(result.err, "(attempt 2 of 3)")) << result.err;
  EXPECT_FALSE(contains(result.err, "(attempt 3 of 3)")) << result.err;
}

TEST_F(NetworkTest, DistributedCloneWithAnUntrustedCertificateIsNotRetried) {
  serve_distributed();
  TlsNginx nginx(dir.path() / "nginx", ca, www, git_root);
  distributed_profile(nginx);
  std::string text = read_file(profile);
  text = replace_once(text, "link = \"python/triton_dist\"\n",
                      "link = \"python/triton_dist\"\nnetwork_attempts = 3\nretry_seconds = 0\n");
  write_file(profile, text);
  const auto result = host({"--profile", profile.string(), "--dump-kwargs"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  const std::string line = error_line(result.err);
  EXPECT_TRUE(contains(line, "the certificate of https://localhost:" +
                                 std::to_string(nginx.port()) + " is not trusted ("))
      << result.err;
  EXPECT_TRUE(contains(line, "(for git: GIT_SSL_CAINFO)")) << line;
  EXPECT_FALSE(contains(result.err, "attempt 1 of 3")) << result.err;
  EXPECT_FALSE(fs::exists(clone()));
}

// No bundle where the distributions keep one and no variable naming one: a
// clone trusts what the TLS library trusts by default. What ships (libgit2
// and OpenSSL linked in) reads OpenSSL's directory, whose cert.pem holds the
// CA here: libgit2's init no longer loads it, the first network operation
// does. Debian's libgit2 (mbedTLS) reads only its own built-in file, hidden
// here: not trusted. In a mount namespace of the run's own, where tmpfs
// hides /etc/ssl and OpenSSL's directory (gone with the namespace).
TEST_F(NetworkTest, DistributedCloneTrustsTheTlsLibrarysDefaultCa) {
  const std::string version = must_run({"openssl", "version", "-d"}, dir.path());
  const auto quote = version.find('"');
  const std::string openssl_dir =
      version.substr(quote + 1, version.find('"', quote + 1) - quote - 1);
  ASSERT_FALSE(openssl_dir.empty()) << version;
  serve_distributed();
  TlsNginx nginx(dir.path() / "nginx", ca, www, git_root);
  distributed_profile(nginx);
  std::vector<std::string> argv{"unshare",
                                "--mount",
                                "--propagation",
                                "private",
                                "--",
                                "/bin/sh",
                                "-c",
                                "mount -t tmpfs tmpfs /etc/ssl && mount -t tmpfs tmpfs \"$0\" && "
                                "cp \"$1\" \"$0/cert.pem\" && shift && exec \"$@\"",
                                openssl_dir,
                                ca.ca_certificate.string()};
  const auto command = host_command(tree, env, {"--profile", profile.string(), "--dump-kwargs"});
  argv.insert(argv.end(), command.begin(), command.end());
  const auto result = ascend_setup::run_process({argv, dir.path(), {}, {}});
  if (PORTABLE_BUILD) {
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(head_of(clone()), pin);
  } else {
    EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
    EXPECT_TRUE(contains(error_line(result.err), "is not trusted")) << result.err;
    EXPECT_TRUE(contains(error_line(result.err), "from the TLS library's default")) << result.err;
  }
  EXPECT_TRUE(fs::exists("/etc/ssl/certs")) << "the namespace's mounts were not its own";
}

TEST_F(NetworkTest,
       NpuirCommitFetchesThroughTheProxyWithGitConfigCa_StandInNpuIrRepo_StandInBuildSh) {
  TlsNginx nginx(dir.path() / "nginx", ca, www, git_root);
  // No credentials: libgit2 1.5 reads a 407's body only up to its length, and
  // tinyproxy's has none (it ends with the connection): "unexpected EOF".
  TinyProxy proxy(dir.path() / "proxy", {nginx.port()});
  serve_npuir(nginx.url("git/"));
  // The CA from git's own configuration (http.sslCAInfo).
  write_file(dir.path() / ".gitconfig",
             "[http]\n\tsslCAInfo = " + ca.ca_certificate.string() + "\n");
  env["HTTPS_PROXY"] = proxy.url();
  const auto result = host({"--profile", profile.string(), "bdist_wheel"});
  EXPECT_TRUE(contains(result.err, "exited with 7")) << result.err;
  for (const std::string& name : kNpuirNested) {
    EXPECT_EQ(head_of(npuir() / "third-party" / name), recorded[name]) << name;
    EXPECT_FALSE(fs::exists(npuir() / "third-party" / name / "later.txt")) << name;
  }
  EXPECT_GE(proxy.connects().size(), kNpuirNested.size()) << proxy.log();
}

// The phases "distributed clone" and "NPUIR fetches" of doc/stopping.md.
TEST_F(NetworkTest, StopDuringTheDistributedCloneExits130AndLeavesNothing) {
  serve_distributed(4 << 20);
  const StreamGate gate(dir.path() / "gate", 1 << 20);
  TlsNginx gated(dir.path() / "gated", ca, www, git_root, &gate);
  distributed_profile(gated);
  env["SSL_CERT_FILE"] = ca.ca_certificate.string();
  const int code = stop_mid_transfer({"--profile", profile.string(), "--dump-kwargs"}, clone(),
                                     "clone", 256 << 10, SIGINT, gate);
  EXPECT_EQ(code, 130) << stopped_log;
  EXPECT_TRUE(entries_containing(clone().parent_path(), "ascend-setup-clone").empty());
  EXPECT_FALSE(fs::exists(clone()));
}

TEST_F(NetworkTest, KilledDuringTheDistributedCloneThenTheNextRunClonesAgain) {
  serve_distributed(4 << 20);
  const StreamGate gate(dir.path() / "gate", 1 << 20);
  TlsNginx gated(dir.path() / "gated", ca, www, git_root, &gate);
  distributed_profile(gated);
  env["SSL_CERT_FILE"] = ca.ca_certificate.string();
  const int code = stop_mid_transfer({"--profile", profile.string(), "--dump-kwargs"}, clone(),
                                     "clone", 256 << 10, SIGKILL, gate);
  EXPECT_EQ(code, 128 + SIGKILL);
  EXPECT_FALSE(entries_containing(clone().parent_path(), "ascend-setup-clone").empty());
  EXPECT_FALSE(fs::exists(clone()));
  TlsNginx fast(dir.path() / "fast", ca, www, git_root);
  distributed_profile(fast);
  const auto rerun = host({"--profile", profile.string(), "--dump-kwargs"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_EQ(head_of(clone()), pin);
  EXPECT_EQ(fs::file_size(clone() / "python/triton_dist/blob.bin"), 4u << 20);
  EXPECT_TRUE(entries_containing(clone().parent_path(), "ascend-setup-clone").empty());
}

TEST_F(NetworkTest, StopDuringAnNpuirCommitFetchExits130AndLeavesNothing_StandInNpuIrRepo) {
  const StreamGate gate(dir.path() / "gate", 1 << 20);
  TlsNginx gated(dir.path() / "gated", ca, www, git_root, &gate);
  serve_npuir(gated.url("git/"), 4 << 20);
  env["GIT_SSL_CAINFO"] = ca.ca_certificate.string();
  const fs::path nested = npuir() / "third-party" / kNpuirNested.front();
  const int code = stop_mid_transfer({"--profile", profile.string(), "bdist_wheel"}, nested,
                                     "fetch", 256 << 10, SIGINT, gate);
  EXPECT_EQ(code, 130) << stopped_log;
  EXPECT_TRUE(entries_containing(nested.parent_path(), "ascend-setup-fetch").empty());
  EXPECT_TRUE(!fs::exists(nested) || fs::is_empty(nested));
  EXPECT_FALSE(fs::exists(dir.path() / "stand-in-build"));
}

TEST_F(NetworkTest, KilledDuringAnNpuirCommitFetchThenTheNextRunFetchesAgain_StandInNpuIrRepo) {
  const StreamGate gate(dir.path() / "gate", 1 << 20);
  TlsNginx gated(dir.path() / "gated", ca, www, git_root, &gate);
  serve_npuir(gated.url("git/"), 4 << 20);
  env["GIT_SSL_CAINFO"] = ca.ca_certificate.string();
  const fs::path nested = npuir() / "third-party" / kNpuirNested.front();
  const int code = stop_mid_transfer({"--profile", profile.string(), "bdist_wheel"}, nested,
                                     "fetch", 256 << 10, SIGKILL, gate);
  EXPECT_EQ(code, 128 + SIGKILL);
  EXPECT_FALSE(entries_containing(nested.parent_path(), "ascend-setup-fetch").empty());
  // The rerun fetches from the same server, its gate open: the URLs are the
  // submodule's.
  gate.open();
  const auto rerun = host({"--profile", profile.string(), "bdist_wheel"});
  EXPECT_TRUE(contains(rerun.err, "exited with 7")) << rerun.err;
  EXPECT_EQ(head_of(nested), recorded[kNpuirNested.front()]);
  EXPECT_EQ(fs::file_size(nested / "blob.bin"), 4u << 20);
  EXPECT_TRUE(entries_containing(nested.parent_path(), "ascend-setup-fetch").empty());
}

}  // namespace
