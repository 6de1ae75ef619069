#include "base/process/descendants.hpp"

#include "base/util/numbers.hpp"
#include "base/util/unique_fd.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <thread>

namespace ascend_setup {

namespace {

// /proc/<pid>/stat of `pid`; false when it cannot be read (ended meanwhile).
bool read_state(pid_t pid, ProcessState& out) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) {
    return false;
  }
  char text[512];
  const ssize_t n = ::read(fd.get(), text, sizeof text);
  if (n <= 0) {
    return false;
  }
  const auto state = parse_proc_stat(std::string_view(text, static_cast<size_t>(n)));
  if (!state) {
    return false;
  }
  out = *state;
  return true;
}

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

int pidfd_send_signal(int pidfd, int number) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, number, nullptr, 0));
}

void reap_own_children() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

}  // namespace

std::optional<ProcessState> parse_proc_stat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos || close + 2 >= text.size() || text[close + 1] != ' ') {
    return std::nullopt;
  }
  ProcessState out;
  out.state = text[close + 2];
  std::string_view rest = text.substr(close + 3);
  if (!rest.starts_with(' ')) {
    return std::nullopt;
  }
  rest.remove_prefix(1);
  const auto parent = parse_integer<pid_t>(rest.substr(0, rest.find_first_of(" \n")), 0,
                                           std::numeric_limits<pid_t>::max());
  if (!parent) {
    return std::nullopt;
  }
  out.parent = *parent;
  return out;
}

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

std::vector<pid_t> living_descendants() { return living_descendants(::getpid()); }

std::vector<pid_t> living_descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // parent -> child
  std::set<pid_t> zombies;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* entry = ::readdir(proc)) {
      const auto pid = parse_integer<pid_t>(entry->d_name, 1, std::numeric_limits<pid_t>::max());
      ProcessState state;
      if (!pid || !read_state(*pid, state)) {
        continue;
      }
      children.emplace(state.parent, *pid);
      if (state.state == 'Z' || state.state == 'X') {
        zombies.insert(*pid);
      }
    }
    ::closedir(proc);
  }
  std::vector<pid_t> found;
  std::vector<pid_t> parents{root};
  while (!parents.empty()) {
    const pid_t parent = parents.back();
    parents.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      if (!zombies.contains(it->second)) {
        found.push_back(it->second);
      }
      parents.push_back(it->second);
    }
  }
  return found;
}

size_t signal_descendants(int number, std::set<pid_t>* skip) {
  const std::vector<pid_t> found = living_descendants();
  const std::set<pid_t> ours(found.begin(), found.end());
  size_t signalled = 0;
  for (const pid_t pid : found) {
    if (skip != nullptr && !skip->insert(pid).second) {
      continue;
    }
    const UniqueFd pidfd(pidfd_open(pid));
    if (!pidfd) {
      continue;  // ended meanwhile
    }
    // The pidfd holds the process that has this pid now: it is ours when its
    // parent still is (or is this process, after a re-parenting).
    ProcessState state;
    if (read_state(pid, state) && state.state != 'Z' &&
        (state.parent == ::getpid() || ours.contains(state.parent)) &&
        pidfd_send_signal(pidfd.get(), number) == 0) {
      ++signalled;
    }
  }
  return signalled;
}

void stop_descendants(std::chrono::milliseconds grace, bool reap) {
  if (reap) {
    reap_own_children();
  }
  std::set<pid_t> terminated;
  if (signal_descendants(SIGTERM, &terminated) == 0) {
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    if (reap) {
      reap_own_children();
    }
    if (living_descendants().empty()) {
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    // A descendant started after the first round gets its SIGTERM too (once).
    signal_descendants(SIGTERM, &terminated);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Again while any is left: one may have forked between scan and signal.
  for (int round = 0; round < 50 && signal_descendants(SIGKILL, nullptr) > 0; ++round) {
    if (reap) {
      reap_own_children();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (reap) {
    reap_own_children();
  }
}

}  // namespace ascend_setup
