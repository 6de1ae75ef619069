// The Ascend build commands on the example tree with real CMake, Ninja and
// clang/lld (LLVM replaced by the stub directory through LLVM_SYSPATH; cmake
// behind the recording stand-in): the CMake check's failures, coverage
// tooling on and off, develop / egg_info / install / clean, and a wheel with
// the distributed package cloned from a local repository (its server stand-in).
#include "base/layer/profile.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sstream>

using namespace test_support;

namespace {

std::vector<CmakeCall> configure_calls(const fs::path& log) {
  std::vector<CmakeCall> found;
  for (const auto& call : read_cmake_calls(log)) {
    if (call.is_configure()) {
      found.push_back(call);
    }
  }
  return found;
}

class BuildCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = copy_example_tree(dir.path());
    cmake_log = dir.path() / "cmake-calls.log";
    env = offline_env(dir.path());
    env["MAX_JOBS"] = "2";
    env["PATH"] = path_with_stand_ins();
    env["CMAKE_CALL_LOG"] = cmake_log.string();
  }
  // A bin directory holding only git and ninja (and a `cmake` running
  // `cmake_script` when that is set).
  std::string bare_path(const std::string& cmake_script) {
    const fs::path bin = dir.path() / "bare-bin";
    fs::create_directories(bin);
    fs::create_symlink("/usr/bin/git", bin / "git");
    fs::create_symlink("/usr/bin/ninja", bin / "ninja");
    if (!cmake_script.empty()) {
      write_file(bin / "cmake", "#!/bin/sh\n" + cmake_script + "\n");
      fs::permissions(bin / "cmake", fs::perms(0755));
    }
    return bin.string();
  }

  TempDir dir;
  fs::path tree, cmake_log;
  Env env;
};

TEST_F(BuildCommandsTest, CmakeCheckFailuresAreClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "CMake >= 3.20 is needed to build triton: no cmake on PATH"},
      {"exit 1", "CMake >= 3.20 is needed to build triton: `cmake --version` exited with 1"},
      {"echo hello",
       "CMake >= 3.20 is needed to build triton: `cmake --version` printed no version"},
      {"echo 'cmake version 3.16.3'", "CMake >= 3.20 is needed to build triton: found 3.16"},
  };
  for (const auto& [script, message] : cases) {
    fs::remove_all(dir.path() / "bare-bin");
    env["PATH"] = bare_path(script);
    const auto result = run_host({"build_ext"}, tree, env);
    EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << script << result.err;
    EXPECT_NE(result.err.find("ascend-setup: error: " + message + "\n"), std::string::npos)
        << script << "\n"
        << result.err;
    EXPECT_EQ(result.err.find("Traceback"), std::string::npos) << result.err;
  }
}

TEST_F(BuildCommandsTest, FailingConfigureIsOneLineNamingTheCommand) {
  env["PATH"] = bare_path(
      "case \"$1\" in --version) echo 'cmake version 3.25.1' ;; *) echo 'CMake Error: no LLVM' "
      ">&2; "
      "exit 2 ;; esac");
  const auto result = run_host({"build_ext"}, tree, env);
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::python_error);
  EXPECT_NE(result.err.find("CMake Error: no LLVM\n"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("ascend-setup: error: `cmake " + tree.string() + " -G Ninja "),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("-DTRITON_BUILD_TD=OFF` exited with 2 while running setup() "
                            "(its output is above)\n"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("Traceback"), std::string::npos) << result.err;
  // --log-level debug shows where in Python it happened.
  const auto debug = run_host({"--log-level", "debug", "build_ext"}, tree, env);
  EXPECT_NE(debug.err.find("Traceback"), std::string::npos) << debug.err;
}

// Upstream's configure call as a tuple; check_call restored after
// build_extension whether it returned or raised; tools copied without strip.
// setup.py is the example's with those two lines changed; cmake is a script.
TEST_F(BuildCommandsTest, TupleConfigureCallAndCheckCallRestoredInEveryCase_ScriptedCmake) {
  const fs::path setup_py = tree / "setup.py";
  std::string text = read_file(setup_py);
  const std::string list_call = "subprocess.check_call([\"cmake\", self.base_dir] + cmake_args,";
  ASSERT_NE(text.find(list_call), std::string::npos);
  text.replace(text.find(list_call), list_call.size(),
               "subprocess.check_call(tuple([\"cmake\", self.base_dir] + cmake_args),");
  const std::string build_py_run = "        self.run_command(\"build_ext\")\n";
  ASSERT_NE(text.find(build_py_run), std::string::npos);
  text.replace(text.find(build_py_run), build_py_run.size(),
               "        try:\n"
               "            self.run_command(\"build_ext\")\n"
               "        finally:\n"
               "            print('check_call restored:', hasattr(subprocess.check_call, "
               "'__code__'), flush=True)\n");
  write_file(setup_py, text);

  // cmake: records its arguments; "--build" makes the tools (copies of true,
  // with symbols); a configure call exits with $CONFIGURE_EXIT.
  const fs::path calls = dir.path() / "scripted-cmake.log";
  env["PATH"] = bare_path(
      "echo \"$*\" >> '" + calls.string() +
      "'\n"
      "case \"$1\" in\n"
      "  --version) echo 'cmake version 3.25.1' ;;\n"
      "  --build) /bin/mkdir -p bin third_party/ascend/bin; /bin/cp /usr/bin/true bin/triton-opt;"
      " /bin/cp /usr/bin/true third_party/ascend/bin/triton-mlir-opt ;;\n"
      "  *) exit \"${CONFIGURE_EXIT:-0}\" ;;\n"
      "esac");
  auto result = run_host({"build_py"}, tree, env);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("check_call restored: True\n"), std::string::npos) << result.out;
  const std::string log = read_file(calls);
  const std::string configure = log.substr(log.find(tree.string()));
  const std::string configure_line = configure.substr(0, configure.find('\n'));
  const std::string injected =
      " -DTRITON_BUILD_UT=OFF -DLLVM_MAJOR_VERSION_22_COMPATIBLE=ON -DTRITON_BUILD_TD=OFF";
  EXPECT_TRUE(configure_line.ends_with(injected)) << configure_line;
  std::istringstream lines(log);
  int build_calls = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("--build", 0) == 0) {
      ++build_calls;
      EXPECT_EQ(line.find("-DLLVM_MAJOR_VERSION_22_COMPATIBLE"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(build_calls, 2) << log;
  bool copied = false;
  for (const auto& entry : fs::recursive_directory_iterator(tree / "build")) {
    if (entry.path().filename() == "triton-mlir-opt" &&
        entry.path().parent_path().filename() == "_C") {
      copied = true;
      EXPECT_EQ(fs::status(entry.path()).permissions() & fs::perms::all, fs::perms(0755));
      EXPECT_EQ(read_file(entry.path()), read_file("/usr/bin/true")) << "no strip on PATH";
    }
  }
  EXPECT_TRUE(copied);
  EXPECT_NE(result.err.find("copied third_party/ascend/bin/triton-mlir-opt to "),
            std::string::npos);

  env["CONFIGURE_EXIT"] = "3";
  result = run_host({"build_py"}, tree, env);
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::python_error) << result.err;
  EXPECT_NE(result.out.find("check_call restored: True\n"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("exited with 3 while running setup()"), std::string::npos)
      << result.err;
}

// Upstream's configure call made another way than subprocess.check_call (the
// example's setup.py edited to use subprocess.run): the Ascend cmake arguments
// cannot be added, so the build stops with exit 4 naming the patch point, at
// the first `cmake --build` (nothing compiled) or, when the build calls go
// around check_call too, when build_extension returns.
TEST_F(BuildCommandsTest, ConfigureCallAroundCheckCallStopsWithExit4_ScriptedCmake) {
  const fs::path calls = dir.path() / "scripted-cmake.log";
  env["PATH"] = bare_path("echo \"$*\" >> '" + calls.string() +
                          "'\n"
                          "case \"$1\" in --version) echo 'cmake version 3.25.1' ;; esac");
  const std::string setup = read_file(tree / "setup.py");
  const std::string configure = "subprocess.check_call([\"cmake\", self.base_dir] + cmake_args,";
  const std::string ran = "subprocess.run([\"cmake\", self.base_dir] + cmake_args, check=True,";
  const std::string expected = "ascend-setup: error: upstream's CMakeBuild.build_extension ";
  const std::string why =
      " without a cmake configure call through subprocess.check_call, where the CMakeBuild "
      "override adds the Ascend cmake arguments";

  write_file(tree / "setup.py", replace_once(setup, configure, ran));
  auto result = run_host({"build_ext"}, tree, env);
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::upstream_mismatch) << result.err;
  EXPECT_TRUE(contains(result.err, expected + "reached `cmake --build`" + why)) << result.err;
  EXPECT_FALSE(contains(read_file(calls), "--build")) << "compiled without the Ascend arguments";
  EXPECT_FALSE(contains(result.err, "Traceback")) << result.err;

  std::string around = replace_once(setup, configure, ran);
  for (const char* build_call :
       {"subprocess.check_call([\"cmake\", \"--build\", \".\"] + build_args,",
        "subprocess.check_call([\"cmake\", \"--build\", \".\", \"--target\", "
        "\"mlir-doc\"],"}) {
    around = replace_once(
        around, build_call,
        replace_once(build_call, "subprocess.check_call(", "subprocess.run(") + " check=True,");
  }
  write_file(tree / "setup.py", around);
  result = run_host({"build_ext"}, tree, env);
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::upstream_mismatch) << result.err;
  EXPECT_TRUE(contains(result.err, expected + "returned" + why)) << result.err;
}

TEST_F(BuildCommandsTest, CoverageOnSetsEverythingAndOffRemovesLeftovers_RecordingCmake) {
  const auto profile =
      ascend_setup::parse_profile(ascend_setup::builtin_profile_text(), "built-in");
  env["TRITON_ENABLE_COVERAGE_HITEST"] = "on";
  env["HITEST_HOME"] = "/opt/hitest-test";
  auto result = run_host({"build_ext"}, tree, env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto calls = read_cmake_calls(cmake_log);
  auto configures = configure_calls(cmake_log);
  ASSERT_EQ(configures.size(), 1u);
  EXPECT_EQ(std::count(configures[0].args.begin(), configures[0].args.end(),
                       "-DTRITON_ENABLE_COVERAGE_HITEST=ON"),
            1);
  for (const auto& call : calls) {
    if (call.args.size() > 0 && call.args[0] == "--version") {
      continue;  // the version check runs before the variables are set
    }
    for (const auto& [name, value] : profile.coverage.set) {
      EXPECT_EQ(call.env.count(name), 1u) << name;
    }
    EXPECT_EQ(call.env.at("HitestHome"), "/opt/hitest-test");
    EXPECT_EQ(call.env.at("HITEST_USER_ACCOUNT"), "a00000000");
    EXPECT_EQ(call.env.at("lltcovRootpath"), "/opt/covdata");
    EXPECT_EQ(call.env.at("HITEST_COVSTUB_ROOT_DIR"),
              "/opt/hitest-test/apache-tomcat-8.0.39/webapps/datasource/Container_Default/base");
    EXPECT_EQ(call.env.at("PATH").rfind("/opt/hitest-test:", 0), 0u) << call.env.at("PATH");
    EXPECT_EQ(call.env.at("LD_LIBRARY_PATH").rfind("/opt/hitest-test", 0), 0u);
  }

  // Off, with leftovers of an earlier coverage shell in the environment.
  fs::remove(cmake_log);
  env["TRITON_ENABLE_COVERAGE_HITEST"] = std::nullopt;
  env["HITEST_FOO"] = "1";
  env["HitestHome"] = "/old";
  env["lltcovRootpath"] = "/old";
  result = run_host({"build_ext"}, tree, env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  configures = configure_calls(cmake_log);
  ASSERT_EQ(configures.size(), 1u);
  EXPECT_FALSE(contains(configures[0].args, "-DTRITON_ENABLE_COVERAGE_HITEST=ON"));
  for (const auto& [name, value] : configures[0].env) {
    EXPECT_NE(name.rfind("HITEST_", 0), 0u) << name;
    EXPECT_NE(name, "HitestHome");
    EXPECT_NE(name, "lltcovRootpath");
  }
}

TEST_F(BuildCommandsTest, EggInfoDevelopInstallCleanWorkThroughTheHost_StubLlvm) {
  // egg_info: the rewritten metadata, entry points in setup()'s order.
  auto result = run_host({"egg_info"}, tree, env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const fs::path egg_info = tree / "python/triton_ascend.egg-info";
  // setup() gets triton_ascend; setuptools 66 writes it with a dash, as for setup_ascend.py.
  EXPECT_NE(read_file(egg_info / "PKG-INFO").find("Name: triton-ascend\n"), std::string::npos);
  EXPECT_EQ(read_file(egg_info / "entry_points.txt")
                .rfind("[triton.backends]\nascend = triton.backends.ascend\n"
                       "nvidia = triton.backends.nvidia\namd = triton.backends.amd\n",
                       0),
            0u)
      << read_file(egg_info / "entry_points.txt");

  // install into one venv (as pip runs setup.py install), develop into another.
  const fs::path installed = dir.path() / "installed";
  const fs::path developed = dir.path() / "developed";
  for (const auto& venv : {installed, developed}) {
    must_run({SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv.string()}, dir.path());
  }
  result = run_host(
      {"--python", (installed / "bin/python").string(), "install",
       "--single-version-externally-managed", "--record", (dir.path() / "record.txt").string()},
      tree, env);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const std::string probe =
      "import triton; print(triton.backends(), triton._C.libtriton.ir.ascend_target(), "
      "triton.__file__)";
  std::string out = must_run({(installed / "bin/python").string(), "-c", probe}, dir.path());
  EXPECT_EQ(out.rfind("['ascend', 'nvidia', 'amd'] Ascend910B " + installed.string(), 0), 0u)
      << out;
  const fs::path installed_init = out.substr(out.rfind(' ') + 1, out.size() - out.rfind(' ') - 2);
  EXPECT_TRUE(fs::exists(installed_init.parent_path() / "_C/triton-opt")) << installed_init;

  result = run_host({"--python", (developed / "bin/python").string(), "develop", "--no-deps"}, tree,
                    env);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  out = must_run({(developed / "bin/python").string(), "-c", probe}, dir.path());
  EXPECT_EQ(out, "['ascend', 'nvidia', 'amd'] Ascend910B " +
                     (tree / "python/triton/__init__.py").string() + "\n");
  EXPECT_TRUE(fs::is_symlink(tree / "python/triton/backends/ascend"));
  EXPECT_TRUE(fs::exists(tree / "python/triton/_C/triton-opt"));

  // clean: upstream's CMakeClean removes the CMake build directory.
  std::vector<fs::path> cmake_dirs;
  for (const auto& entry : fs::directory_iterator(tree / "build")) {
    if (entry.path().filename().string().rfind("cmake.", 0) == 0) {
      cmake_dirs.push_back(entry.path());
    }
  }
  ASSERT_EQ(cmake_dirs.size(), 1u);
  result = run_host({"clean"}, tree, env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(cmake_dirs[0]));
}

TEST_F(BuildCommandsTest, DistributedWheelCarriesTheWholeTritonDistPackage_StubLlvm) {
  // The distributed part cloned by libgit2 from a local repository standing in
  // for its server (the URL and the pin are profile values).
  const fs::path remote = dir.path() / "remote/Triton-distributed-ascend";
  const std::string pin = make_distributed_remote(remote, dir.path());
  const fs::path profile =
      write_profile(dir.path() / "profile.toml",
                    {{"https://gitcode.com/Ascend/Triton-distributed-ascend.git", remote.string()},
                     {"d2ac268c7ab4dc09865ed51638104ee1b97dc460", pin}});
  make_git_repo(tree, dir.path());
  const fs::path& clone = tree;

  env["TRITON_BUILD_TD"] = "ON";
  const auto result = run_host({"--profile", profile.string(), "bdist_wheel"}, clone, env);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const auto configures = configure_calls(cmake_log);
  ASSERT_EQ(configures.size(), 1u);
  EXPECT_EQ(configures[0].args.back(), "-DTRITON_BUILD_TD=ON");

  const auto wheels = files_in(clone / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  std::vector<std::string> dist_members;
  for (const auto& member : wheel_members(wheels[0])) {
    const std::string name = member.substr(member.find(' ') + 1);
    if (name.rfind("triton_dist/", 0) == 0) {
      dist_members.push_back(name);
    }
  }
  std::sort(dist_members.begin(), dist_members.end());
  // README.txt as package data: the tree's MANIFEST.in grafts third_party, as upstream's does.
  EXPECT_EQ(dist_members,
            (std::vector<std::string>{
                "triton_dist/__init__.py", "triton_dist/__init__.pyi",
                "triton_dist/layers/__init__.py", "triton_dist/layers/nested/README.txt",
                "triton_dist/layers/nested/ops.py", "triton_dist/layers/nested/ops.pyi"}));
}

}  // namespace
