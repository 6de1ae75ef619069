#include "loopback_servers.hpp"

#include "test_support.hpp"

#include "base/process/descendants.hpp"
#include "base/process/process.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <thread>

namespace test_support {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) {
      lines.push_back(line);
    }
  }
  return lines;
}

}  // namespace

namespace {

// `argv` started in a process group of its own, stdout to `out` and stderr
// to `err` when not empty (the same file when both name it), with
// `pending_signal` (when not 0) blocked and raised before the exec; -1 when
// it cannot be started. Only async-signal-safe calls between fork and exec.
pid_t spawn_in_own_group(const std::vector<std::string>& argv, const fs::path& out,
                         const fs::path& err, int pending_signal) {
  std::vector<char*> args;
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (pending_signal != 0) {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, pending_signal);
      ::sigprocmask(SIG_BLOCK, &set, nullptr);
      ::raise(pending_signal);
    }
    const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    if (!out.empty()) {
      const int fd = ::open(out.c_str(), flags, 0644);
      if (fd < 0 || ::dup2(fd, 1) < 0) {
        ::_exit(127);
      }
    }
    if (!err.empty()) {
      const int fd = err == out ? 1 : ::open(err.c_str(), flags, 0644);
      if (fd < 0 || ::dup2(fd, 2) < 0) {
        ::_exit(127);
      }
    }
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (pid > 0) {
    ::setpgid(pid, pid);  // also here: a signal to the group right after the fork reaches it
  }
  return pid;
}

}  // namespace

namespace {}  // namespace

int port_written_by(BackgroundProcess& process, const fs::path& port_file, const std::string& what,
                    const fs::path& output) {
  if (!wait_until(
          process, [&] { return fs::exists(port_file); }, 20)) {
    ADD_FAILURE() << what << " did not start: " << read_file(output);
    return 0;
  }
  return std::stoi(read_file(port_file));
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const fs::path& output)
    : pid_(spawn_in_own_group(argv, output, output, 0)), group_(pid_) {
  if (pid_ < 0) {
    ADD_FAILURE() << "cannot start " << argv[0];
  }
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const Logs& logs)
    : out_(logs.logs.string() + ".out"), err_(logs.logs.string() + ".err") {
  pid_ = group_ = spawn_in_own_group(argv, out_, err_, logs.pending_signal);
  if (pid_ < 0) {
    ADD_FAILURE() << "cannot start " << argv[0];
  }
}

void BackgroundProcess::reaped(int status) {
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  died_of_signal_ = WIFSIGNALED(status);
  pid_ = -1;
}

int BackgroundProcess::wait() {
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped(status);
  }
  return exit_code_.value_or(-1);
}

std::string BackgroundProcess::out() const { return out_.empty() ? "" : read_file(out_); }

std::string BackgroundProcess::err() const { return err_.empty() ? "" : read_file(err_); }

bool wait_until(BackgroundProcess& process, const std::function<bool()>& ready, double seconds) {
  wait_until([&] { return ready() || !process.running(); }, seconds);
  return ready();
}

bool BackgroundProcess::running() {
  if (pid_ < 0) {
    return false;
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped(status);
    return false;
  }
  return true;
}

bool BackgroundProcess::signal(int number) { return running() && ::kill(pid_, number) == 0; }

std::optional<int> BackgroundProcess::exit_code(double seconds) {
  wait_until([this] { return !running(); }, seconds);
  return exit_code_;
}

void BackgroundProcess::stop() {
  if (pid_ < 0) {
    if (group_ > 0) {
      ::kill(-group_, SIGKILL);  // anything an ended process left in its group
    }
    return;
  }
  ::kill(-pid_, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      ::kill(-pid_, SIGKILL);  // anything it left in its group
      reaped(status);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped(status);
}

BackgroundProcess::~BackgroundProcess() { stop(); }

int free_port(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  ::inet_pton(AF_INET, address.c_str(), &socket_address.sin_addr);
  socket_address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&socket_address), sizeof(socket_address));
  socklen_t length = sizeof(socket_address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&socket_address), &length);
  ::close(fd);
  return ntohs(socket_address.sin_port);
}

bool wait_for_port(int port, double seconds, const std::string& address) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in socket_address{};
    socket_address.sin_family = AF_INET;
    ::inet_pton(AF_INET, address.c_str(), &socket_address.sin_addr);
    socket_address.sin_port = htons(static_cast<uint16_t>(port));
    const bool connected =
        ::connect(fd, reinterpret_cast<sockaddr*>(&socket_address), sizeof(socket_address)) == 0;
    ::close(fd);
    if (connected) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TcpListener::TcpListener(const std::string& address) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  ::inet_pton(AF_INET, address.c_str(), &socket_address.sin_addr);
  socket_address.sin_port = 0;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&socket_address), sizeof(socket_address)) != 0 ||
      ::listen(fd_, 16) != 0) {
    ADD_FAILURE() << "cannot listen on " << address;
  }
  socklen_t length = sizeof(socket_address);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&socket_address), &length);
  port_ = ntohs(socket_address.sin_port);
}

TcpListener::~TcpListener() { ::close(fd_); }

DistccDaemon::DistccDaemon(const fs::path& dir, const std::string& address, int jobs)
    : dir_(dir), address_(address) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::all);
  for (fs::path up = dir_.parent_path(); up != up.parent_path(); up = up.parent_path()) {
    if (up == fs::temp_directory_path()) {
      break;
    }
    fs::permissions(up, fs::perms::others_exec | fs::perms::group_exec, fs::perm_options::add);
  }
  // A port taken between free_port() and distccd's bind: another try (at most 5).
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_port(address_);
    std::vector<std::string> argv{"distccd",
                                  "--daemon",
                                  "--no-detach",
                                  "--log-file",
                                  (dir_ / "distccd.log").string(),
                                  "--log-level",
                                  "info",
                                  "--listen",
                                  address_,
                                  "--allow",
                                  "127.0.0.0/8",
                                  "--port",
                                  std::to_string(port_),
                                  "--jobs",
                                  std::to_string(jobs)};
    pid_ = spawn_in_own_group(argv, dir_ / "distccd.out", dir_ / "distccd.out", 0);
    if (pid_ > 0 && wait_for_port(port_, 10, address_)) {
      return;
    }
    kill();
  }
  ADD_FAILURE() << "distccd did not start on " << address_ << ": "
                << read_file(dir_ / "distccd.out") << log();
}

std::string DistccDaemon::host(int limit) const {
  return address_ + ":" + std::to_string(port_) + "/" + std::to_string(limit);
}

std::string DistccDaemon::log() const { return read_file(dir_ / "distccd.log"); }

std::vector<std::string> DistccDaemon::compiled() const {
  std::vector<std::string> sources;
  for (const std::string& line : lines_of(dir_ / "distccd.log")) {
    const size_t from = line.find("] compile from ");
    if (from != std::string::npos) {
      const size_t start = from + 15;
      sources.push_back(line.substr(start, line.find(" to ", start) - start));
    }
  }
  return sources;
}

std::vector<std::string> DistccDaemon::in_flight() const {
  std::map<std::string, std::string> by_worker;  // "distccd[PID]" -> source
  for (const std::string& line : lines_of(dir_ / "distccd.log")) {
    const std::string worker = line.substr(0, line.find(']') + 1);
    const size_t from = line.find("] compile from ");
    if (from != std::string::npos) {
      const size_t start = from + 15;
      by_worker[worker] = line.substr(start, line.find(" to ", start) - start);
    } else if (line.find("] job complete") != std::string::npos) {
      by_worker.erase(worker);
    }
  }
  std::vector<std::string> sources;
  for (const auto& [worker, source] : by_worker) {
    sources.push_back(source);
  }
  return sources;
}

void DistccDaemon::signal_all(int number) const {
  // The daemon's group first, so that no worker starts a compiler while its
  // descendants are listed (when `number` stops them); then every
  // descendant's group.
  ::kill(-pid_, number);
  for (const pid_t pid : ascend_setup::living_descendants(pid_)) {
    const pid_t group = ::getpgid(pid);
    if (group > 1 && group != ::getpgrp()) {
      ::kill(-group, number);
    }
    ::kill(pid, number);
  }
}

void DistccDaemon::freeze() {
  if (pid_ > 0) {
    signal_all(SIGSTOP);
  }
}

void DistccDaemon::thaw() {
  if (pid_ > 0) {
    signal_all(SIGCONT);
  }
}

void DistccDaemon::kill() {
  if (pid_ < 0) {
    return;
  }
  ::kill(-pid_, SIGSTOP);
  signal_all(SIGKILL);
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::unique_ptr<BackgroundProcess> start_nginx(const fs::path& dir, const std::string& log_format,
                                               const std::function<std::string(int)>& server,
                                               int& port, const std::string& http_extra) {
  fs::create_directories(dir);
  // A port taken between free_port() and nginx's bind: another try (at most 5).
  for (int attempt = 0; attempt < 5; ++attempt) {
    port = free_port();
    std::ostringstream conf;
    conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         << "pid " << (dir / "nginx.pid").string() << ";\n"
         << "error_log " << (dir / "error.log").string() << " warn;\n"
         << "events { worker_connections 256; }\n"
         << "http {\n"
         << "  log_format lines '" << log_format << "';\n"
         << "  access_log " << (dir / "access.log").string() << " lines;\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
      conf << "  " << temp << "_temp_path " << (dir / (std::string(temp) + "_temp")).string()
           << ";\n";
    }
    conf << http_extra << "  server {\n" << server(port) << "  }\n}\n";
    write_file(dir / "nginx.conf", conf.str());
    auto process = std::make_unique<BackgroundProcess>(std::vector<std::string>{
        "/usr/sbin/nginx", "-p", dir.string(), "-e", (dir / "error.log").string(), "-c",
        (dir / "nginx.conf").string()});
    if (wait_for_port(port, 10)) {
      return process;
    }
  }
  ADD_FAILURE() << "nginx did not start: " << read_file(dir / "error.log");
  return nullptr;
}

RedisServer::RedisServer(const fs::path& dir, const std::string& password) : password_(password) {
  fs::create_directories(dir);
  // A port taken between free_port() and the bind: another try (at most 5).
  for (int attempt = 0; attempt < 5 && !process_; ++attempt) {
    port_ = free_port();
    std::vector<std::string> argv{
        "redis-server", "--bind", "127.0.0.1", "--port",    std::to_string(port_), "--save", "",
        "--appendonly", "no",     "--dir",     dir.string()};
    if (!password_.empty()) {
      argv.insert(argv.end(), {"--requirepass", password_});
    }
    process_ = std::make_unique<BackgroundProcess>(argv, dir / "redis.log");
    if (!wait_for_port(port_, 10)) {
      process_.reset();
    }
  }
  if (!process_) {
    ADD_FAILURE() << "redis-server did not start: " << read_file(dir / "redis.log");
  }
}

long RedisServer::keys() const {
  std::vector<std::string> argv{"redis-cli", "-h", "127.0.0.1", "-p", std::to_string(port_)};
  if (!password_.empty()) {
    argv.insert(argv.end(), {"--no-auth-warning", "-a", password_});
  }
  argv.push_back("DBSIZE");
  const ascend_setup::ProcessResult result =
      ascend_setup::run_process({argv, std::nullopt, {}, ""});
  const auto keys = ascend_setup::parse_integer(ascend_setup::trim(result.out), 0L, 1L << 40);
  return result.exit_code == 0 && keys ? *keys : -1;
}

NginxServer::NginxServer(const fs::path& dir, const fs::path& www, const StreamGate* gate)
    : dir_(dir) {
  process_ = start_nginx(
      dir_, "$status $body_bytes_sent $http_range",
      [&](int port) {
        return "    listen 127.0.0.1:" + std::to_string(port) + (gate ? " sndbuf=64k" : "") +
               ";\n    root " + www.string() + ";\n    keepalive_requests 10000;\n";
      },
      port_);
  if (gate) {
    relay_ = std::make_unique<GateRelay>(*gate, port_);
  }
}

StreamGate::StreamGate(const fs::path& dir, std::uint64_t budget) : dir_(dir), budget_(budget) {
  fs::create_directories(dir_);
}

std::optional<std::uint64_t> StreamGate::holding() const {
  // Written whole (a rename): absent, or a number.
  return ascend_setup::parse_integer(read_file(dir_ / "holding"), std::uint64_t{0},
                                     ~std::uint64_t{0});
}

void StreamGate::open() const { write_file(dir_ / "open", ""); }

GateRelay::GateRelay(const StreamGate& gate, int target_port) {
  const fs::path port_file = gate.dir() / "relay-port";
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{SYSTEM_PYTHON, std::string(STAND_INS) + "/gate.py", "relay",
                               "--gate-dir", gate.dir().string(), "--budget",
                               std::to_string(gate.budget()), "--target-port",
                               std::to_string(target_port), "--port-file", port_file.string()},
      gate.dir() / "relay-output.log");
  port_ = port_written_by(*process_, port_file, "the gate relay stand-in",
                          gate.dir() / "relay-output.log");
}

std::string NginxServer::url(const std::string& file) const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/" + file;
}

std::vector<std::string> NginxServer::log_lines() const { return lines_of(dir_ / "access.log"); }

std::uint64_t NginxServer::body_bytes_sent() const {
  std::uint64_t total = 0;
  for (const auto& line : log_lines()) {
    std::istringstream in(line);
    int status = 0;
    std::uint64_t bytes = 0;
    in >> status >> bytes;
    total += bytes;
  }
  return total;
}

int NginxServer::responses(int status) const {
  int count = 0;
  for (const auto& line : log_lines()) {
    count += std::stoi(line) == status ? 1 : 0;
  }
  return count;
}

CachingMirror::CachingMirror(const fs::path& dir, const std::string& origin) : dir_(dir) {
  process_ = start_nginx(
      dir_, "$status $body_bytes_sent $upstream_cache_status",
      [&](int port) {
        return "    listen 127.0.0.1:" + std::to_string(port) +
               ";\n    location / {\n      proxy_pass " + origin +
               ";\n      proxy_cache mirror;\n      proxy_cache_valid 200 1d;\n"
               "      proxy_cache_lock on;\n      proxy_cache_lock_timeout 60s;\n    }\n";
      },
      port_,
      "  proxy_cache_path " + (dir_ / "cache").string() +
          " levels=1:2 keys_zone=mirror:1m max_size=1g inactive=1d use_temp_path=off;\n");
}

std::vector<std::string> CachingMirror::log_lines() const { return lines_of(dir_ / "access.log"); }

int CachingMirror::responses_with(const std::string& cache_status) const {
  int count = 0;
  for (const auto& line : log_lines()) {
    count += line.ends_with(" " + cache_status) ? 1 : 0;
  }
  return count;
}

FaultServer::FaultServer(const fs::path& dir, const fs::path& file, const std::string& mode,
                         int faults, std::uint64_t after)
    : dir_(dir) {
  fs::create_directories(dir_);
  set_mode(mode);
  const fs::path port_file = dir_ / "port";
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{SYSTEM_PYTHON, std::string(STAND_INS) + "/fault_http_server.py",
                               "--file", file.string(), "--port-file", port_file.string(), "--log",
                               (dir_ / "requests.log").string(), "--mode-file",
                               (dir_ / "mode").string(), "--faults", std::to_string(faults),
                               "--after", std::to_string(after), "--max-seconds", "600"},
      dir_ / "server-output.log");
  port_ = port_written_by(*process_, port_file, "the fault server stand-in",
                          dir_ / "server-output.log");
}

std::string FaultServer::url(const std::string& file) const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/" + file;
}

void FaultServer::set_mode(const std::string& mode) const {
  write_file(dir_ / "mode.tmp", mode + "\n");
  fs::rename(dir_ / "mode.tmp", dir_ / "mode");
}

std::vector<std::string> FaultServer::log_lines() const { return lines_of(dir_ / "requests.log"); }

std::uint64_t FaultServer::body_bytes_sent() const {
  std::uint64_t total = 0;
  for (const auto& line : log_lines()) {
    total += std::stoull(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

fs::path make_package_tarball(const fs::path& dir, const std::string& name, std::uint64_t bytes,
                              unsigned seed) {
  const fs::path source = dir / ("source-" + name);
  fs::create_directories(source / name / "lib");
  fs::create_directories(source / name / "include");
  {
    std::ofstream out(source / name / "lib" / "payload.bin", std::ios::binary);
    std::mt19937_64 random(seed);
    std::vector<std::uint64_t> block(8192);
    for (std::uint64_t written = 0; written < bytes;) {
      for (auto& word : block) {
        word = random();
      }
      const std::uint64_t size = std::min<std::uint64_t>(bytes - written, block.size() * 8);
      out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(size));
      written += size;
    }
  }
  write_file(source / name / "include" / "llvm-config.h", "#define LLVM_VERSION_MAJOR 22\n");
  fs::create_symlink("payload.bin", source / name / "lib" / "payload-link.bin");
  const fs::path tarball = dir / (name + ".tar.gz");
  must_run({"tar", "-czf", tarball.string(), "-C", source.string(), name}, dir);
  return tarball;
}

}  // namespace test_support
