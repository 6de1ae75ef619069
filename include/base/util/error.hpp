// The one way ascend-setup reports a failure: an Error carries the message the
// user reads (one line, no "error:" prefix) and the process exit code. Errors
// are thrown from anywhere and caught once, in main().
#pragma once

#include <stdexcept>
#include <string>

namespace ascend_setup {

// Documented exit codes (README "Exit codes").
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int python_error = 1;       // an exception in Python code
inline constexpr int usage = 2;              // bad host command line
inline constexpr int bad_input = 3;          // tree, profile, interpreter, environment
inline constexpr int upstream_mismatch = 4;  // setup.py lacks what the layer needs
inline constexpr int patch_conflict = 5;     // local edits overlap an Ascend patch hunk
inline constexpr int patch_stale = 6;        // a patch no longer fits upstream's committed files
inline constexpr int doctor_findings = 7;    // --doctor found reasons the tree does not fit
inline constexpr int interrupted = 130;      // Ctrl-C
}  // namespace exit_code

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = exit_code::bad_input)
      : std::runtime_error(message), exit_code_(exit_code) {}

  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace ascend_setup
