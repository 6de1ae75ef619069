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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace test_support {

namespace fs = std::filesystem;

// A child started without waiting for it (a server, a run of ascend-setup a
// test stops), in its own process group; SIGTERM, then SIGKILL after 5 s, at
// the end. test_support.hpp's command_in() and host_command() give it a
// working directory and an environment.
class BackgroundProcess {
 public:
  // `output`: stdout and stderr go there when not empty.
  explicit BackgroundProcess(const std::vector<std::string>& argv, const fs::path& output = {});
  // stdout to `logs`.out, stderr to `logs`.err (out() and err() read them).
  // With `pending_signal`, the program starts with that signal blocked and
  // already arrived: as one that comes before its handlers exist.
  struct Logs {
    fs::path logs;
    int pending_signal = 0;
  };
  BackgroundProcess(const std::vector<std::string>& argv, const Logs& logs);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  pid_t pid() const { return pid_; }
  bool running();
  void stop();
  // `number` to the process while it runs (never to a reaped pid's successor
  // or, with pid() -1, to every process); false once it has ended.
  bool signal(int number);
  // Its exit code (128 + the signal when a signal ended it) once it ended,
  // waiting at most `seconds`; nullopt while it still runs.
  std::optional<int> exit_code(double seconds = 0);
  // Its exit code, waiting as long as it runs.
  int wait();
  // Ended by a signal's default action rather than by exiting.
  bool died_of_signal() const { return died_of_signal_; }
  // What it wrote to stdout and stderr with Logs (empty otherwise).
  std::string out() const;
  std::string err() const;

 private:
  void reaped(int status);
  pid_t pid_ = -1;    // -1 once reaped: never a pid to signal then
  pid_t group_ = -1;  // its process group, for what it leaves behind
  std::optional<int> exit_code_;
  bool died_of_signal_ = false;
  fs::path out_;
  fs::path err_;
};

// The port a stand-in wrote into `port_file` (whole: a rename) once it
// listens, waiting at most 20 s while it runs; 0 and a test failure naming
// `what` and its `output` when it never does.
int port_written_by(BackgroundProcess& process, const fs::path& port_file, const std::string& what,
                    const fs::path& output);

// wait_until() (test_support.hpp) that gives up early once `process` has
// ended; true when `ready` holds.
bool wait_until(BackgroundProcess& process, const std::function<bool()>& ready,
                double seconds = 120);

// A gate a server's answers are held at until the test opens it, so that a
// stop, kill or race meets a transfer in flight whatever the machine's speed
// (tests/stand_ins/gate.py): the first `budget` bytes of the answers pass
// (shared by every connection and request through the gate), every further
// byte waits for open().
class StreamGate {
 public:
  StreamGate(const fs::path& dir, std::uint64_t budget);
  const fs::path& dir() const { return dir_; }
  std::uint64_t budget() const { return budget_; }
  // Once a byte waits at the gate: the bytes passed until then.
  std::optional<std::uint64_t> holding() const;
  void open() const;

 private:
  fs::path dir_;
  std::uint64_t budget_;
};

// The stand-in gate.py's relay: `target_port` on 127.0.0.1 behind a port of
// its own whose server-to-client bytes go through `gate`.
class GateRelay {
 public:
  GateRelay(const StreamGate& gate, int target_port);
  int port() const { return port_; }

 private:
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// nginx serving `www` on 127.0.0.1; access log lines "<status> <bytes> <range>".
// With a `gate`, its answers reach the client through a GateRelay (port() is
// the relay's), and nginx's send buffers are small, so that what nginx logs
// as sent stays near what passed the gate.
class NginxServer {
 public:
  NginxServer(const fs::path& dir, const fs::path& www, const StreamGate* gate = nullptr);
  int port() const { return relay_ ? relay_->port() : port_; }
  std::string url(const std::string& file) const;
  std::vector<std::string> log_lines() const;
  std::uint64_t body_bytes_sent() const;  // summed over the access log
  int responses(int status) const;

 private:
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
  std::unique_ptr<GateRelay> relay_;
};

// Debian's nginx started in `dir` (pid, logs, temp paths there; access log
// lines in `log_format`) with the server block `server(port)` on a free port
// (`port`; another try when it is taken, at most 5). nullptr (a test
// failure) when it does not start.
// `http_extra`: directives at the http level (before the server block).
std::unique_ptr<BackgroundProcess> start_nginx(const fs::path& dir, const std::string& log_format,
                                               const std::function<std::string(int)>& server,
                                               int& port, const std::string& http_extra = "");

// nginx on 127.0.0.1 as a package mirror inside a CI cluster: a proxy_cache
// in front of `origin` (a base URL, "http://127.0.0.1:PORT"), one fill from
// the origin however many range requests arrive at once (proxy_cache_lock).
// Access log lines "<status> <bytes> <cache status>" (HIT, MISS, ...).
class CachingMirror {
 public:
  CachingMirror(const fs::path& dir, const std::string& origin);
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> log_lines() const;
  int responses_with(const std::string& cache_status) const;

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

// A free TCP port on `address` (bound, then released).
int free_port(const std::string& address = "127.0.0.1");

// Waits (at most `seconds`) until `address`:`port` accepts connections.
bool wait_for_port(int port, double seconds, const std::string& address = "127.0.0.1");

// A socket listening on `address` and a free port that never accepts (the
// kernel completes the connects): a host that is up for a probe. Closed when
// the object dies.
class TcpListener {
 public:
  explicit TcpListener(const std::string& address = "127.0.0.1");
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Debian's distccd in the foreground on `address` (a loopback address such
// as 127.0.0.2) and a free port, allowing 127.0.0.0/8, `jobs` jobs, logging
// at info level to `dir`/distccd.log. Run as root it drops to its own user,
// so `dir` is made writable for everyone and its parents traversable.
// Stopped with every process it started (its compilers run in process groups
// of their own) when the object dies.
class DistccDaemon {
 public:
  DistccDaemon(const fs::path& dir, const std::string& address, int jobs);
  ~DistccDaemon() { kill(); }
  DistccDaemon(const DistccDaemon&) = delete;
  DistccDaemon& operator=(const DistccDaemon&) = delete;
  int port() const { return port_; }
  // "address:port/limit", a DISTCC_HOSTS entry.
  std::string host(int limit) const;
  std::string log() const;
  // The sources of the log's "compile from SOURCE to OBJECT" lines.
  std::vector<std::string> compiled() const;
  // The sources of the jobs the log shows started ("compile from") and not
  // complete ("job complete" from the same worker).
  std::vector<std::string> in_flight() const;
  // SIGSTOP, then SIGCONT, to the daemon, its workers and their compilers:
  // while frozen, no job starts or completes, so in_flight() holds still.
  void freeze();
  void thaw();
  // SIGKILL to the daemon, its workers and their compilers; waited for.
  void kill();

 private:
  void signal_all(int number) const;

  fs::path dir_;
  std::string address_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// Debian's redis-server on 127.0.0.1 and a free port, in the foreground,
// nothing saved to disk (`--save ''`), its log in `dir`/redis.log, asking
// clients for `password` when it is not empty (`--requirepass`); stopped
// with its process group when the object dies.
class RedisServer {
 public:
  explicit RedisServer(const fs::path& dir, const std::string& password = "");
  int port() const { return port_; }
  // Without the password: the test puts it where it wants it.
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // The number of keys it holds (redis-cli DBSIZE); -1 when it cannot say.
  long keys() const;

 private:
  int port_ = 0;
  std::string password_;
  std::unique_ptr<BackgroundProcess> process_;
};

// `dir`/`name`.tar.gz holding the directory `name`/ with a file of `bytes`
// random bytes (incompressible), a small text file and a relative symlink.
fs::path make_package_tarball(const fs::path& dir, const std::string& name, std::uint64_t bytes,
                              unsigned seed = 1);

}  // namespace test_support
