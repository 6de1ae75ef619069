#include "base/launch/command_line.hpp"

#include "base/layer/environment.hpp"
#include "base/util/error.hpp"

#include <CLI/CLI.hpp>

namespace ascend_setup {

namespace {

// A path option means what it says in the directory the user ran the command
// in: made absolute before anything changes directory (-C, the host's move
// into setup.py's directory). Empty stays empty (an option's own check).
std::filesystem::path from_here(const std::string& path) {
  return path.empty() ? std::filesystem::path() : std::filesystem::absolute(path);
}

// Help for a flag with an optional "=MODE" reads `--dump-kwargs[=MODE]`: CLI11
// would print the default inside the name (`--dump-kwargs{rewritten}`) and the
// allowed values after it; the modes are listed in each description instead.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool positional) const override {
    std::string name = CLI::Formatter::make_option_name(option, positional);
    const auto open = name.find('{');
    const auto close = name.find('}', open);
    if (open != std::string::npos && close != std::string::npos) {
      name.replace(open, close - open + 1, "[=MODE]");
    }
    return name;
  }
  // An option's value name alone (`--log-level LEVEL`): the allowed values are
  // in its description, not appended as ":{...}".
  std::string make_option_opts(const CLI::Option* option) const override {
    if (has_mode(option)) {
      return "";
    }
    std::string opts = CLI::Formatter::make_option_opts(option);
    const auto open = opts.find(":{");
    const auto close = opts.find('}', open);
    if (open != std::string::npos && close != std::string::npos) {
      opts.erase(open, close - open + 1);
    }
    return opts;
  }

 private:
  static bool has_mode(const CLI::Option* option) {
    return option->get_name(false, true).find('{') != std::string::npos;
  }
};

}  // namespace

HostOptions parse_command_line(const std::vector<std::string>& argv) {
  HostOptions options;
  options.log_level = env_value(EnvVar::log_level, nullptr).value_or("info");

  CLI::App app{
      "ascend-setup: the Ascend build entry of triton-ascend. Runs upstream's setup.py with "
      "the Ascend layer applied; every argument after the host options goes to setup.py "
      "(setup.py's own help: ascend-setup -- --help).",
      "ascend-setup"};
  // Stop at the first argument that is not a host option: the rest is setup.py's.
  app.prefix_command();
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("--help", "Print this help (setup.py's help: ascend-setup -- --help)");

  std::string source_dir;
  std::string setup_py;
  std::string profile;
  std::string python;
  std::string dump;
  app.add_option("-C,--source-dir", source_dir, "Source tree to build (default: current directory)")
      ->type_name("DIR");
  app.add_option("--setup-py", setup_py,
                 "Upstream setup.py to run (default: <source dir>/setup.py)")
      ->type_name("FILE");
  app.add_option("--profile", profile,
                 "Version profile (default: <source dir>/ascend-setup.toml, else the one the "
                 "tree's upstream version picks among --profile-dir's and the built-in ones)")
      ->type_name("FILE");
  app.add_option("--profile-dir", options.profile_dirs,
                 "A directory of version profiles (*.toml) to choose from before the built-in "
                 "ones; repeatable")
      ->type_name("DIR");
  app.add_option("--python", python,
                 "Python interpreter to run setup.py with (default: $VIRTUAL_ENV's python, "
                 "else python3 on PATH, else the one ascend-setup was built for)")
      ->type_name("PATH");
  app.add_option("--log-level", options.log_level,
                 "trace|debug|info|warn|error (default: $ASCEND_SETUP_LOG_LEVEL or info)")
      ->type_name("LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  // A flag with an optional "=MODE": it never takes the next argument, which is setup.py's.
  app.add_flag("--dump-kwargs{rewritten}", dump,
               "Print setup()'s kwargs as JSON and run nothing: "
               "--dump-kwargs[=rewritten|captured|diff]")
      ->check(CLI::IsMember({"rewritten", "captured", "diff"}));
  std::string list_env;
  app.add_flag("--list-env{table}", list_env,
               "Print every build-time environment variable (value, default, who set it, who "
               "reads it) and run nothing: --list-env[=table|json]")
      ->check(CLI::IsMember({"table", "json"}));
  std::string doctor;
  auto* doctor_flag =
      app.add_flag("--doctor{text}", doctor,
                   "Report every reason the tree does not fit the profile, write nothing: "
                   "--doctor[=text|json]; exit 0 when healthy, 7 otherwise");
  doctor_flag->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--allow-version-mismatch", options.allow_version_mismatch,
               "Let a release build run upstream's setup.py of another version than the "
               "profile's");
  bool apply_patches = false;
  bool patch_status = false;
  bool restore_sources = false;
  bool dev = false;
  bool release = false;
  auto* apply_flag =
      app.add_flag("--apply-patches", apply_patches,
                   "Bring the tree to 'patched for this mode' and stop (setup.py is not run)");
  auto* status_flag = app.add_flag(
      "--patch-status", patch_status,
      "Print the state of every patched file and patch; exit 0 when patched for this mode, "
      "1 otherwise");
  auto* restore_flag =
      app.add_flag("--restore-sources", restore_sources,
                   "Return every patched file to its unpatched content, keeping your own edits");
  apply_flag->excludes(status_flag)->excludes(restore_flag)->excludes(doctor_flag);
  doctor_flag->excludes(status_flag)->excludes(restore_flag);
  status_flag->excludes(restore_flag);
  app.add_flag("--force-patches", options.force_patches,
               "When your edits overlap a patch hunk, save those files under "
               "build/ascend-setup/patches/saved and patch the committed ones");
  auto* dev_flag = app.add_flag("--dev", dev,
                                "Dev build: apply the dev patch too "
                                "(as TRITON_DEV_MODE=1)");
  auto* release_flag =
      app.add_flag("--release", release, "Release build: no dev patch (as TRITON_RELEASE_MODE=1)");
  dev_flag->excludes(release_flag);
  app.add_flag("--trust-source-dir", options.trust_source_dir,
               "Read a git checkout owned by another user (this process only)");
  app.add_flag(
      "--host-version", options.host_version,
      "Print ascend-setup's version, the CPython minors it serves and the libraries it links");

  std::vector<std::string> reversed(argv.rbegin(), argv.rend() - (argv.empty() ? 0 : 1));
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    options.help = true;
    options.help_text = app.help();
    return options;
  } catch (const CLI::ParseError& error) {
    throw Error(std::string(error.what()) + " (see ascend-setup --help)", ErrorKind::usage);
  }

  if (!source_dir.empty()) {
    options.source_dir = from_here(source_dir);
  }
  if (!setup_py.empty()) {
    options.setup_py = from_here(setup_py);
  }
  if (!profile.empty()) {
    options.profile = from_here(profile);
  }
  for (auto& dir : options.profile_dirs) {
    dir = from_here(dir.string());
  }
  // A name without a slash is looked up on PATH, as a shell would.
  if (!python.empty()) {
    options.python =
        python.find('/') == std::string::npos ? std::filesystem::path(python) : from_here(python);
  }
  if (dump == "rewritten") {
    options.dump = DumpMode::rewritten;
  } else if (dump == "captured") {
    options.dump = DumpMode::captured;
  } else if (dump == "diff") {
    options.dump = DumpMode::diff;
  }
  options.list_env = list_env == "table"  ? ListEnv::table
                     : list_env == "json" ? ListEnv::json
                                          : ListEnv::none;
  options.doctor = doctor == "text"   ? DoctorMode::text
                   : doctor == "json" ? DoctorMode::json
                                      : DoctorMode::none;
  options.patch_action = apply_patches     ? PatchAction::apply
                         : patch_status    ? PatchAction::status
                         : restore_sources ? PatchAction::restore
                                           : PatchAction::none;
  if (dev || release) {
    options.mode = dev ? BuildMode::dev : BuildMode::release;
  }
  options.setup_args = app.remaining();
  if (!options.setup_args.empty() && options.setup_args.front() == "--") {
    options.setup_args.erase(options.setup_args.begin());
  }
  return options;
}

}  // namespace ascend_setup
