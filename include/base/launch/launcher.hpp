// The `ascend-setup` command (no libpython in it): resolves the interpreter
// (interpreter.hpp), picks the host executable built for that interpreter's
// major.minor from the host manifest and execs it. A host is
// `ascend-setup-host-X.Y[-static]` in `libexec/ascend-setup/` next to the
// launcher (build tree) or beside its bin/ directory (installed), listed in
// that directory's `hosts.txt`, one `VERSION FILE [PREFIX]` line per host:
// a host with a PREFIX is linked statically against that installation's
// libpython and serves only it; a host without one is linked against a shared
// libpythonX.Y and serves every installation of that minor that has one (the
// launcher points LD_LIBRARY_PATH at it, so each installation runs on its own
// libpython and finds its own stdlib and site-packages).
#pragma once

#include "base/launch/command_line.hpp"
#include "base/launch/interpreter.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

// Environment the launcher hands to the host: the interpreter to pose as,
// and LD_LIBRARY_PATH's value before the launcher changed it ("=VALUE", or
// "" when it was unset); the host reads and removes both.
inline constexpr const char* interpreter_env = "ASCEND_SETUP_INTERPRETER";
inline constexpr const char* saved_library_path_env = "ASCEND_SETUP_SAVED_LD_LIBRARY_PATH";

// Reads one of the launcher's hand-off variables (these and LD_LIBRARY_PATH
// are process plumbing, not build-time environment: not in the registry).
std::optional<std::string> handoff_env(const char* name);

struct HostEntry {
  std::string version;                          // "3.11"
  std::string file;                             // relative to the manifest's directory
  std::optional<std::filesystem::path> prefix;  // a static host's installation
};

// The hosts of this build/installation; throws Error when there is no manifest.
std::filesystem::path host_directory();
std::vector<HostEntry> read_host_manifest(const std::filesystem::path& directory);

struct HostChoice {
  std::filesystem::path host;
  std::optional<std::filesystem::path> library_dir;  // where its libpython is, for LD_LIBRARY_PATH
};

// The host serving `interpreter`; Error (exit 3) naming the supported
// versions and how to add one when none can.
HostChoice choose_host(const std::vector<HostEntry>& hosts, const std::filesystem::path& directory,
                       const InterpreterInfo& interpreter);

// "3.10, 3.11 (static for /usr), ..." for messages and --host-version.
std::string describe_hosts(const std::vector<HostEntry>& hosts);

// The whole launcher: --help and --host-version answered here, everything
// else exec'ed in the chosen host with the original arguments. Returns only
// on --help/--host-version; throws Error otherwise.
int launch(const HostOptions& options, const std::vector<std::string>& argv);

}  // namespace ascend_setup
