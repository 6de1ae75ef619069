#include "loopback_servers.hpp"

#include "test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

extern char** environ;

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

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const fs::path& output) {
  std::vector<char*> args;
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!output.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  if (posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), environ) != 0) {
    pid_ = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (pid_ < 0) {
    ADD_FAILURE() << "cannot start " << argv[0];
  }
}

bool BackgroundProcess::running() {
  if (pid_ < 0) {
    return false;
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void BackgroundProcess::stop() {
  if (pid_ < 0) {
    return;
  }
  ::kill(-pid_, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      ::kill(-pid_, SIGKILL);  // anything it left in its group
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

BackgroundProcess::~BackgroundProcess() { stop(); }

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool wait_for_port(int port, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    const bool connected =
        ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    ::close(fd);
    if (connected) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

NginxServer::NginxServer(const fs::path& dir, const fs::path& www, const std::string& limit_rate)
    : dir_(dir) {
  fs::create_directories(dir_);
  // A port taken between free_port() and nginx's bind: another try (at most 5).
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_port();
    std::ostringstream conf;
    conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         << "pid " << (dir_ / "nginx.pid").string() << ";\n"
         << "error_log " << (dir_ / "error.log").string() << " warn;\n"
         << "events { worker_connections 256; }\n"
         << "http {\n"
         << "  log_format bytes '$status $body_bytes_sent $http_range';\n"
         << "  access_log " << (dir_ / "access.log").string() << " bytes;\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
      conf << "  " << temp << "_temp_path " << (dir_ / (std::string(temp) + "_temp")).string()
           << ";\n";
    }
    conf << "  server {\n    listen 127.0.0.1:" << port_ << ";\n    root " << www.string()
         << ";\n    keepalive_requests 10000;\n";
    if (!limit_rate.empty()) {
      conf << "    limit_rate " << limit_rate << ";\n";
    }
    conf << "  }\n}\n";
    write_file(dir_ / "nginx.conf", conf.str());
    process_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{
        "/usr/sbin/nginx", "-p", dir_.string(), "-e", (dir_ / "error.log").string(), "-c",
        (dir_ / "nginx.conf").string()});
    if (wait_for_port(port_, 10)) {
      return;
    }
    process_.reset();
  }
  ADD_FAILURE() << "nginx did not start: " << read_file(dir_ / "error.log");
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
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && !fs::exists(port_file) && process_->running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!fs::exists(port_file)) {
    ADD_FAILURE() << "the fault server stand-in did not start";
    return;
  }
  port_ = std::stoi(read_file(port_file));
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
