#include "base/launch/interpreter.hpp"

#include "base/layer/environment.hpp"
#include "base/process/process.hpp"
#include "base/util/elf_file.hpp"
#include "base/util/error.hpp"
#include "base/util/executable_search.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#include <unistd.h>

#include <regex>
#include <sstream>
#include <vector>

namespace ascend_setup {

namespace fs = std::filesystem;

namespace {

// A venv's pyvenv.cfg: `home` (its base's bin directory) and `version` (or
// virtualenv's `version_info`). False when there is no such file or it
// lacks either.
bool read_pyvenv_cfg(const fs::path& executable, InterpreterInfo& info) {
  const auto text = read_whole_file(executable.parent_path().parent_path() / "pyvenv.cfg");
  const PyvenvCfg cfg = text ? parse_pyvenv_cfg(*text) : PyvenvCfg{};
  if (!cfg.home || cfg.version.empty()) {
    return false;
  }
  info.version = cfg.version;
  std::error_code ec;
  info.base_prefix = fs::weakly_canonical(*cfg.home, ec).parent_path();
  info.implementation = cfg.implementation;
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
  if (ec || !std::regex_match(file, match, name) || !is_elf_file(real)) {
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
                    std::to_string(result.exit_code) + ")",
                ErrorKind::bad_input);
  }
  info.implementation = lines[0];
  info.version = lines[1];
  info.free_threaded = lines[2].find('t') != std::string::npos;
  info.base_prefix = lines[3];
  // A script in front of the interpreter (a pyenv shim): pose as the program it runs.
  if (!is_elf_file(info.executable) && !lines[4].empty()) {
    info.executable = lines[4];
  }
}

}  // namespace

PyvenvCfg parse_pyvenv_cfg(std::string_view text) {
  PyvenvCfg cfg;
  // Lines end at \n, \r or \r\n, as Python's site.py reads the file
  // (universal newlines).
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find_first_of("\r\n", at), text.size());
    const std::string line = trim(text.substr(at, end - at), " \t\v\f");
    at = end + 1;
    const size_t equals = line.find('=');
    if (equals == std::string::npos) {
      continue;
    }
    const std::string key = trim(std::string_view(line).substr(0, equals), " \t");
    const std::string value = trim(std::string_view(line).substr(equals + 1), " \t");
    if (key.empty() ||
        key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_") !=
            std::string::npos) {
      continue;
    }
    if (key == "home") {
      cfg.home = value;
    } else if ((key == "version" || key == "version_info") && cfg.version.empty()) {
      // "X.Y" or "X.Y.<anything without blanks>"
      const std::string_view major = leading_digits(value);
      const std::string_view after = std::string_view(value).substr(major.size());
      const std::string_view minor = after.starts_with('.') ? leading_digits(after.substr(1)) : "";
      const std::string_view rest = after.substr(std::min(after.size(), minor.size() + 1));
      if (!major.empty() && !minor.empty() && (rest.empty() || rest.front() == '.') &&
          rest.find_first_of(" \t\r\v\f") == std::string_view::npos) {
        cfg.version = std::string(major) + "." + std::string(minor);
      }
    } else if (key == "implementation" && !value.empty()) {
      cfg.implementation = value;
      for (auto& c : cfg.implementation) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
  }
  return cfg;
}

InterpreterInfo resolve_interpreter(const std::optional<fs::path>& explicit_python) {
  InterpreterInfo info;
  if (explicit_python) {
    info.origin = "--python";
    info.executable = find_executable(explicit_python->string(), env_value(EnvVar::path, nullptr))
                          .value_or(*explicit_python);
  } else if (auto venv = env_value(EnvVar::virtual_env, nullptr); venv && !venv->empty()) {
    info.origin = "$VIRTUAL_ENV";
    info.executable = fs::path(*venv) / "bin" / "python";
  } else {
    info.origin = "python3 on PATH";
    auto found = find_executable("python3", env_value(EnvVar::path, nullptr));
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
    throw Error(
        info.origin + " names " + info.executable.string() + ", which is not an executable file",
        ErrorKind::bad_input);
  }
  if (!read_pyvenv_cfg(info.executable, info) && !read_binary_name(info.executable, info)) {
    ask_interpreter(info);
  }
  return info;
}

}  // namespace ascend_setup
