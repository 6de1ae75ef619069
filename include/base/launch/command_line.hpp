// The host's command line: `ascend-setup [HOST OPTIONS] [--] [SETUP.PY ARGUMENTS]`.
// Host options are recognised only before the first argument that is not one;
// everything after it (and after a `--`) goes to setup.py untouched.
#pragma once

#include "base/layer/build_mode.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

enum class DumpMode { none, rewritten, captured, diff };

// --list-env[=table|json]: the build-time environment, nothing built.
enum class ListEnv { none, table, json };

// --doctor[=text|json]: report every reason the tree does not fit the profile.
enum class DoctorMode { none, text, json };

// The patch engine on its own (setup.py is not run).
enum class PatchAction { none, apply, status, restore };

struct HostOptions {
  std::filesystem::path source_dir = ".";
  std::optional<std::filesystem::path> setup_py;
  std::optional<std::filesystem::path> profile;
  std::vector<std::filesystem::path> profile_dirs;  // --profile-dir, in order
  std::optional<std::filesystem::path> python;
  std::string log_level = "info";
  DumpMode dump = DumpMode::none;
  ListEnv list_env = ListEnv::none;
  PatchAction patch_action = PatchAction::none;
  bool force_patches = false;
  DoctorMode doctor = DoctorMode::none;
  bool allow_version_mismatch = false;  // a release build on another upstream version
  std::optional<BuildMode> mode;        // --dev / --release
  bool trust_source_dir = false;
  bool host_version = false;
  bool help = false;
  std::string help_text;  // filled when help is true
  std::vector<std::string> setup_args;
};

// Parses argv. The default log level comes from ASCEND_SETUP_LOG_LEVEL.
// Throws Error(ErrorKind::usage) with CLI11's message on a bad host option.
HostOptions parse_command_line(const std::vector<std::string>& argv);

}  // namespace ascend_setup
