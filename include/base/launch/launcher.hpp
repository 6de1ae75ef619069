// The `ascend-setup` command (no libpython in it): resolves the interpreter
// (interpreter.hpp), picks the host built for that interpreter's major.minor
// from the host manifest, and starts it. The hosts are in
// `libexec/ascend-setup/` next to the launcher (build tree) or beside its
// bin/ directory (installed, the wheel included), listed in that directory's
// `hosts.txt`, one `VERSION FILE` line per host: `ascend-setup-host-X.Y.so`,
// the host module of a minor (no libpython in it), serves every installation
// of the minor, one of two ways:
// - embedded: when the interpreter's executable runs on the installation's
//   shared libpythonX.Y (it names the library: pyenv's, python.org's
//   --enable-shared builds), the launcher loads that library (RTLD_GLOBAL)
//   and the module into itself and calls the module's embedded main, so
//   each installation runs on its own libpython, prefix and site-packages;
// - as an extension module: when the executable carries the interpreter
//   itself (Debian's python3, built with LTO and PGO, even where
//   libpython3.X is installed too; conda's; manylinux's and other static
//   builds, which have no libpython at all), the launcher execs the
//   interpreter with a bootstrap that imports the module and runs the same
//   host in it: the interpreter's own code runs setup.py, as it runs any
//   script. A build instrumented with AddressSanitizer embeds wherever a
//   libpython exists: its module cannot load into an uninstrumented
//   interpreter.
// The patch options (--apply-patches, --patch-status, --restore-sources)
// need no Python: the launcher execs `ascend-setup-patches`, beside the
// hosts, which runs them. The launcher itself links only what choosing and
// starting a host needs (the build's ascend_setup_launch), so that its start
// loads none of the libraries a run on a tree needs (libgit2 and its
// dependencies: about 9 ms with Debian's shared libraries).
#pragma once

#include "base/launch/command_line.hpp"
#include "base/launch/interpreter.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

// Environment the launcher hands to the host: the interpreter to pose as;
// the host reads and removes it (process plumbing, not build-time
// environment: not in the registry).
inline constexpr const char* interpreter_env = "ASCEND_SETUP_INTERPRETER";

// The program of the patch options, in the hosts' directory.
inline constexpr const char* patch_program = "ascend-setup-patches";

// Reads one of the launcher's hand-off variables.
std::optional<std::string> handoff_env(const char* name);

struct HostEntry {
  std::string version;  // "3.11"
  std::string file;     // relative to the manifest's directory
};

// The hosts of this build/installation; throws Error when there is no manifest.
std::filesystem::path host_directory();
std::vector<HostEntry> read_host_manifest(const std::filesystem::path& directory);

// How a run starts its host module.
enum class HostStart {
  embedded,   // load libpython and the host module into the launcher
  extension,  // exec the interpreter, which imports the host module
};

struct HostChoice {
  std::filesystem::path host;
  HostStart start = HostStart::embedded;
  std::optional<std::filesystem::path> libpython;  // embedded: the installation's own
  std::string why;  // extension: why not embedded ("no shared libpython3.13 under ...")
};

// The host serving `interpreter`; Error (exit 3) naming the supported
// versions and how to add one when none can.
HostChoice choose_host(const std::vector<HostEntry>& hosts, const std::filesystem::path& directory,
                       const InterpreterInfo& interpreter);

// "3.10, 3.11, ..." for messages and --host-version.
std::string describe_hosts(const std::vector<HostEntry>& hosts);

// "embedded (libpython /usr/lib/.../libpython3.11.so.1.0)", "as an extension
// module of the interpreter (no shared libpython3.13)", ...: the way a run
// takes, for --host-version and the debug log.
std::string describe_start(const HostChoice& choice);

// The whole launcher: --help and --host-version answered here, the patch
// options run here, everything else handed to the chosen host with the
// original arguments. Returns the exit code of what ran in this process;
// throws Error when no host can serve.
int launch(const HostOptions& options, const std::vector<std::string>& argv);

}  // namespace ascend_setup
