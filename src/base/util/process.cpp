#include "base/util/process.hpp"

#include "base/util/error.hpp"
#include "base/stop/stop_signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace ascend_setup {

namespace {

struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (read >= 0) {
      ::close(read);
      read = -1;
    }
  }
  void close_write() {
    if (write >= 0) {
      ::close(write);
      write = -1;
    }
  }
};

std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const auto eq = text.find('=');
    env[text.substr(0, eq)] = eq == std::string::npos ? "" : text.substr(eq + 1);
  }
  for (const auto& [name, value] : spec.env_changes) {
    if (value) {
      env[name] = *value;
    } else {
      env.erase(name);
    }
  }
  std::vector<std::string> result;
  for (const auto& [name, value] : env) {
    result.push_back(name + "=" + value);
  }
  return result;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) {
    result.push_back(s.data());
  }
  result.push_back(nullptr);
  return result;
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    throw Error("run_process: empty command");
  }
  Pipe in;
  Pipe out;
  Pipe err;

  // Destroyed on every path, a stop (throw_if_stopped below) included.
  struct FileActions {
    posix_spawn_file_actions_t value;
    FileActions() { posix_spawn_file_actions_init(&value); }
    ~FileActions() { posix_spawn_file_actions_destroy(&value); }
  } file_actions;
  posix_spawn_file_actions_t& actions = file_actions.value;
  posix_spawn_file_actions_adddup2(&actions, in.read, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write, 2);
  if (spec.cwd) {
    posix_spawn_file_actions_addchdir_np(&actions, spec.cwd->c_str());
  }

  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> envp = child_environment(spec);
  std::vector<char*> argv_ptrs = pointers(argv);
  std::vector<char*> envp_ptrs = pointers(envp);

  // A child gets default signal dispositions even when ours ignore SIGINT
  // (a background job), so that Ctrl-C reaches it as it would from a shell,
  // and SIGPIPE (ignored here, stop_signals.hpp) as from a shell.
  struct SpawnAttributes {
    posix_spawnattr_t value;
    SpawnAttributes() { posix_spawnattr_init(&value); }
    ~SpawnAttributes() { posix_spawnattr_destroy(&value); }
  } spawn_attributes;
  posix_spawnattr_t& attributes = spawn_attributes.value;
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  // Nothing blocked in the child, even while the launcher blocks the stop
  // signals (stop_signals.hpp).
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  // Its own process group, so that a stop signal reaches all it starts.
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  throw_if_stopped();
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes, argv_ptrs.data(),
                              envp_ptrs.data());
  if (rc != 0) {
    throw Error("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  register_child_group(pid);
  in.close_read();
  out.close_write();
  err.close_write();

  ProcessResult result;
  size_t written = 0;
  if (spec.stdin_text.empty()) {
    in.close_write();
  }
  while (out.read >= 0 || err.read >= 0) {
    pollfd fds[3];
    nfds_t count = 0;
    if (out.read >= 0) fds[count++] = {out.read, POLLIN, 0};
    if (err.read >= 0) fds[count++] = {err.read, POLLIN, 0};
    if (in.write >= 0) fds[count++] = {in.write, POLLOUT, 0};
    if (poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.write) {
        const ssize_t n =
            ::write(in.write, spec.stdin_text.data() + written, spec.stdin_text.size() - written);
        if (n <= 0 || (written += static_cast<size_t>(n)) == spec.stdin_text.size()) {
          in.close_write();
        }
        continue;
      }
      char buffer[65536];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        (fds[i].fd == out.read ? out : err).close_read();
      } else {
        (fds[i].fd == out.read ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      }
    }
  }
  in.close_write();

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  forget_child_group(pid);
  throw_if_stopped();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

}  // namespace ascend_setup
