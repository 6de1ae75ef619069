// Stop signals (SIGINT, SIGTERM, SIGHUP). The handler notes the first one,
// sends SIGTERM to every registered child process group, calls the stop hook
// (the embedded Python's KeyboardInterrupt) and wakes the stopper thread,
// which ends every other descendant (descendants.hpp: started through
// os.system, os.posix_spawn, a double fork; this process is their subreaper)
// with SIGTERM, then SIGKILL after the grace. The handler never exits itself,
// so that the run unwinds: transactions roll back, scratch directories go. On
// the way out, stop_children() gives the children a short grace, then KILLs
// them and every remaining descendant, and the exit code is 128 + the signal
// number (130, 143, 129). Blocking calls see EINTR (no SA_RESTART) and call
// throw_if_stopped().
//
// Before the handlers exist: the launcher blocks the stop signals first thing
// and starts the host with them blocked (in process, or across an exec); the host installs its
// handlers, then unblocks them, so one that came in between is handled (exit 128 + signal) before
// anything is done. A launcher that ends without exec checks pending_stop_signal().
#pragma once

#include <pthread.h>
#include <signal.h>

namespace ascend_setup {

// The stop signals: SIGINT, SIGTERM, SIGHUP.
sigset_t stop_signal_set();

// Blocks the stop signals in the calling thread for the object's life, then
// restores its mask: a thread started meanwhile inherits the block, so the
// stop signals reach the main thread (whose blocking calls they interrupt),
// never a helper thread.
class StopSignalsBlocked {
 public:
  StopSignalsBlocked();
  ~StopSignalsBlocked();
  StopSignalsBlocked(const StopSignalsBlocked&) = delete;
  StopSignalsBlocked& operator=(const StopSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// Installs the handler for each stop signal that is not ignored (a
// background job keeps ignoring SIGINT, as shells expect), then unblocks
// them; SIGPIPE is ignored (a write to a stopped child fails with EPIPE
// instead of ending the run). The first call also makes this process a child
// subreaper and starts the stopper thread.
void install_stop_signal_handlers();

// For the launcher: the stop signals stay pending (across exec) until the
// host's handlers are installed.
void block_stop_signals();
int pending_stop_signal();  // a blocked stop signal that arrived, else 0

int stop_signal();        // 0 while no stop signal arrived, else its number
int stopped_exit_code();  // 128 + stop_signal(), or 130 when none arrived
void throw_if_stopped();  // Error("interrupted by SIGTERM", 143) once one arrived

// Called from the signal handler: must be async-signal-safe; nullptr for none.
// Called at once when a stop signal already arrived.
void set_stop_hook(void (*hook)());

// While it lives, a stop ends this thread's blocking system calls (EINTR)
// again and again until it is gone, not only the one the stop signal landed
// in: a call entered just after the signal (a libgit2 fetch reading from a
// server that sends nothing more) would otherwise wait for the server. For
// the threads of work that libraries block in and that a stop must end.
// The wake signal is unblocked in this thread while it lives, so a run whose
// parent started it with that signal blocked (the mask is inherited across
// exec) is still woken.
class StopWakesThisThread {
 public:
  StopWakesThisThread();
  ~StopWakesThisThread();
  StopWakesThisThread(const StopWakesThisThread&) = delete;
  StopWakesThisThread& operator=(const StopWakesThisThread&) = delete;

 private:
  pthread_t thread_;
  sigset_t previous_;  // this thread's mask before
};

// Children started in their own process group (pgid == pid) register here,
// so that a stop signal reaches everything they started.
void register_child_group(int pgid);
void forget_child_group(int pgid);

// SIGTERM to every registered group, up to a short grace for them to end
// (reaping those that are our children), then SIGKILL to what is left.
void stop_children();

}  // namespace ascend_setup
