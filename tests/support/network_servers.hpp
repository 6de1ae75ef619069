// The network of a corporate CI on loopback, for the proxy and CA tests:
// a private CA made with openssl, Debian's tinyproxy (a CONNECT proxy, with
// or without Basic credentials), nginx over TLS with that CA serving files
// and git's smart HTTP (git http-backend through fcgiwrap). Each server is
// started by the test and stopped, as a process group, when its object dies;
// every wait is bounded.
#pragma once

#include "loopback_servers.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace test_support {

namespace fs = std::filesystem;

// A CA (key and certificate) and a server certificate it signed for
// 127.0.0.1 (subjectAltName IP:127.0.0.1, and DNS:127.0.0.1 for mbedTLS, which
// libgit2 uses on Debian and which matches names only), made in `dir` with openssl.
struct TestCa {
  explicit TestCa(const fs::path& dir);
  fs::path ca_certificate;
  fs::path server_certificate;
  fs::path server_key;
};

// tinyproxy in the foreground on 127.0.0.1 and a free port, allowing CONNECT
// to `connect_ports`, with Basic credentials when given, logging every
// request to `dir`/tinyproxy.log.
class TinyProxy {
 public:
  TinyProxy(const fs::path& dir, const std::vector<int>& connect_ports,
            const std::optional<std::pair<std::string, std::string>>& credentials = std::nullopt);
  int port() const { return port_; }
  // "http://127.0.0.1:PORT", with "user:password@" in front of the host when given.
  std::string url(const std::string& userinfo = "") const;
  std::string log() const;
  // The CONNECT requests of the log, "127.0.0.1:PORT" each.
  std::vector<std::string> connects() const;

 private:
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// The stand-in tests/stand_ins/flaky_connect_proxy.py on 127.0.0.1: a
// CONNECT proxy whose first `failures` CONNECTs get `answer` (an HTTP status
// such as "503", or "reset"), every later one tunnelled.
class FlakyConnectProxy {
 public:
  FlakyConnectProxy(const fs::path& dir, int failures, const std::string& answer);
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Its CONNECTs, "<target> <status or reset>" each.
  std::vector<std::string> connects() const;

 private:
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// nginx over TLS (the CA's server certificate) on 127.0.0.1 and a free port:
// `www` at /, and, when `git_root` is not empty, git http-backend serving the
// repositories under it at /git/ through fcgiwrap (GIT_HTTP_EXPORT_ALL).
// With a `gate`, git's answers are held at it once its budget has passed.
// Access log lines:
// "<method> <uri> <status> <bytes>".
class TlsNginx {
 public:
  TlsNginx(const fs::path& dir, const TestCa& ca, const fs::path& www,
           const fs::path& git_root = {}, const StreamGate* gate = nullptr);
  int port() const { return port_; }
  std::string url(const std::string& path) const;  // "https://127.0.0.1:PORT/" + path
  std::vector<std::string> log_lines() const;

 private:
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> fcgiwrap_;
  std::unique_ptr<BackgroundProcess> nginx_;
};

// A bare copy of the repository `source` at `git_root`/`name`.git that git
// http-backend serves a `want` of any commit from (uploadpack.allowAnySHA1InWant).
fs::path serve_bare_copy(const fs::path& source, const fs::path& git_root, const std::string& name,
                         const fs::path& home);

// Total bytes of the regular files under `dir` (0 when absent).
std::uint64_t bytes_under(const fs::path& dir);

// Entries of `dir` whose names contain `part`.
std::vector<std::string> entries_containing(const fs::path& dir, const std::string& part);

}  // namespace test_support
