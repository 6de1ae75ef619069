// A real wheel from the example tree: real CMake, Ninja and clang/lld (the
// profile's defaults), the LLVM download replaced by the stub LLVM directory
// (LLVM_SYSPATH); cmake runs behind a stand-in that records each call; the
// wheel is installed with pip into a fresh venv and imported. Then the
// rebuilds: nothing changed, then one source file edited. And auditwheel's
// repair through a stand-in (auditwheel cannot be installed offline).
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include <sys/utsname.h>
#include <unistd.h>

using namespace test_support;

namespace {

std::string machine() {
  struct utsname name {};
  ::uname(&name);
  return name.machine;
}

// Modification times of every object file CMake built.
std::map<fs::path, fs::file_time_type> object_times(const fs::path& tree) {
  std::map<fs::path, fs::file_time_type> times;
  for (const auto& entry : fs::recursive_directory_iterator(tree / "build")) {
    if (entry.is_regular_file() && entry.path().extension() == ".o") {
      times[entry.path()] = entry.last_write_time();
    }
  }
  return times;
}

TEST(Wheel, BdistWheelInstallsImportsAndRebuildsNothingTwice_StubLlvm_RecordingCmake) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const fs::path cmake_log = dir.path() / "cmake-calls.log";
  Env env = offline_env(dir.path());
  env["MAX_JOBS"] = "2";
  env["PATH"] = path_with_stand_ins();
  env["CMAKE_CALL_LOG"] = cmake_log.string();
  env["ASCENDNPU_IR_TAG"] = "npuir-test-tag";

  const auto build = run_host({"bdist_wheel"}, tree, env);
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  const std::string wheel_name = wheels[0].filename().string();
  EXPECT_EQ(wheel_name.rfind("triton_ascend-3.6.0-cp3", 0), 0u) << wheel_name;
  EXPECT_NE(wheel_name.find("-linux_" + machine() + ".whl"), std::string::npos) << wheel_name;

  // The configure call: upstream's arguments, then the Ascend ones, once each.
  std::vector<CmakeCall> configures;
  for (const auto& call : read_cmake_calls(cmake_log)) {
    if (call.is_configure()) {
      configures.push_back(call);
    }
  }
  ASSERT_EQ(configures.size(), 1u);
  const auto& args = configures[0].args;
  ASSERT_GE(args.size(), 8u);
  EXPECT_EQ(args[0], tree.string());
  EXPECT_EQ(args[1], "-G");
  const std::vector<std::string> tail(args.end() - 4, args.end());
  EXPECT_EQ(tail, (std::vector<std::string>{
                      "-DTRITON_BUILD_UT=OFF", "-DASCENDNPU_IR_TAG=npuir-test-tag",
                      "-DLLVM_MAJOR_VERSION_22_COMPATIBLE=ON", "-DTRITON_BUILD_TD=OFF"}));
  for (const auto& arg : tail) {
    EXPECT_EQ(std::count(args.begin(), args.end(), arg), 1) << arg;
  }
  EXPECT_TRUE(contains(args, "-DCMAKE_CXX_COMPILER=clang++"));
  EXPECT_TRUE(contains(args, "-DTRITON_CODEGEN_BACKENDS=ascend;nvidia;amd"));

  const auto members = wheel_members(wheels[0]);
  EXPECT_TRUE(contains(members, "644 triton/backends/ascend/__init__.py"));
  EXPECT_TRUE(contains(members, "755 triton/_C/triton-opt"));
  EXPECT_TRUE(contains(members, "755 triton/_C/triton-mlir-opt"));

  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", venv.string()}, dir.path());
  const std::string python = (venv / "bin/python").string();
  must_run({python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheels[0].string()},
           dir.path());
  const std::string out =
      must_run({python, "-c",
                "import triton, os, importlib.metadata as m\n"
                "print(triton.backends())\n"
                "print(triton._C.libtriton.ir.add(2, 3), triton._C.libtriton.ir.ascend_target())\n"
                "print([e.name for e in m.entry_points(group='triton.backends')])\n"
                "md = m.metadata('triton-ascend')\n"
                "print(md['Home-page'], md['Description-Content-Type'])\n"
                "print(sorted(r for r in md.get_all('Requires-Dist') if 'extra ==' not in r))\n"
                "print(md.get_payload().splitlines()[0])\n"
                "print(os.path.dirname(triton._C.__file__))\n"},
               dir.path());
  std::istringstream lines(out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "['ascend', 'nvidia', 'amd']");
  std::getline(lines, line);
  EXPECT_EQ(line, "5 Ascend910B") << "the extension was built from the patched source";
  std::getline(lines, line);
  EXPECT_EQ(line, "['ascend', 'nvidia', 'amd']") << "entry points: ascend first";
  std::getline(lines, line);
  EXPECT_EQ(line, "https://gitcode.com/Ascend/triton-ascend/ text/markdown");
  std::getline(lines, line);
  EXPECT_EQ(line,
            "['attrs (==24.2.0)', 'decorator (==5.1.1)', 'numpy (==1.26.4)', 'pandas', "
            "'psutil (==6.0.0)', 'pybind11', 'pytest (==8.3.2)', 'pytest-xdist (==3.6.1)', "
            "'pyyaml', 'scipy (==1.13.1) ; python_version < \"3.13\"', 'scipy (==1.15.1) ; "
            "python_version >= \"3.13\"', 'triton (==3.6.0)']")
      << "the profile's install_requires (setuptools sorts them; upstream's extras left out)";
  std::getline(lines, line);
  EXPECT_EQ(line, "# triton-ascend (example tree)");
  std::getline(lines, line);
  const fs::path installed_c = line;
  for (const char* tool : {"triton-opt", "triton-mlir-opt"}) {
    EXPECT_EQ(::access((installed_c / tool).c_str(), X_OK), 0) << tool;
    const auto symbols =
        ascend_setup::run_process({{"nm", (installed_c / tool).string()}, dir.path(), {}, ""});
    EXPECT_NE(symbols.err.find("no symbols"), std::string::npos) << tool << " is not stripped";
  }
  EXPECT_EQ(must_run({(installed_c / "triton-opt").string()}, dir.path()),
            "triton-opt (ascend): tt\n");

  // Nothing changed: no source file is written, Ninja has nothing to do.
  const auto sources_before = source_mtimes(tree);
  const auto rebuild = run_host({"bdist_wheel"}, tree, env);
  ASSERT_EQ(rebuild.exit_code, 0) << rebuild.out << rebuild.err;
  EXPECT_NE(rebuild.out.find("ninja: no work to do."), std::string::npos) << rebuild.out;
  EXPECT_NE(rebuild.err.find("up to date, no file touched"), std::string::npos) << rebuild.err;
  const auto sources_after = source_mtimes(tree);
  for (const auto& [path, time] : sources_before) {
    EXPECT_EQ(sources_after.at(path), time) << path << " was written";
  }
  EXPECT_EQ(sources_after.size(), sources_before.size());

  // One source edited (outside the patch hunks): only its object is rebuilt.
  const fs::path ir = tree / "python/src/ir.cc";
  write_file(ir, "// a local edit\n" + read_file(ir));
  const auto objects_before = object_times(tree);
  const auto edit_build = run_host({"bdist_wheel"}, tree, env);
  ASSERT_EQ(edit_build.exit_code, 0) << edit_build.out << edit_build.err;
  std::vector<std::string> rebuilt;
  for (const auto& [path, time] : object_times(tree)) {
    if (objects_before.count(path) == 0 || objects_before.at(path) != time) {
      rebuilt.push_back(path.filename().string());
    }
  }
  EXPECT_EQ(rebuilt, std::vector<std::string>{"ir.cc.o"});
  EXPECT_EQ(read_file(ir).rfind("// a local edit\n", 0), 0u);
}

// IS_MANYLINUX on: auditwheel repair into the dist dir (a stand-in that
// follows auditwheel's contract), the original wheel removed only afterwards.
// One tree, built once, each case an incremental bdist_wheel.
TEST(Wheel, ManylinuxRepairCases_AuditwheelStandIn) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const fs::path dist = tree / "dist";
  const fs::path log = dir.path() / "auditwheel.log";
  Env env = offline_env(dir.path());
  env["MAX_JOBS"] = "2";
  env["PATH"] = path_with_stand_ins();
  env["IS_MANYLINUX"] = "1";
  env["AUDITWHEEL_STAND_IN_LOG"] = log.string();
  const std::string m = machine();

  // Several *-linux_*.whl: which one was just built is not clear.
  write_file(dist / "triton_ascend-0.9.0-cp311-cp311-linux_x86_64.whl", "old");
  auto build = run_host({"bdist_wheel"}, tree, env);
  EXPECT_EQ(build.exit_code, ascend_setup::exit_code::bad_input);
  EXPECT_NE(build.err.find("needs exactly one *-linux_*.whl in " + dist.string() +
                           ", found 2: triton_ascend-0.9.0-cp311-cp311-linux_x86_64.whl, "),
            std::string::npos)
      << build.err;
  EXPECT_EQ(read_file(log), "");
  fs::remove_all(dist);

  // The repair fails: the original stays, the error says where.
  env["AUDITWHEEL_STAND_IN_FAIL"] = "1";
  build = run_host({"bdist_wheel"}, tree, env);
  EXPECT_EQ(build.exit_code, ascend_setup::exit_code::bad_input);
  auto wheels = files_in(dist, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_TRUE(wheels[0].string().ends_with("-linux_" + m + ".whl")) << wheels[0];
  EXPECT_NE(build.err.find("auditwheel repair of " + wheels[0].string() +
                           " failed (exit 1); the original wheel stays there"),
            std::string::npos)
      << build.err;
  EXPECT_NE(build.err.find("stand-in asked to fail"), std::string::npos) << build.err;
  EXPECT_EQ(build.err.find("Traceback"), std::string::npos) << build.err;
  fs::remove_all(dist);
  fs::remove(log);

  // The repair succeeds: only the repaired wheel is left, and its path printed.
  env["AUDITWHEEL_STAND_IN_FAIL"] = std::nullopt;
  build = run_host({"bdist_wheel"}, tree, env);
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  wheels = files_in(dist, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_TRUE(
      wheels[0].string().ends_with("-manylinux_2_27_" + m + ".manylinux_2_28_" + m + ".whl"))
      << wheels[0];
  EXPECT_NE(build.out.find(wheels[0].string() + "\n"), std::string::npos) << build.out;
  // Asked whether it takes a compression level, then repaired at level 0 into
  // a scratch directory (the native writer deflates its output into dist).
  EXPECT_EQ(
      read_file(log).rfind("repair --help\n-v repair --plat manylinux_2_27_" + m +
                               " --plat manylinux_2_28_" + m + " --zip-compression-level 0 -w " +
                               dist.string() + "/.auditwheel.ascend-setup-repair-",
                           0),
      0u)
      << read_file(log);
  EXPECT_EQ(std::distance(fs::directory_iterator(dist), fs::directory_iterator()), 1)
      << "no scratch directory left";
  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", venv.string()}, dir.path());
  must_run({(venv / "bin/python").string(), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
            wheels[0].string()},
           dir.path());
  fs::remove_all(dist);
  fs::remove(log);

  // Off: no auditwheel.
  env["IS_MANYLINUX"] = "0";
  build = run_host({"bdist_wheel"}, tree, env);
  ASSERT_EQ(build.exit_code, 0) << build.err;
  EXPECT_EQ(files_in(dist, "-linux_" + m + ".whl").size(), 1u);
  EXPECT_FALSE(fs::exists(log));
}

}  // namespace
