#include "base/process/process.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/error.hpp"
#include "base/util/unique_fd.hpp"

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

SpawnError::SpawnError(const std::string& program, int error_number)
    : Error("cannot run " + program + ": " + std::strerror(error_number),
            error_number == ENOENT || error_number == EACCES || error_number == ENOTDIR
                ? ErrorKind::bad_input
                : ErrorKind::local_io),
      error_number_(error_number) {}

bool SpawnError::not_found() const noexcept {
  return error_number_ == ENOENT || error_number_ == ENOTDIR;
}

namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      throw Error(std::string("cannot create a pipe: ") + std::strerror(errno),
                  ErrorKind::local_io);
    }
    read.reset(fds[0]);
    write.reset(fds[1]);
  }
  void close_read() { read.reset(); }
  void close_write() { write.reset(); }
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

// The child's three pipes; every end is closed on every path (destructor).
struct ChildPipes {
  Pipe in, out, err;
  void close_all() {
    in.close_write();
    out.close_read();
    err.close_read();
  }
};

// Both posix_spawn objects, destroyed on every path, a stop included.
struct SpawnObjects {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnObjects() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnObjects() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnObjects(const SpawnObjects&) = delete;
  SpawnObjects& operator=(const SpawnObjects&) = delete;
};

// Starts the child in its own process group (registered for the stop
// signals) with the pipes as its stdin, stdout and stderr; leaves the
// parent's ends open.
pid_t spawn(const ProcessSpec& spec, ChildPipes& pipes) {
  SpawnObjects spawn_objects;
  posix_spawn_file_actions_t& actions = spawn_objects.actions;
  posix_spawn_file_actions_adddup2(&actions, pipes.in.read.get(), 0);
  if (spec.stream_to_stderr) {
    // The pipes' write ends are close-on-exec, so both reads end at once.
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  } else {
    posix_spawn_file_actions_adddup2(&actions, pipes.out.write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, pipes.err.write.get(), 2);
  }
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
  posix_spawnattr_t& attributes = spawn_objects.attributes;
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
    throw SpawnError(argv[0], rc);
  }
  register_child_group(pid);
  pipes.in.close_read();
  pipes.out.close_write();
  pipes.err.close_write();
  return pid;
}

// Writes `stdin_text` and collects stdout and stderr until both end. Returns
// 0, or the errno of a failed poll (the caller closes the pipes, so the child
// is not left blocked writing to a pipe nobody reads).
int pump(ChildPipes& pipes, const std::string& stdin_text, ProcessResult& result) {
  size_t written = 0;
  if (stdin_text.empty()) {
    pipes.in.close_write();
  }
  while (pipes.out.read.get() >= 0 || pipes.err.read.get() >= 0) {
    pollfd fds[3];
    nfds_t count = 0;
    if (pipes.out.read.get() >= 0) fds[count++] = {pipes.out.read.get(), POLLIN, 0};
    if (pipes.err.read.get() >= 0) fds[count++] = {pipes.err.read.get(), POLLIN, 0};
    if (pipes.in.write.get() >= 0) fds[count++] = {pipes.in.write.get(), POLLOUT, 0};
    if (poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == pipes.in.write.get()) {
        const ssize_t n =
            ::write(pipes.in.write.get(), stdin_text.data() + written, stdin_text.size() - written);
        if (n <= 0 || (written += static_cast<size_t>(n)) == stdin_text.size()) {
          pipes.in.close_write();
        }
        continue;
      }
      Pipe& pipe = fds[i].fd == pipes.out.read.get() ? pipes.out : pipes.err;
      char buffer[65536];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        pipe.close_read();
      } else {
        (&pipe == &pipes.out ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      }
    }
  }
  return 0;
}

// Waits for the child (EINTR retried) and unregisters its group; its exit
// code, or 128 + the signal that ended it.
int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  forget_child_group(pid);
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    throw Error("run_process: empty command", ErrorKind::internal);
  }
  ChildPipes pipes;
  const pid_t pid = spawn(spec, pipes);
  ProcessResult result;
  const int pump_error = pump(pipes, spec.stdin_text, result);
  pipes.close_all();  // before the wait: a child still writing gets EPIPE, not a reader that never
                      // comes
  result.exit_code = wait_for(pid);
  throw_if_stopped();
  if (pump_error != 0) {
    throw Error("cannot read the output of " + spec.argv[0] + ": " + std::strerror(pump_error),
                ErrorKind::local_io);
  }
  return result;
}

}  // namespace ascend_setup
