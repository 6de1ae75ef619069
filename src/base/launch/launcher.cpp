#include "base/launch/launcher.hpp"

#include "base/util/error.hpp"
#include "base/util/strings.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace ascend_setup {

namespace fs = std::filesystem;

namespace {

// Where an installation keeps libpythonX.Y.so.1.0 (pyenv: lib/, Debian: the
// multiarch directory).
std::optional<fs::path> shared_libpython_dir(const fs::path& prefix, const std::string& version) {
  const std::string name = "libpython" + version + ".so.1.0";
  for (const fs::path& dir :
       {prefix / "lib", prefix / "lib64", prefix / "lib" / ASCEND_SETUP_MULTIARCH}) {
    if (fs::exists(dir / name)) {
      return dir;
    }
  }
  return std::nullopt;
}

std::string how_to_add() {
  return "to serve another CPython >= " ASCEND_SETUP_MIN_PYTHON
         " (built with --enable-shared, not free-threaded), rebuild ascend-setup with "
         "-DASCEND_SETUP_PYTHONS=\"/path/to/python3.X;...\"";
}

}  // namespace

std::optional<std::string> handoff_env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

fs::path host_directory() {
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  const fs::path bin = ec ? fs::current_path() : self.parent_path();
  for (const fs::path& dir :
       {bin / "libexec" / "ascend-setup", bin.parent_path() / "libexec" / "ascend-setup"}) {
    if (fs::exists(dir / "hosts.txt")) {
      return dir;
    }
  }
  throw Error("no host executables next to " + self.string() +
              " (libexec/ascend-setup/hosts.txt is missing): reinstall ascend-setup");
}

std::vector<HostEntry> read_host_manifest(const fs::path& directory) {
  std::ifstream in(directory / "hosts.txt");
  std::vector<HostEntry> hosts;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    HostEntry entry;
    std::string prefix;
    if (line.empty() || line[0] == '#' || !(fields >> entry.version >> entry.file)) {
      continue;
    }
    if (fields >> prefix) {
      entry.prefix = prefix;
    }
    hosts.push_back(entry);
  }
  if (hosts.empty()) {
    throw Error((directory / "hosts.txt").string() + " lists no host: reinstall ascend-setup");
  }
  return hosts;
}

std::string describe_hosts(const std::vector<HostEntry>& hosts) {
  std::vector<std::string> parts;
  for (const auto& host : hosts) {
    parts.push_back(host.version +
                    (host.prefix ? " (static, for " + host.prefix->string() + ")" : ""));
  }
  return join(parts, ", ");
}

HostChoice choose_host(const std::vector<HostEntry>& hosts, const fs::path& directory,
                       const InterpreterInfo& interpreter) {
  const std::string who = interpreter.origin + " names " + interpreter.executable.string();
  std::set<std::string> versions;
  for (const auto& host : hosts) {
    versions.insert(host.version);
  }
  const std::string served =
      "this ascend-setup serves CPython " + join({versions.begin(), versions.end()}, ", ");
  if (interpreter.implementation != "cpython") {
    throw Error(who + ", a " + interpreter.implementation + " interpreter: " + served + "; " +
                how_to_add());
  }
  if (interpreter.free_threaded) {
    throw Error(who + ", a free-threaded CPython " + interpreter.version + ": " + served + "; " +
                how_to_add());
  }
  for (const auto& host : hosts) {
    if (host.version == interpreter.version && host.prefix &&
        fs::equivalent(*host.prefix, interpreter.base_prefix)) {
      return {directory / host.file, std::nullopt};
    }
  }
  for (const auto& host : hosts) {
    if (host.version == interpreter.version && !host.prefix) {
      auto library_dir = shared_libpython_dir(interpreter.base_prefix, interpreter.version);
      if (!library_dir) {
        throw Error(who + ", a CPython " + interpreter.version + " without a shared libpython" +
                    interpreter.version + " under " + interpreter.base_prefix.string() +
                    " (built without --enable-shared): " + served + " from shared libpythons; " +
                    how_to_add());
      }
      return {directory / host.file, library_dir};
    }
  }
  throw Error(who + ", a CPython " + interpreter.version + ": " + served + "; " + how_to_add());
}

int launch(const HostOptions& options, const std::vector<std::string>& argv) {
  if (options.help) {
    std::cout << options.help_text;
    return exit_code::ok;
  }
  const fs::path directory = host_directory();
  const std::vector<HostEntry> hosts = read_host_manifest(directory);
  if (options.host_version) {
    std::cout << "ascend-setup " << ASCEND_SETUP_VERSION << " (CPython " << describe_hosts(hosts)
              << ")\n";
    return exit_code::ok;
  }
  HostChoice choice;
  std::optional<InterpreterInfo> interpreter;
  try {
    interpreter = resolve_interpreter(options.python);
    choice = choose_host(hosts, directory, *interpreter);
  } catch (const Error&) {
    if (options.patch_action == PatchAction::none) {
      throw;
    }
    // The patch options run no Python: any host does, a static one best.
    interpreter.reset();
    choice = {directory / hosts.front().file, std::nullopt};
    for (const auto& host : hosts) {
      if (host.prefix) {
        choice.host = directory / host.file;
      }
    }
  }
  if (interpreter) {
    ::setenv(interpreter_env, interpreter->executable.c_str(), 1);
    spdlog::debug("CPython {} at {} ({}): host {}", interpreter->version,
                  interpreter->executable.string(), interpreter->origin, choice.host.string());
  }
  if (choice.library_dir) {
    const auto saved = handoff_env("LD_LIBRARY_PATH");
    ::setenv(saved_library_path_env, saved ? ("=" + *saved).c_str() : "", 1);
    ::setenv(
        "LD_LIBRARY_PATH",
        (choice.library_dir->string() + (saved && !saved->empty() ? ":" + *saved : "")).c_str(), 1);
  }
  std::vector<char*> args;
  const std::string host = choice.host.string();
  args.push_back(const_cast<char*>(host.c_str()));
  for (size_t i = 1; i < argv.size(); ++i) {
    args.push_back(const_cast<char*>(argv[i].c_str()));
  }
  args.push_back(nullptr);
  execv(host.c_str(), args.data());
  throw Error("cannot run the host " + host + ": " + std::strerror(errno));
}

}  // namespace ascend_setup
