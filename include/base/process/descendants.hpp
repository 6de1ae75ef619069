// Every process descended from this one, whoever started it (subprocess,
// os.system, os.posix_spawn, a double fork): this process becomes a child
// subreaper, so an orphaned descendant is re-parented to it rather than to
// init, and the descendants are found by following parent pids through /proc.
// Signals go through a pidfd opened before the parent pid is checked again,
// so a pid reused by a process that is not ours is never signalled.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace ascend_setup {

// What /proc/<pid>/stat says of a process: its state letter ('R', 'S', 'Z',
// ...) and its parent's pid.
struct ProcessState {
  pid_t parent = 0;
  char state = '?';
};

// The text of /proc/<pid>/stat, "pid (comm) state ppid ...", where comm may
// hold blanks and ')' (the last ')' ends it): its state and parent; nullopt
// for text of another shape (never throws).
std::optional<ProcessState> parse_proc_stat(std::string_view text);

// PR_SET_CHILD_SUBREAPER for this process (inherited by no one).
void become_subreaper();

// The living descendants of this process, or of `root` (zombies left out;
// their children are found through them), parents before their children.
std::vector<pid_t> living_descendants();
std::vector<pid_t> living_descendants(pid_t root);

// Sends `number` to every living descendant not in `skip` (each one signalled
// is added to it; nullptr: to all); returns how many were signalled.
size_t signal_descendants(int number, std::set<pid_t>* skip);

// SIGTERM to every descendant, up to `grace` for them to end (rescanning, so
// that one started meanwhile is found too), then SIGKILL to what is left.
// With `reap`, this process's own ended children are reaped as it goes (only
// when nothing else waits for them: not while Python's subprocess may).
void stop_descendants(std::chrono::milliseconds grace, bool reap);

}  // namespace ascend_setup
