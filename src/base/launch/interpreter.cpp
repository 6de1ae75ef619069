#include "base/launch/interpreter.hpp"

#include "base/layer/environment.hpp"
#include "base/process/process.hpp"
#include "base/util/error.hpp"

#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

namespace ascend_setup {

namespace fs = std::filesystem;

namespace {

bool is_elf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {};
  in.read(magic, sizeof magic);
  return in && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

// A venv's pyvenv.cfg: `home` (its base's bin directory) and `version` (or
// virtualenv's `version_info`). False when there is no such file.
bool read_pyvenv_cfg(const fs::path& executable, InterpreterInfo& info) {
  std::ifstream cfg(executable.parent_path().parent_path() / "pyvenv.cfg");
  if (!cfg) {
    return false;
  }
  static const std::regex entry(R"(^\s*([A-Za-z_]+)\s*=\s*(.*?)\s*$)");
  static const std::regex version(R"((\d+)\.(\d+)(\.\S*)?)");
  std::string line;
  std::optional<fs::path> home;
  std::string implementation = "cpython";
  while (std::getline(cfg, line)) {
    std::smatch match;
    if (!std::regex_match(line, match, entry)) {
      continue;
    }
    const std::string key = match[1].str();
    const std::string value = match[2].str();
    std::smatch number;
    if (key == "home") {
      home = value;
    } else if ((key == "version" || key == "version_info") && info.version.empty() &&
               std::regex_match(value, number, version)) {
      info.version = number[1].str() + "." + number[2].str();
    } else if (key == "implementation") {
      implementation = value;
      for (auto& c : implementation) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
  }
  if (!home || info.version.empty()) {
    info.version.clear();
    return false;
  }
  std::error_code ec;
  info.base_prefix = fs::weakly_canonical(*home, ec).parent_path();
  info.implementation = implementation;
  // A venv of a free-threaded build links (or copies) python3.13t.
  const std::string target = fs::weakly_canonical(executable, ec).filename().string();
  info.free_threaded = std::regex_match(target, std::regex(R"(python\d+\.\d+t)"));
  return true;
}

// An interpreter binary named pythonX.Y[t] (what python3 and a venv's
// python link to): its installation is the parent of its bin directory.
bool read_binary_name(const fs::path& executable, InterpreterInfo& info) {
  std::error_code ec;
  const fs::path real = fs::canonical(executable, ec);
  static const std::regex name(R"(python(\d+)\.(\d+)(t?))");
  std::smatch match;
  const std::string file = real.filename().string();
  if (ec || !std::regex_match(file, match, name) || !is_elf(real)) {
    return false;
  }
  info.version = match[1].str() + "." + match[2].str();
  info.free_threaded = match[3].length() > 0;
  info.base_prefix = real.parent_path().parent_path();
  info.implementation = "cpython";
  return true;
}

// Anything else is asked once (a pyenv shim resolves to the real program).
void ask_interpreter(InterpreterInfo& info) {
  const ProcessResult result =
      run_process({{info.executable.string(), "-I", "-S", "-c",
                    "import sys\n"
                    "print(sys.implementation.name, '%d.%d' % sys.version_info[:2], "
                    "getattr(sys, 'abiflags', ''), sep='\\n')\n"
                    "print(sys.base_prefix, sys.executable, sep='\\n')\n"},
                   {},
                   {},
                   {}});
  std::vector<std::string> lines;
  std::istringstream out(result.out);
  for (std::string line; std::getline(out, line);) {
    lines.push_back(line);
  }
  if (result.exit_code != 0 || lines.size() != 5 ||
      !std::regex_match(lines[1], std::regex(R"(\d+\.\d+)"))) {
    throw Error(info.origin + " names " + info.executable.string() +
                ", which does not run as a Python interpreter (exit code " +
                std::to_string(result.exit_code) + ")");
  }
  info.implementation = lines[0];
  info.version = lines[1];
  info.free_threaded = lines[2].find('t') != std::string::npos;
  info.base_prefix = lines[3];
  // A script in front of the interpreter (a pyenv shim): pose as the program it runs.
  if (!is_elf(info.executable) && !lines[4].empty()) {
    info.executable = lines[4];
  }
}

}  // namespace

std::optional<fs::path> find_on_path(const fs::path& name) {
  if (name.string().find('/') != std::string::npos) {
    return name;
  }
  const std::string path = env_value(EnvVar::path, nullptr).value_or("");
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const fs::path candidate = fs::path(path.substr(start, end - start)) / name;
    if (!fs::is_directory(candidate) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

InterpreterInfo resolve_interpreter(const std::optional<fs::path>& explicit_python) {
  InterpreterInfo info;
  if (explicit_python) {
    info.origin = "--python";
    info.executable = find_on_path(*explicit_python).value_or(*explicit_python);
  } else if (auto venv = env_value(EnvVar::virtual_env, nullptr); venv && !venv->empty()) {
    info.origin = "$VIRTUAL_ENV";
    info.executable = fs::path(*venv) / "bin" / "python";
  } else {
    info.origin = "python3 on PATH";
    auto found = find_on_path("python3");
    if (!found) {
      // No python3 on PATH (a minimal PATH): the build's default interpreter.
      info.origin = "the default interpreter";
      found = ASCEND_SETUP_DEFAULT_PYTHON;
    }
    info.executable = *found;
  }
  // Keep the path as given: a venv's python is a symlink, and resolving it
  // would lose the venv.
  info.executable = fs::absolute(info.executable);
  if (!fs::exists(info.executable) || fs::is_directory(info.executable) ||
      access(info.executable.c_str(), X_OK) != 0) {
    throw Error(info.origin + " names " + info.executable.string() +
                ", which is not an executable file");
  }
  if (!read_pyvenv_cfg(info.executable, info) && !read_binary_name(info.executable, info)) {
    ask_interpreter(info);
  }
  return info;
}

}  // namespace ascend_setup
