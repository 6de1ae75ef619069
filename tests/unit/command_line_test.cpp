#include "base/launch/command_line.hpp"

#include "base/util/error.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;

namespace {
HostOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ascend-setup");
  return parse_command_line(args);
}
using Args = std::vector<std::string>;
}  // namespace

TEST(CommandLine, EverythingAfterHostOptionsGoesToSetupPy) {
  const HostOptions options = parse({"-C", "tree", "bdist_wheel", "--dist-dir", "out", "-C", "x"});
  EXPECT_EQ(options.source_dir, std::filesystem::current_path() / "tree");
  EXPECT_EQ(options.setup_args, (Args{"bdist_wheel", "--dist-dir", "out", "-C", "x"}));
}

// Every path option is relative to the directory the command runs in, made
// absolute before -C changes directory; a --python without a slash is a
// name looked up on PATH.
TEST(CommandLine, RelativePathOptionsAreTheUsersDirectorys) {
  const std::filesystem::path here = std::filesystem::current_path();
  const HostOptions options =
      parse({"-C", "t", "--setup-py", "s/setup.py", "--profile", "mine.toml", "--profile-dir", "a",
             "--profile-dir", "/abs", "--python", "venv/bin/python"});
  EXPECT_EQ(options.source_dir, here / "t");
  EXPECT_EQ(options.setup_py, here / "s/setup.py");
  EXPECT_EQ(options.profile, here / "mine.toml");
  EXPECT_EQ(options.profile_dirs, (std::vector<std::filesystem::path>{here / "a", "/abs"}));
  EXPECT_EQ(options.python, here / "venv/bin/python");
  EXPECT_EQ(parse({"--python", "python3.11"}).python, std::filesystem::path("python3.11"));
}

TEST(CommandLine, SetupPyGlobalOptionsPassThrough) {
  EXPECT_EQ(parse({"--version"}).setup_args, Args{"--version"});
  EXPECT_EQ(parse({"-q", "build"}).setup_args, (Args{"-q", "build"}));
  EXPECT_EQ(parse({"--help-commands"}).setup_args, Args{"--help-commands"});
  EXPECT_EQ(parse({"bdist_wheel", "--help"}).setup_args, (Args{"bdist_wheel", "--help"}));
}

TEST(CommandLine, DoubleDashEndsHostOptions) {
  const HostOptions options = parse({"--log-level", "debug", "--", "--help"});
  EXPECT_EQ(options.log_level, "debug");
  EXPECT_FALSE(options.help);
  EXPECT_EQ(options.setup_args, Args{"--help"});
}

TEST(CommandLine, HostHelp) {
  const HostOptions options = parse({"--help"});
  EXPECT_TRUE(options.help);
  EXPECT_NE(options.help_text.find("ascend-setup -- --help"), std::string::npos);
  // Modes are shown as "[=MODE]" and listed in the description, not as CLI11's
  // "{default}" and ":{...}"; --python's default is the one the launcher uses.
  const std::string& help = options.help_text;
  EXPECT_NE(help.find("--dump-kwargs[=MODE]"), std::string::npos) << help;
  EXPECT_NE(help.find("--doctor[=MODE]"), std::string::npos) << help;
  EXPECT_EQ(help.find('{'), std::string::npos) << help;
  EXPECT_EQ(help.find(":{"), std::string::npos) << help;
  EXPECT_NE(help.find("$VIRTUAL_ENV's python, else python3 on PATH"), std::string::npos) << help;
  EXPECT_NE(help.find("--log-level LEVEL"), std::string::npos) << help;
  EXPECT_NE(help.find("-C,--source-dir DIR"), std::string::npos) << help;
}

TEST(CommandLine, DumpKwargsModesNeverTakeTheNextArgument) {
  EXPECT_EQ(parse({"--dump-kwargs"}).dump, DumpMode::rewritten);
  EXPECT_EQ(parse({"--dump-kwargs=captured"}).dump, DumpMode::captured);
  EXPECT_EQ(parse({"--dump-kwargs=diff"}).dump, DumpMode::diff);
  const HostOptions options = parse({"--dump-kwargs", "bdist_wheel"});
  EXPECT_EQ(options.dump, DumpMode::rewritten);
  EXPECT_EQ(options.setup_args, Args{"bdist_wheel"});
  EXPECT_EQ(parse({}).dump, DumpMode::none);
}

TEST(CommandLine, BadHostOptionValueIsAUsageError) {
  try {
    parse({"--dump-kwargs=everything"});
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(error.what()).find("everything"), std::string::npos);
  }
  EXPECT_THROW(parse({"--log-level", "loud"}), Error);
  EXPECT_THROW(parse({"--profile"}), Error);
}

TEST(CommandLine, AllHostOptions) {
  const HostOptions options =
      parse({"--source-dir=src", "--setup-py", "up.py", "--profile", "p.toml", "--python",
             "/venv/bin/python", "--trust-source-dir", "--host-version", "install"});
  const std::filesystem::path here = std::filesystem::current_path();
  EXPECT_EQ(options.source_dir, here / "src");
  EXPECT_EQ(options.setup_py, here / "up.py");
  EXPECT_EQ(options.profile, here / "p.toml");
  EXPECT_EQ(options.python, "/venv/bin/python");
  EXPECT_TRUE(options.trust_source_dir);
  EXPECT_TRUE(options.host_version);
  EXPECT_EQ(options.setup_args, Args{"install"});
}

TEST(CommandLine, LogLevelDefaultsFromEnvironment) {
  setenv("ASCEND_SETUP_LOG_LEVEL", "warn", 1);
  EXPECT_EQ(parse({}).log_level, "warn");
  EXPECT_EQ(parse({"--log-level=error"}).log_level, "error");
  unsetenv("ASCEND_SETUP_LOG_LEVEL");
}

TEST(CommandLine, PatchOptionsAndMode) {
  EXPECT_EQ(parse({}).patch_action, PatchAction::none);
  EXPECT_EQ(parse({"--apply-patches"}).patch_action, PatchAction::apply);
  EXPECT_EQ(parse({"--patch-status"}).patch_action, PatchAction::status);
  const HostOptions restore = parse({"--force-patches", "--restore-sources"});
  EXPECT_EQ(restore.patch_action, PatchAction::restore);
  EXPECT_TRUE(restore.force_patches);
  EXPECT_FALSE(parse({}).mode.has_value());
  EXPECT_EQ(parse({"--dev", "bdist_wheel"}).mode, BuildMode::dev);
  const HostOptions release = parse({"--release", "bdist_wheel", "--release"});
  EXPECT_EQ(release.mode, BuildMode::release);
  EXPECT_EQ(release.setup_args, (Args{"bdist_wheel", "--release"}));
  for (const Args& args : {Args{"--dev", "--release"}, Args{"--patch-status", "--apply-patches"},
                           Args{"--restore-sources", "--patch-status"}}) {
    try {
      parse(args);
      ADD_FAILURE() << args[0] << " " << args[1] << " accepted together";
    } catch (const Error& error) {
      EXPECT_EQ(error.exit_code(), exit_code::usage);
    }
  }
}
