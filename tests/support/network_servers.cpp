#include "network_servers.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace test_support {

namespace {

std::vector<std::string> file_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      lines.push_back(line);
    }
  }
  return lines;
}

}  // namespace

TestCa::TestCa(const fs::path& dir)
    : ca_certificate(dir / "ca.pem"),
      server_certificate(dir / "server.pem"),
      server_key(dir / "server.key") {
  fs::create_directories(dir);
  const fs::path ca_key = dir / "ca.key";
  must_run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key.string(),
            "-out", ca_certificate.string(), "-days", "2", "-subj", "/CN=ascend-setup test CA"},
           dir);
  const fs::path request = dir / "server.csr";
  must_run({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", server_key.string(),
            "-out", request.string(), "-subj", "/CN=localhost"},
           dir);
  write_file(dir / "server.ext",
             "subjectAltName = DNS:localhost, IP:127.0.0.1\nbasicConstraints = CA:FALSE\n"
             "extendedKeyUsage = serverAuth\n");
  must_run({"openssl", "x509", "-req", "-in", request.string(), "-CA", ca_certificate.string(),
            "-CAkey", ca_key.string(), "-CAcreateserial", "-out", server_certificate.string(),
            "-days", "2", "-extfile", (dir / "server.ext").string()},
           dir);
}

FlakyConnectProxy::FlakyConnectProxy(const fs::path& dir, int failures, const std::string& answer)
    : dir_(dir) {
  fs::create_directories(dir_);
  const fs::path port_file = dir_ / "port";
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{SYSTEM_PYTHON, std::string(STAND_INS) + "/flaky_connect_proxy.py",
                               "--port-file", port_file.string(), "--log",
                               (dir_ / "connects.log").string(), "--failures",
                               std::to_string(failures), "--answer", answer},
      dir_ / "proxy-output.log");
  port_ = port_written_by(*process_, port_file, "the flaky CONNECT proxy stand-in",
                          dir_ / "proxy-output.log");
}

std::vector<std::string> FlakyConnectProxy::connects() const {
  return file_lines(dir_ / "connects.log");
}

TinyProxy::TinyProxy(const fs::path& dir, const std::vector<int>& connect_ports,
                     const std::optional<std::pair<std::string, std::string>>& credentials)
    : dir_(dir) {
  fs::create_directories(dir_);
  // A port taken between free_port() and tinyproxy's bind: another try (at most 5).
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_port();
    std::ostringstream conf;
    conf << "Port " << port_ << "\nListen 127.0.0.1\nTimeout 60\nAllow 127.0.0.1\n"
         << "MaxClients 64\nLogLevel Connect\n"
         << "LogFile \"" << (dir_ / "tinyproxy.log").string() << "\"\n"
         << "PidFile \"" << (dir_ / "tinyproxy.pid").string() << "\"\n";
    for (const int connect_port : connect_ports) {
      conf << "ConnectPort " << connect_port << "\n";
    }
    if (credentials) {
      conf << "BasicAuth " << credentials->first << " " << credentials->second << "\n";
    }
    write_file(dir_ / "tinyproxy.conf", conf.str());
    process_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{"tinyproxy", "-d", "-c", (dir_ / "tinyproxy.conf").string()},
        dir_ / "tinyproxy.out");
    if (wait_for_port(port_, 10)) {
      return;
    }
    process_.reset();
  }
  ADD_FAILURE() << "tinyproxy did not start: " << read_file(dir_ / "tinyproxy.out");
}

std::string TinyProxy::url(const std::string& userinfo) const {
  return "http://" + (userinfo.empty() ? "" : userinfo + "@") +
         "127.0.0.1:" + std::to_string(port_);
}

std::string TinyProxy::log() const {
  return fs::exists(dir_ / "tinyproxy.log") ? read_file(dir_ / "tinyproxy.log") : "";
}

std::vector<std::string> TinyProxy::connects() const {
  std::vector<std::string> targets;
  for (const std::string& line : file_lines(dir_ / "tinyproxy.log")) {
    const std::string marker = "Request (file descriptor ";
    const size_t at = line.find(marker);
    const size_t connect = line.find("): CONNECT ", at);
    if (at != std::string::npos && connect != std::string::npos) {
      const size_t start = connect + 11;
      targets.push_back(line.substr(start, line.find(' ', start) - start));
    }
  }
  return targets;
}

TlsNginx::TlsNginx(const fs::path& dir, const TestCa& ca, const fs::path& www,
                   const fs::path& git_root, const StreamGate* gate)
    : dir_(dir) {
  fs::create_directories(dir_);
  const fs::path socket = dir_ / "fcgiwrap.sock";
  // With a gate, git-http-backend's answers go through gate.py's pipe: a
  // fetch holds at the gate until the test opens it.
  fs::path backend = "/usr/lib/git-core/git-http-backend";
  if (!git_root.empty() && gate) {
    backend = dir_ / "gated-git-http-backend";
    write_file(backend, "#!/bin/sh\nexec " + std::string(SYSTEM_PYTHON) + " " +
                            std::string(STAND_INS) + "/gate.py pipe --gate-dir '" +
                            gate->dir().string() + "' --budget " + std::to_string(gate->budget()) +
                            " -- " + "/usr/lib/git-core/git-http-backend\n");
    fs::permissions(backend, fs::perms(0755));
  }
  if (!git_root.empty()) {
    fcgiwrap_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{"fcgiwrap", "-c", "4", "-s", "unix:" + socket.string()},
        dir_ / "fcgiwrap.out");
    for (int i = 0; i < 500 && !fs::exists(socket); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!fs::exists(socket)) {
      ADD_FAILURE() << "fcgiwrap did not start: " << read_file(dir_ / "fcgiwrap.out");
    }
  }
  nginx_ = start_nginx(
      dir_, "$request_method $uri $status $body_bytes_sent",
      [&](int port) {
        std::ostringstream server;
        server << "    listen 127.0.0.1:" << port << " ssl;\n"
               << "    ssl_certificate " << ca.server_certificate.string() << ";\n"
               << "    ssl_certificate_key " << ca.server_key.string() << ";\n"
               << "    root " << www.string() << ";\n";
        if (gate) {
          server << "    fastcgi_buffering off;\n";
        }
        if (!git_root.empty()) {
          server << "    location ~ ^/git(/.*)$ {\n"
                 << "      client_max_body_size 0;\n"
                 << "      include /etc/nginx/fastcgi_params;\n"
                 << "      fastcgi_param SCRIPT_FILENAME " << backend.string() << ";\n"
                 << "      fastcgi_param GIT_PROJECT_ROOT " << git_root.string() << ";\n"
                 << "      fastcgi_param GIT_HTTP_EXPORT_ALL \"\";\n"
                 << "      fastcgi_param PATH_INFO $1;\n"
                 << "      fastcgi_pass unix:" << socket.string() << ";\n"
                 << "    }\n";
        }
        return server.str();
      },
      port_);
}

std::string TlsNginx::url(const std::string& path) const {
  return "https://localhost:" + std::to_string(port_) + "/" + path;
}

std::vector<std::string> TlsNginx::log_lines() const { return file_lines(dir_ / "access.log"); }

fs::path serve_bare_copy(const fs::path& source, const fs::path& git_root, const std::string& name,
                         const fs::path& home) {
  const fs::path bare = git_root / (name + ".git");
  fs::create_directories(git_root);
  must_run({"git", "clone", "-q", "--bare", source.string(), bare.string()}, git_root,
           git_env(home));
  for (const char* key : {"uploadpack.allowAnySHA1InWant", "uploadpack.allowReachableSHA1InWant",
                          "http.receivepack"}) {
    must_run({"git", "-C", bare.string(), "config", key, "true"}, git_root, git_env(home));
  }
  return bare;
}

std::uint64_t bytes_under(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_error;
    if (it->is_regular_file(size_error)) {
      const auto size = it->file_size(size_error);
      total += size_error ? 0 : size;
    }
  }
  return total;
}

std::vector<std::string> entries_containing(const fs::path& dir, const std::string& part) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find(part) != std::string::npos) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace test_support
