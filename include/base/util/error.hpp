// The one way ascend-setup reports a failure: an Error carries the message the
// user reads (one line, no "error:" prefix) and its kind, named where the
// failure is seen (the constructor has no default), which decides the
// process exit code and whether the work is tried again (only network
// failures are). Errors are thrown from anywhere and caught once, in main().
#pragma once

#include <stdexcept>
#include <string>

namespace ascend_setup {

// Documented exit codes (README "Exit codes").
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int python_error = 1;  // an exception in Python code
inline constexpr int usage = 2;         // bad host command line
inline constexpr int bad_input = 3;     // tree, profile, interpreter, environment, disk, network
inline constexpr int upstream_mismatch = 4;  // setup.py lacks what the layer needs
inline constexpr int patch_conflict = 5;     // local edits overlap an Ascend patch hunk
inline constexpr int patch_stale = 6;        // a patch no longer fits upstream's committed files
inline constexpr int doctor_findings = 7;    // --doctor found reasons the tree does not fit
inline constexpr int internal = 70;          // ascend-setup's own fault (EX_SOFTWARE): a bug
inline constexpr int interrupted = 130;      // Ctrl-C
}  // namespace exit_code

// What went wrong, as the code that saw it knows it.
enum class ErrorKind {
  bad_input,          // the tree, a profile, an archive, the environment: exit 3
  local_io,           // this machine: a full disk, a permission, a failed write: exit 3
  network,            // a server or the way to it (proxy, TLS, DNS): exit 3, tried again
  usage,              // the host command line or a host variable: exit 2
  upstream_contract,  // setup.py lacks what the layer needs: exit 4
  python,             // Python code or a build it ran failed: exit 1
  patch_conflict,     // exit 5
  patch_stale,        // exit 6
  stopped,            // a stop signal: exit 128 + its number
  internal,  // what cannot happen unless ascend-setup or a library it calls is wrong: exit 70
};

// The exit code of a kind (stopped: 130; a stop Error carries its own).
int exit_code_of(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  // The kind is always named where the failure is seen (no default).
  Error(const std::string& message, ErrorKind kind)
      : std::runtime_error(message), kind_(kind), exit_code_(exit_code_of(kind)) {}

  // The Error of a stop signal (128 + its number).
  static Error stopped(const std::string& message, int exit_code) {
    Error error(message, ErrorKind::stopped);
    error.exit_code_ = exit_code;
    return error;
  }

  ErrorKind kind() const noexcept { return kind_; }
  int exit_code() const noexcept { return exit_code_; }
  // Worth another attempt: the network may answer next time; nothing local is.
  bool retryable() const noexcept { return kind_ == ErrorKind::network; }

 private:
  ErrorKind kind_;
  int exit_code_;
};

inline int exit_code_of(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::bad_input:
    case ErrorKind::local_io:
    case ErrorKind::network:
      return exit_code::bad_input;
    case ErrorKind::usage:
      return exit_code::usage;
    case ErrorKind::upstream_contract:
      return exit_code::upstream_mismatch;
    case ErrorKind::python:
      return exit_code::python_error;
    case ErrorKind::patch_conflict:
      return exit_code::patch_conflict;
    case ErrorKind::patch_stale:
      return exit_code::patch_stale;
    case ErrorKind::stopped:
      return exit_code::interrupted;
    case ErrorKind::internal:
      return exit_code::internal;
  }
  return exit_code::bad_input;
}

}  // namespace ascend_setup
