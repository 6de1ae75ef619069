#include "base/launch/launcher.hpp"

#include "base/launch/linked_libraries.hpp"
#include "base/util/elf_file.hpp"
#include "base/util/error.hpp"
#include "base/util/strings.hpp"

#include <dlfcn.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace ascend_setup {

namespace fs = std::filesystem;

namespace {

// An installation's libpythonX.Y.so.1.0 (pyenv: lib/, Debian: the multiarch
// directory), or nullopt for a static interpreter.
std::optional<fs::path> shared_libpython(const fs::path& prefix, const std::string& version) {
  const std::string name = "libpython" + version + ".so.1.0";
  for (const fs::path& dir :
       {prefix / "lib", prefix / "lib64", prefix / "lib" / ASCEND_SETUP_MULTIARCH}) {
    if (fs::exists(dir / name)) {
      return dir / name;
    }
  }
  return std::nullopt;
}

// Whether the interpreter's executable loads the shared libpython (names it
// in its dynamic section) rather than carrying the interpreter itself. An
// executable that cannot be read as ELF (a script in front of it) counts as
// loading it, so that the start stays the embedded one where it was.
bool runs_on_libpython(const InterpreterInfo& interpreter) {
  std::error_code ec;
  const fs::path real = fs::canonical(interpreter.executable, ec);
  const auto needed = ec ? std::nullopt : elf_needed_of_file(real);
  if (!needed) {
    return true;
  }
  const std::string prefix = "libpython" + interpreter.version + ".so";
  return std::any_of(needed->begin(), needed->end(),
                     [&](const std::string& name) { return name.starts_with(prefix); });
}

// An AddressSanitizer build's module needs the sanitizer's runtime loaded
// first, which an interpreter started on its own does not have: such a build
// embeds wherever it can, and preloads the runtime (ASCEND_SETUP_ASAN_RUNTIME,
// found by CMake) into an interpreter without a shared libpython.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool instrumented = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool instrumented = true;
#else
constexpr bool instrumented = false;
#endif
#else
constexpr bool instrumented = false;
#endif

// Run by the static interpreter with `-c`: the host module imported from its
// file (nothing added to sys.path; the '' that -c put first taken off, as the
// embedded start has none) and run with the launcher's argv as bytes.
constexpr const char* extension_bootstrap =
    "import os, sys\n"
    "if not getattr(sys.flags, 'safe_path', False): del sys.path[0]\n"
    "from importlib.util import spec_from_file_location, module_from_spec\n"
    "module_from_spec(spec_from_file_location('_ascend_setup_host', sys.argv[1]))"
    ".run([os.fsencode(arg) for arg in sys.argv[2:]])\n";

// Runs `program` in this process with `argv` (argv[0] included, as given);
// when it cannot, the error says why and, when given, what to do.
[[noreturn]] void exec_or_throw(const fs::path& program, const std::vector<std::string>& argv,
                                const std::string& remedy = "") {
  std::vector<char*> args;
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  execv(program.c_str(), args.data());
  const int error_number = errno;
  throw Error("cannot run " + program.string() + ": " + std::strerror(error_number) +
                  (remedy.empty() ? "" : ": " + remedy),
              ErrorKind::bad_input);
}

// Loads the installation's libpython for every module loaded after it (the
// host module, then the extension modules of the stdlib and site-packages),
// then the host module, and runs the host in this process.
int run_embedded(const HostChoice& choice, const std::vector<std::string>& argv) {
  if (dlopen(choice.libpython->c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    throw Error("cannot load " + choice.libpython->string() + ": " + dlerror(),
                ErrorKind::bad_input);
  }
  void* module = dlopen(choice.host.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    throw Error("cannot load the host " + choice.host.string() + ": " + dlerror() +
                    ": reinstall ascend-setup",
                ErrorKind::bad_input);
  }
  using Main = int (*)(int, char**);
  auto main = reinterpret_cast<Main>(dlsym(module, "ascend_setup_embedded_main"));
  if (main == nullptr) {
    throw Error("the host " + choice.host.string() +
                    " has no ascend_setup_embedded_main: reinstall ascend-setup",
                ErrorKind::bad_input);
  }
  std::vector<char*> args;
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  return main(static_cast<int>(argv.size()), args.data());
}

std::string how_to_add() {
  return "to serve another CPython >= " ASCEND_SETUP_MIN_PYTHON
         " (not free-threaded), rebuild ascend-setup with "
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
  throw Error("no host modules next to " + self.string() +
                  " (libexec/ascend-setup/hosts.txt is missing): reinstall ascend-setup",
              ErrorKind::bad_input);
}

std::vector<HostEntry> read_host_manifest(const fs::path& directory) {
  std::ifstream in(directory / "hosts.txt");
  std::vector<HostEntry> hosts;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    HostEntry entry;
    if (line.empty() || line[0] == '#' || !(fields >> entry.version >> entry.file)) {
      continue;
    }
    hosts.push_back(entry);
  }
  if (hosts.empty()) {
    throw Error((directory / "hosts.txt").string() + " lists no host: reinstall ascend-setup",
                ErrorKind::bad_input);
  }
  return hosts;
}

std::string describe_hosts(const std::vector<HostEntry>& hosts) {
  std::vector<std::string> parts;
  for (const auto& host : hosts) {
    parts.push_back(host.version);
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
    throw Error(
        who + ", a " + interpreter.implementation + " interpreter: " + served + "; " + how_to_add(),
        ErrorKind::bad_input);
  }
  if (interpreter.free_threaded) {
    throw Error(who + ", a free-threaded CPython " + interpreter.version + ": " + served + "; " +
                    how_to_add(),
                ErrorKind::bad_input);
  }
  for (const auto& host : hosts) {
    if (host.version != interpreter.version) {
      continue;
    }
    const fs::path file = directory / host.file;
    const auto libpython = shared_libpython(interpreter.base_prefix, interpreter.version);
    if (!libpython) {
      return {file, HostStart::extension, std::nullopt,
              "no shared libpython" + interpreter.version + " under " +
                  interpreter.base_prefix.string()};
    }
    if (!instrumented && !runs_on_libpython(interpreter)) {
      return {file, HostStart::extension, std::nullopt,
              "its executable carries the interpreter; it does not load " + libpython->string()};
    }
    return {file, HostStart::embedded, libpython, ""};
  }
  throw Error(who + ", a CPython " + interpreter.version + ": " + served + "; " + how_to_add(),
              ErrorKind::bad_input);
}

std::string describe_start(const HostChoice& choice) {
  switch (choice.start) {
    case HostStart::embedded:
      return "embedded by the host " + choice.host.string() + " (libpython " +
             choice.libpython->string() + ")";
    case HostStart::extension:
      return "the host " + choice.host.string() + " as an extension module of the interpreter (" +
             choice.why + ")";
  }
  return "";
}

int launch(const HostOptions& options, const std::vector<std::string>& argv) {
  if (options.help) {
    std::cout << options.help_text;
    return exit_code::ok;
  }
  const fs::path directory = host_directory();
  if (options.patch_action != PatchAction::none) {
    // No Python: the program beside the hosts, which links what the patch
    // options need (libgit2 and the rest) so that this one does not.
    exec_or_throw(directory / patch_program, argv, "reinstall ascend-setup");
  }
  const std::vector<HostEntry> hosts = read_host_manifest(directory);
  if (options.host_version) {
    std::cout << "ascend-setup " << ASCEND_SETUP_VERSION << " (CPython " << describe_hosts(hosts)
              << ")\n";
    // The way a run would take with this command line's interpreter.
    try {
      const InterpreterInfo interpreter = resolve_interpreter(options.python);
      std::cout << interpreter.origin << ": CPython " << interpreter.version << " at "
                << interpreter.executable.string() << ", "
                << describe_start(choose_host(hosts, directory, interpreter)) << "\n";
    } catch (const Error& error) {
      std::cout << "not served: " << error.what() << "\n";
    }
    for (const LinkedLibrary& library : linked_libraries()) {
      std::cout << describe_linked_library(library) << "\n";
    }
    return exit_code::ok;
  }
  const InterpreterInfo interpreter = resolve_interpreter(options.python);
  const HostChoice choice = choose_host(hosts, directory, interpreter);
  ::setenv(interpreter_env, interpreter.executable.c_str(), 1);
  spdlog::debug("CPython {} at {} ({}): {}", interpreter.version, interpreter.executable.string(),
                interpreter.origin, describe_start(choice));
  if (choice.start == HostStart::embedded) {
    return run_embedded(choice, argv);
  }
  std::vector<std::string> args{interpreter.executable.string(), "-c", extension_bootstrap,
                                choice.host.string()};
  args.insert(args.end(), argv.begin(), argv.end());
#ifdef ASCEND_SETUP_ASAN_RUNTIME
  // The instrumented module needs the sanitizer's runtime loaded first.
  const char* preload = std::getenv("LD_PRELOAD");
  const std::string preloads =
      std::string(ASCEND_SETUP_ASAN_RUNTIME) + (preload && *preload ? std::string(":") + preload : "");
  ::setenv("LD_PRELOAD", preloads.c_str(), 1);
#endif
  exec_or_throw(interpreter.executable, args);
}

}  // namespace ascend_setup
