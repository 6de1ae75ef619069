// The built ascend-setup binary on copies of the example tree: what users
// and CI see (stdout, stderr, exit codes).
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;
using ascend_setup::ProcessResult;
namespace code = ascend_setup::exit_code;

namespace {

class HostTest : public ExampleTreeTest {
 protected:
  nlohmann::ordered_json dump(const std::string& mode = "") {
    const ProcessResult result = host({mode.empty() ? "--dump-kwargs" : "--dump-kwargs=" + mode});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return parse_json(result.out);
  }
  ProcessResult python_setup_py(const std::vector<std::string>& args) {
    std::vector<std::string> argv{SYSTEM_PYTHON, "setup.py"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ascend_setup::run_process({argv, tree, env, {}});
  }
};

}  // namespace

TEST_F(HostTest, DumpShowsTheAscendLayer) {
  const auto kwargs = dump();
  EXPECT_EQ(kwargs["name"], "triton_ascend");
  EXPECT_EQ(kwargs["version"], "3.6.0");  // not a git checkout: no hash
  EXPECT_EQ(kwargs["url"], "https://gitcode.com/Ascend/triton-ascend/");
  EXPECT_EQ(kwargs["long_description"], read_file(tree / "README.md"));
  EXPECT_EQ(kwargs["long_description_content_type"], "text/markdown");
  const auto& requires_ = kwargs["install_requires"];
  ASSERT_EQ(requires_.size(), 12u);
  EXPECT_EQ(requires_.front(), "attrs==24.2.0");
  EXPECT_EQ(requires_.back(), "triton==3.6.0");
  EXPECT_EQ(kwargs["entry_points"]["triton.backends"][0], "ascend = triton.backends.ascend");
  EXPECT_EQ(kwargs["entry_points"]["triton.backends"].size(), 3u);
  EXPECT_EQ(kwargs["package_dir"]["triton.backends.ascend"], "third_party/ascend/backend");
  EXPECT_EQ(kwargs["package_dir"]["triton.language.extra.cann"],
            "third_party/ascend/language/cann");
  const auto& packages = kwargs["packages"];
  EXPECT_NE(std::find(packages.begin(), packages.end(), "triton.backends.ascend"), packages.end());
  EXPECT_EQ(kwargs["cmdclass"]["build_ext"], "__main__.CMakeBuild");
  EXPECT_EQ(kwargs["cmdclass"]["bdist_wheel"], "__main__.BuildWheel");
  EXPECT_EQ(kwargs["cmdclass"]["sdist"], "__main__.Sdist");  // upstream's, recording git's facts
  EXPECT_EQ(kwargs["cmdclass"]["egg_info"], "__main__.EggInfo");
  // The setup_ascend.py layer has no BishengIR payload: upstream's build_py stays.
  EXPECT_EQ(kwargs["cmdclass"]["build_py"], "__main__.CMakeBuildPy");
  EXPECT_EQ(kwargs["ext_modules"][0]["__class__"], "__main__.CMakeExtension");
  EXPECT_FALSE(kwargs.contains("package_data"));
  // Upstream's keys keep their order; the layer's new key comes last.
  std::vector<std::string> keys;
  for (const auto& [key, value] : kwargs.items()) keys.push_back(key);
  EXPECT_EQ(keys.front(), "name");
  EXPECT_EQ(keys[1], "version");
  EXPECT_EQ(keys.back(), "long_description_content_type");
}

TEST_F(HostTest, DumpVersionCarriesTheGitHash) {
  make_git_repo(tree, dir.path());
  const std::string short_id = must_run({"git", "rev-parse", "--short=8", "HEAD"}, tree, env);
  EXPECT_EQ(dump()["version"], "3.6.0+git" + short_id.substr(0, 8));
  env["IS_MANYLINUX"] = "1";
  EXPECT_EQ(dump()["version"], "3.6.0");
}

TEST_F(HostTest, DumpCapturedIsUpstreamsAndDiffIsTheLayer) {
  const auto captured = dump("captured");
  EXPECT_EQ(captured["name"], "triton_ascend");  // upstream reads $TRITON_WHEEL_NAME (our default)
  EXPECT_EQ(captured["url"], "https://github.com/triton-lang/triton/");
  EXPECT_EQ(captured["entry_points"]["triton.backends"][0], "nvidia = triton.backends.nvidia");
  EXPECT_EQ(captured["cmdclass"]["build_ext"], "__main__.CMakeBuild");

  const auto diff = dump("diff");
  EXPECT_EQ(diff["url"]["captured"], "https://github.com/triton-lang/triton/");
  EXPECT_EQ(diff["url"]["rewritten"], "https://gitcode.com/Ascend/triton-ascend/");
  EXPECT_EQ(diff["cmdclass"]["rewritten"]["bdist_wheel"], "__main__.BuildWheel");
  EXPECT_EQ(diff["long_description_content_type"]["rewritten"], "text/markdown");
  EXPECT_FALSE(diff["long_description_content_type"].contains("captured"));
  EXPECT_FALSE(diff.contains("author"));
  EXPECT_FALSE(diff.contains("name"));
}

TEST_F(HostTest, UserEnvironmentWinsOverProfileDefaults) {
  env["TRITON_WHEEL_NAME"] = "my-triton";
  env["TRITON_BUILD_PROTON"] = "ON";
  const auto kwargs = dump();
  EXPECT_EQ(kwargs["name"], "my-triton");
  EXPECT_EQ(kwargs["entry_points"]["console_scripts"][0],
            "proton-viewer = triton.profiler.viewer:main");
}

TEST_F(HostTest, DistributedPackageDataWhenSwitchedOn) {
  write_file(tree / "third_party/ascend/Triton-distributed-ascend/python/triton_dist/__init__.py",
             "");
  write_file(
      tree / "third_party/ascend/Triton-distributed-ascend/python/triton_dist/language/a/x.py", "");
  env["TRITON_BUILD_TD"] = "ON";  // not a checkout: the directory is used as it is
  const auto kwargs = dump();
  EXPECT_EQ(kwargs["package_data"]["triton_dist"],
            nlohmann::ordered_json::parse(R"(["*.py","*.pyi"])"));
  EXPECT_EQ(kwargs["package_dir"]["triton_dist"],
            "third_party/ascend/Triton-distributed-ascend/python/triton_dist");
  const auto& packages = kwargs["packages"];
  EXPECT_NE(std::find(packages.begin(), packages.end(), "triton_dist.language.a"), packages.end());
  EXPECT_EQ(std::find(packages.begin(), packages.end(), "triton_dist.language"), packages.end());
}

TEST_F(HostTest, VersionNameAndUnknownCommandPassThrough) {
  make_git_repo(tree, dir.path());
  const ProcessResult version = host({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, dump()["version"].get<std::string>() + "\n");
  const ProcessResult name = host({"--name"});
  EXPECT_EQ(name.out, "triton_ascend\n");

  const ProcessResult ours = host({"frobnicate"});
  const ProcessResult theirs = python_setup_py({"frobnicate"});
  EXPECT_EQ(ours.exit_code, theirs.exit_code);
  EXPECT_EQ(ours.exit_code, 1);
  EXPECT_EQ(ours.err, theirs.err);
  EXPECT_TRUE(contains(ours.err, "invalid command 'frobnicate'"));
}

TEST_F(HostTest, SetupPyHelpAndOptionsPassThrough) {
  const ProcessResult commands = host({"--help-commands"});
  EXPECT_EQ(commands.exit_code, 0) << commands.err;
  EXPECT_TRUE(contains(commands.out, "bdist_wheel"));
  const ProcessResult wheel_help = host({"bdist_wheel", "--help"});
  EXPECT_EQ(wheel_help.exit_code, 0);
  EXPECT_TRUE(contains(wheel_help.out, "--dist-dir"));
  const ProcessResult after_dashes = host({"--", "--help"});
  EXPECT_TRUE(contains(after_dashes.out, "Common commands"));
  const ProcessResult quiet = host({"-q", "--name"});
  EXPECT_EQ(quiet.out, "triton_ascend\n");
}

TEST_F(HostTest, HostHelpAndVersion) {
  const ProcessResult help = host({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "--dump-kwargs"));
  const ProcessResult version = host({"--host-version"});
  EXPECT_TRUE(contains(version.out, "ascend-setup "));
  const ProcessResult bad = host({"--dump-kwargs=all"});
  EXPECT_EQ(bad.exit_code, code::usage);
  EXPECT_TRUE(contains(bad.err, "ascend-setup: error: "));
}

TEST_F(HostTest, LogsGoToStderrOnly) {
  env["ASCEND_SETUP_LOG_LEVEL"] = "debug";
  const ProcessResult result = host({"--dump-kwargs"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(contains(result.err, "ascend-setup: debug: "));
  EXPECT_EQ(parse_json(result.out)["name"], "triton_ascend");
}

TEST_F(HostTest, VenvInterpreterIsWhatSetupPySees) {
  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv.string()}, dir.path());
  const std::string site = must_run({(venv / "bin/python").string(), "-c",
                                     "import sysconfig; print(sysconfig.get_paths()['purelib'])"},
                                    dir.path());
  write_file(fs::path(site.substr(0, site.find('\n'))) / "only_in_venv.py", "WHERE = 'venv'\n");
  write_file(
      tree / "setup.py",
      "import sys\nfrom setuptools import setup\nimport only_in_venv\n"
      "setup(name='x', version='1', description=sys.executable + ' ' + only_in_venv.WHERE)\n");
  env["VIRTUAL_ENV"] = venv.string();
  ProcessResult result = host({"--dump-kwargs=captured"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["description"], (venv / "bin/python").string() + " venv");

  env["VIRTUAL_ENV"] = std::nullopt;
  result = host({"--python", (venv / "bin/python").string(), "--dump-kwargs=captured"});
  EXPECT_EQ(parse_json(result.out)["description"], (venv / "bin/python").string() + " venv");

  result = host({"--dump-kwargs=captured"});  // the built-in interpreter lacks the module
  EXPECT_EQ(result.exit_code, code::python_error);
  EXPECT_TRUE(contains(result.err, "ModuleNotFoundError"));
}

TEST_F(HostTest, WrongInterpreterIsAClearError) {
  const ProcessResult result = host({"--python", "/bin/true", "--name"});
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(contains(result.err, "does not run as a Python interpreter")) << result.err;
  env["VIRTUAL_ENV"] = (dir.path() / "no-venv").string();
  EXPECT_EQ(host({"--name"}).exit_code, code::bad_input);
}

TEST_F(HostTest, SetupPyRaisingShowsTracebackAndPhase) {
  write_file(tree / "setup.py", "from setuptools import setup\nraise ValueError('broken tree')\n");
  const ProcessResult result = host({"--name"});
  EXPECT_EQ(result.exit_code, code::python_error);
  EXPECT_TRUE(contains(result.err, "Traceback (most recent call last)"));
  EXPECT_TRUE(contains(result.err, "ValueError: broken tree"));
  EXPECT_TRUE(contains(result.err, "while loading setup.py"));
  EXPECT_EQ(result.out, "");
}

TEST_F(HostTest, SetupPyExitCodeIsKept) {
  write_file(tree / "setup.py", "import sys\nsys.exit(7)\n");
  EXPECT_EQ(host({"--name"}).exit_code, 7);
}

TEST_F(HostTest, SetupPyNeverCallingSetupIsAClearError) {
  write_file(tree / "setup.py", "import setuptools\nVALUE = 1\n");
  const ProcessResult result = host({"bdist_wheel"});
  EXPECT_EQ(result.exit_code, code::upstream_mismatch);
  EXPECT_TRUE(contains(result.err, "never called setuptools.setup()"));
  EXPECT_FALSE(contains(result.err, "Traceback"));
}

TEST_F(HostTest, MissingUpstreamNameNamesTheOverride) {
  std::string setup_py = read_file(tree / "setup.py");
  const std::string from = "def get_llvm_package_info():";
  setup_py.replace(setup_py.find(from), from.size(), "def get_llvm_package_info_renamed():");
  write_file(tree / "setup.py", setup_py);
  const ProcessResult result = host({"--dump-kwargs"});
  EXPECT_EQ(result.exit_code, code::upstream_mismatch);
  EXPECT_TRUE(contains(result.err, "'get_llvm_package_info'")) << result.err;
  EXPECT_FALSE(contains(result.err, "AttributeError"));
}

TEST_F(HostTest, CtrlCEndsWith130) {
  write_file(
      tree / "setup.py",
      "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport time\ntime.sleep(30)\n");
  const ProcessResult result = host({"--name"});
  EXPECT_EQ(result.exit_code, code::interrupted);
  EXPECT_TRUE(contains(result.err, "interrupted"));
}

TEST_F(HostTest, MalformedProfileNamesFileAndLine) {
  write_file(tree / "ascend-setup.toml", "[profile]\nname = \"broken\"\n[environment\n");
  ProcessResult result = host({"--name"});
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(contains(result.err, "ascend-setup.toml:3: malformed TOML")) << result.err;
  fs::remove(tree / "ascend-setup.toml");
  result = host({"--profile", (dir.path() / "missing.toml").string(), "--name"});
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(contains(result.err, "cannot read profile"));
}

TEST_F(HostTest, ProfileFromTreeReplacesTheBuiltIn) {
  std::string profile =
      read_file(fs::path(EXAMPLE_TREE) / "../../profiles/triton-ascend-3.6.0.toml");
  const std::string url = "https://gitcode.com/Ascend/triton-ascend/";
  profile.replace(profile.find(url), url.size(), "https://example.com/next/");
  write_file(tree / "ascend-setup.toml", profile);
  EXPECT_EQ(dump()["url"], "https://example.com/next/");
}

TEST_F(HostTest, TreeWithoutSetupPy) {
  fs::remove(tree / "setup.py");
  ProcessResult result = host({"bdist_wheel"});
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(contains(result.err, "has no setup.py"));
  result = run_host({"-C", (dir.path() / "nowhere").string(), "--name"}, dir.path(), env);
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(contains(result.err, "does not exist"));
}

// -C names what is wrong with the path: a file is not a directory (it once
// said "does not exist"), and a path through a file does not exist.
TEST_F(HostTest, SourceDirThatIsAFileSaysSo) {
  ProcessResult result = run_host({"-C", (tree / "setup.py").string(), "--name"}, dir.path(), env);
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(contains(result.err,
                       "source directory " + (tree / "setup.py").string() + " is not a directory"))
      << result.err;
  EXPECT_FALSE(contains(result.err, "does not exist")) << result.err;
  result = run_host({"-C", (tree / "setup.py" / "sub").string(), "--name"}, dir.path(), env);
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(contains(result.err, "does not exist: a part of its path is a file")) << result.err;
}

TEST_F(HostTest, SourceDirOptionRunsFromTheTreeRoot) {
  const ProcessResult result = run_host({"-C", tree.string(), "--name"}, dir.path(), env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "triton_ascend\n");
}

// Every relative path option names a path in the directory the command ran
// in, also with -C: decoys of the same names inside the tree are not read
// (--profile and --profile-dir once were, --python was looked up from there).
TEST_F(HostTest, RelativePathOptionsAreTheDirectoryTheCommandRanIn) {
  // Each profile tells itself apart by its url (setup.py --url prints it).
  const auto url_profile = [](const fs::path& path, const std::string& name) {
    write_profile(path, {{"url = \"https://gitcode.com/Ascend/triton-ascend/\"",
                          "url = \"https://example.com/" + name + "/\""}});
  };
  url_profile(dir.path() / "mine.toml", "from_cwd");
  url_profile(tree / "mine.toml", "from_tree");
  url_profile(dir.path() / "pdir" / "p.toml", "from_cwd_dir");
  url_profile(tree / "pdir" / "p.toml", "from_tree_dir");
  fs::create_directories(dir.path() / "py");
  fs::create_symlink(SYSTEM_PYTHON, dir.path() / "py" / "python3");

  ProcessResult result =
      run_host({"-C", "tree", "--profile", "mine.toml", "--url"}, dir.path(), env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "https://example.com/from_cwd/\n");
  result = run_host({"-C", "tree", "--profile-dir", "pdir", "--url"}, dir.path(), env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "https://example.com/from_cwd_dir/\n");
  result =
      run_host({"-C", "tree", "--setup-py", "tree/setup.py", "--python", "py/python3", "--name"},
               dir.path(), env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "triton_ascend\n");
}

// A setuptools command from --command-packages (a global option passed
// through to setup.py) calls the patched module as the build would.
TEST_F(HostTest, LlvmPackageInfoIsTheAscendBuild) {
  write_file(dir.path() / "probe/probe_commands/__init__.py", "");
  write_file(dir.path() / "probe/probe_commands/llvm_info.py",
             "from setuptools import Command\n"
             "class llvm_info(Command):\n"
             "    user_options = []\n"
             "    def initialize_options(self): pass\n"
             "    def finalize_options(self): pass\n"
             "    def run(self):\n"
             "        import setup\n"
             "        p = setup.get_llvm_package_info()\n"
             "        print(p.name, p.url, p.sym_name, p.syspath_var_name)\n");
  env["PYTHONPATH"] = (dir.path() / "probe").string();
  const std::string patch_hash = must_run(
      {"sh", "-c", "cat third_party/ascend/patch/llvm_patch_*.patch | sha256sum | cut -c1-8"},
      tree);
  const std::string rev = read_file(tree / "cmake/llvm-hash.txt").substr(0, 8);
  const std::string name = "llvm-" + rev + "-" + patch_hash.substr(0, 8) + "-ubuntu-x64";
  const ProcessResult result = host({"-q", "--command-packages", "probe_commands", "llvm_info"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, name +
                            " https://triton-ascend-artifacts.obs.myhuaweicloud.com/llvm-builds/" +
                            name + ".tar.gz llvm-ubuntu-x64 LLVM_SYSPATH\n");
}

TEST_F(HostTest, SecondSetupCallWarnsAndTheLastWins) {
  write_file(tree / "setup.py",
             "from setuptools import setup\nsetup(name='first', version='1')\n"
             "setup(name='second', version='2')\n");
  const ProcessResult result = host({"--dump-kwargs=captured"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(contains(result.err, "more than once")) << result.err;
  EXPECT_EQ(parse_json(result.out)["name"], "second");
}

TEST_F(HostTest, BareInterpreterNameIsLookedUpOnPath) {
  const fs::path python = fs::path(SYSTEM_PYTHON);
  env["PATH"] = python.parent_path().string() + ":/usr/bin:/bin";
  const ProcessResult result = host({"--python", python.filename().string(), "--name"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "triton_ascend\n");
  EXPECT_EQ(host({"--python", "no-such-python", "--name"}).exit_code, code::bad_input);
}
