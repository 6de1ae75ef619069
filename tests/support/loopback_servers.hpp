// Real servers on 127.0.0.1 for the download tests, started by the test and
// stopped when the object dies (on every path, a failed assertion too):
// Debian's nginx (a config in a temp dir: a free port, daemon off, pid, logs
// and temp paths in that dir, an optional limit_rate per connection) and the
// fault-injecting stand-in tests/stand_ins/fault_http_server.py. Every wait is
// bounded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace test_support {

namespace fs = std::filesystem;

// A child in its own process group; SIGTERM, then SIGKILL after 5 s, at the end.
class BackgroundProcess {
 public:
  // `output`: stdout and stderr go there when not empty.
  explicit BackgroundProcess(const std::vector<std::string>& argv, const fs::path& output = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  pid_t pid() const { return pid_; }
  bool running();
  void stop();

 private:
  pid_t pid_ = -1;
};

// nginx serving `www` on 127.0.0.1; access log lines "<status> <bytes> <range>".
class NginxServer {
 public:
  NginxServer(const fs::path& dir, const fs::path& www, const std::string& limit_rate = "");
  int port() const { return port_; }
  std::string url(const std::string& file) const;
  std::vector<std::string> log_lines() const;
  std::uint64_t body_bytes_sent() const;  // summed over the access log
  int responses(int status) const;

 private:
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// The fault-injecting stand-in server; its mode can change between requests.
class FaultServer {
 public:
  FaultServer(const fs::path& dir, const fs::path& file, const std::string& mode, int faults,
              std::uint64_t after);
  int port() const { return port_; }
  std::string url(const std::string& file) const;
  void set_mode(const std::string& mode) const;
  std::vector<std::string> log_lines() const;  // "<status> <range> <bytes>"
  std::uint64_t body_bytes_sent() const;
  int requests() const { return static_cast<int>(log_lines().size()); }

 private:
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// A free TCP port on 127.0.0.1 (bound, then released).
int free_port();

// Waits (at most `seconds`) until 127.0.0.1:`port` accepts connections.
bool wait_for_port(int port, double seconds);

// `dir`/`name`.tar.gz holding the directory `name`/ with a file of `bytes`
// random bytes (incompressible), a small text file and a relative symlink.
fs::path make_package_tarball(const fs::path& dir, const std::string& name, std::uint64_t bytes,
                              unsigned seed = 1);

}  // namespace test_support
