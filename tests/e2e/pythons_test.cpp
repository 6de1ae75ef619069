// One build, every CPython the build found (FOUND_PYTHONS: Debian's, pyenv's
// 3.10-3.13, ...), chosen at run time: setup.py sees the chosen interpreter's
// sys.executable, prefix, version and site-packages; a wheel is tagged for it;
// an interpreter the build cannot serve is exit 3 naming what it serves.
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

using namespace test_support;
namespace code = ascend_setup::exit_code;

namespace {

// A setup.py that reports what it runs in, through --dump-kwargs=captured.
const char* probe_setup_py =
    "import sys, sysconfig\nfrom setuptools import setup\n"
    "setup(name='probe', version='1', description=sys.executable, url=sys.prefix,\n"
    "      license='%d.%d' % sys.version_info[:2], keywords=[sysconfig.get_paths()['purelib']])\n";

struct Probe {
  std::string executable, prefix, version, purelib;
};

Probe probe(const fs::path& tree, const Env& env, const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = args;
  argv.push_back("--dump-kwargs=captured");
  const auto result = run_host(argv, tree, env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto json = parse_json(result.out);
  if (!json.is_object()) {
    return {};
  }
  return {json["description"], json["url"], json["license"], json["keywords"][0]};
}

// The program, not the machine: every interpreter the build found is named by
// --host-version and is served when named with --python, by the host of its
// own minor (the debug log names it), setup.py seeing that interpreter. Named
// through a venv of it: pyenv's 3.12 and 3.13 ship no setuptools, which the
// capture of setup() needs.
TEST(Pythons, EveryFoundPythonIsServedByTheHostOfItsMinor) {
  TempDir dir;
  const fs::path probe_tree = dir.path() / "probe";
  write_file(probe_tree / "setup.py", probe_setup_py);
  const Env env = offline_env(dir.path());
  const auto hosts = run_host({"--host-version"}, probe_tree, env);
  ASSERT_EQ(hosts.exit_code, 0) << hosts.err;
  ASSERT_FALSE(found_pythons().empty());
  for (const auto& python : found_pythons()) {
    SCOPED_TRACE(python.string());
    const std::string version = python_version(python);
    EXPECT_NE(hosts.out.find(version), std::string::npos) << hosts.out;
    const fs::path venv_python = cached_venv(python) / "bin/python";
    const Probe seen =
        probe(probe_tree, env, {"--python", venv_python.string(), "--log-level", "debug"});
    EXPECT_EQ(seen.version, version);
    EXPECT_EQ(seen.executable, venv_python.string());
    const auto run = run_host(
        {"--python", venv_python.string(), "--log-level", "debug", "--dump-kwargs=captured"},
        probe_tree, env);
    EXPECT_NE(run.err.find("CPython " + version + " at "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("ascend-setup-host-" + version), std::string::npos) << run.err;
  }
}

TEST(Pythons, DumpKwargsInAVenvOfEveryServedPython) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const fs::path probe_tree = dir.path() / "probe";
  write_file(probe_tree / "setup.py", probe_setup_py);
  for (const auto& python : found_pythons()) {
    SCOPED_TRACE(python.string());
    const fs::path venv = cached_venv(python);
    Env env = offline_env(dir.path());
    env["VIRTUAL_ENV"] = venv.string();
    const auto dump = run_host({"--dump-kwargs"}, tree, env);
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    const auto kwargs = parse_json(dump.out);
    EXPECT_EQ(kwargs["name"], "triton_ascend");
    EXPECT_EQ(kwargs["entry_points"]["triton.backends"][0], "ascend = triton.backends.ascend");

    const Probe seen = probe(probe_tree, env);
    EXPECT_EQ(seen.executable, (venv / "bin/python").string());
    EXPECT_EQ(seen.prefix, venv.string());
    EXPECT_EQ(seen.version, python_version(python));
    EXPECT_EQ(seen.purelib.rfind(venv.string() + "/lib/python" + seen.version + "/", 0), 0u)
        << seen.purelib;

    // The same through --python, with no venv active.
    env["VIRTUAL_ENV"] = std::nullopt;
    EXPECT_EQ(probe(probe_tree, env, {"--python", (venv / "bin/python").string()}).prefix,
              venv.string());
  }
}

TEST(Pythons, Python3OnPathIsTheDefaultAShimIsFollowed) {
  TempDir dir;
  const fs::path probe_tree = dir.path() / "probe";
  write_file(probe_tree / "setup.py", probe_setup_py);
  const fs::path python = found_pythons().back();
  const fs::path venv = cached_venv(python);
  Env env = offline_env(dir.path());
  env["PATH"] = path_with(venv / "bin");
  Probe seen = probe(probe_tree, env);
  EXPECT_EQ(seen.executable, (venv / "bin/python3").string());
  EXPECT_EQ(seen.prefix, venv.string());

  // A script in front of the interpreter (as pyenv's shims): the program it runs.
  const fs::path shims = dir.path() / "shims";
  write_file(shims / "python3", "#!/bin/sh\nexec " + (venv / "bin/python").string() + " \"$@\"\n");
  fs::permissions(shims / "python3", fs::perms(0755));
  env["PATH"] = path_with(shims);
  seen = probe(probe_tree, env);
  EXPECT_EQ(seen.prefix, venv.string());
  EXPECT_EQ(seen.version, python_version(python));
}

TEST(Pythons, TooOldPythonIsExit3NamingWhatIsServed) {
  ASSERT_FALSE(too_old_pythons().empty()) << "the build found no CPython older than 3.10";
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  for (const auto& python : too_old_pythons()) {
    const auto result =
        run_host({"--python", python.string(), "--dump-kwargs"}, tree, offline_env(dir.path()));
    EXPECT_EQ(result.exit_code, code::bad_input) << python;
    EXPECT_TRUE(contains(result.err, "a CPython " + python_version(python) +
                                         ": this ascend-setup serves CPython 3.1"))
        << result.err;
    EXPECT_TRUE(contains(result.err, "-DASCEND_SETUP_PYTHONS=")) << result.err;
    EXPECT_TRUE(result.out.empty());
  }
}

// The one-line exit-3 error of an interpreter the build cannot serve.
void expect_unservable(const ascend_setup::ProcessResult& result, const std::string& why) {
  EXPECT_EQ(result.exit_code, code::bad_input) << result.err;
  EXPECT_TRUE(contains(result.err, why)) << result.err;
  EXPECT_TRUE(contains(result.err, ": this ascend-setup serves CPython 3.1")) << result.err;
  EXPECT_TRUE(contains(result.err, "not free-threaded")) << result.err;
  EXPECT_TRUE(contains(result.err, "-DASCEND_SETUP_PYTHONS=")) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_TRUE(result.out.empty());
}

// The interpreter's own executable decides the start: one that loads the
// installation's libpython (pyenv's, --enable-shared builds) embeds the
// host; one that carries the interpreter itself (Debian's python3, built
// with LTO and PGO, though libpython3.X is installed beside it) runs it as an
// extension module, in that very interpreter. readelf says which is which.
TEST(Pythons, TheStartFollowsWhetherTheExecutableLoadsLibpython) {
  TempDir dir;
  const Env env = offline_env(dir.path());
  std::set<bool> seen;
  for (const auto& python : found_pythons()) {
    SCOPED_TRACE(python.string());
    const bool loads_libpython = contains(
        must_run({"readelf", "-d", fs::canonical(python).string()}, dir.path()), "libpython");
    seen.insert(loads_libpython);
    const auto way = run_host({"--python", python.string(), "--host-version"}, dir.path(), env);
    ASSERT_EQ(way.exit_code, 0) << way.err;
    if (loads_libpython) {
      EXPECT_TRUE(contains(way.out, ", embedded by the host ")) << way.out;
    } else {
      EXPECT_TRUE(contains(way.out,
                           " as an extension module of the interpreter (its executable "
                           "carries the interpreter; it does not load "))
          << way.out;
    }
  }
  EXPECT_TRUE(seen.count(false)) << "no found interpreter carries the interpreter itself";
}

// The two starts serve the same installation identically: Debian's python3
// (an extension module) and a main on Debian's libpython3.X (embedded) give
// the same kwargs, with SOURCE_DATE_EPOCH the same wheel byte for byte, the
// same exit codes. --host-version and the debug log say which way each took.
TEST(Pythons, BothStartsGiveTheSameRun_StandInMainOnDebiansLibpython) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const fs::path embedded_python = embedded_python_stand_in(dir.path() / "stand-in");
  const std::string version = python_version(SYSTEM_PYTHON);
  Env env = offline_env(dir.path());
  env["SOURCE_DATE_EPOCH"] = "1700000000";

  const auto embedded_way =
      run_host({"--python", embedded_python.string(), "--host-version"}, tree, env);
  EXPECT_TRUE(contains(embedded_way.out, ", embedded by the host ")) << embedded_way.out;
  EXPECT_TRUE(contains(embedded_way.out,
                       "(libpython " + (dir.path() / "stand-in/shared/lib/libpython").string()))
      << embedded_way.out;
  const auto extension_way = run_host({"--python", SYSTEM_PYTHON, "--host-version"}, tree, env);
  EXPECT_TRUE(contains(extension_way.out, "ascend-setup-host-" + version +
                                              ".so as an extension module of the interpreter"))
      << extension_way.out;

  const auto embedded = run_host(
      {"--python", embedded_python.string(), "--dump-kwargs", "--log-level", "debug"}, tree, env);
  ASSERT_EQ(embedded.exit_code, 0) << embedded.err;
  EXPECT_TRUE(
      contains(embedded.err, "embedded CPython " + version + " as " + embedded_python.string()))
      << embedded.err;
  const auto extension =
      run_host({"--python", SYSTEM_PYTHON, "--dump-kwargs", "--log-level", "debug"}, tree, env);
  ASSERT_EQ(extension.exit_code, 0) << extension.err;
  EXPECT_EQ(extension.out, embedded.out);
  EXPECT_TRUE(contains(extension.err, "running as an extension module of CPython " + version +
                                          " as " + SYSTEM_PYTHON))
      << extension.err;

  const auto first = run_host({"--python", embedded_python.string(), "bdist_wheel"}, tree, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  const std::string embedded_wheel = read_file(wheels[0]);
  const auto second = run_host({"--python", SYSTEM_PYTHON, "bdist_wheel"}, tree, env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(contains(second.err, "0 objects compiled")) << second.err;
  ASSERT_EQ(files_in(tree / "dist", ".whl"), wheels);
  EXPECT_TRUE(read_file(wheels[0]) == embedded_wheel) << "the two wheels differ";

  // A usage error and an error in setup.py: the same exit codes.
  for (const std::string& python : {embedded_python.string(), std::string(SYSTEM_PYTHON)}) {
    EXPECT_EQ(run_host({"--python", python, "--dump-kwargs=all"}, tree, env).exit_code,
              code::usage);
  }
  write_file(tree / "setup.py", "raise SystemExit(9)\n");
  for (const std::string& python : {embedded_python.string(), std::string(SYSTEM_PYTHON)}) {
    EXPECT_EQ(run_host({"--python", python, "--dump-kwargs"}, tree, env).exit_code, 9);
  }
}

// A static CPython with no shared libpython at all (manylinux's, a
// --disable-shared build) is an extension module too, with the same run.
TEST(Pythons,
     InterpreterWithoutLibpythonIsServedAsAnExtensionModule_StandInDebiansBinaryCopiedElsewhere) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const fs::path python = static_python_stand_in(dir.path());
  const std::string version = python_version(SYSTEM_PYTHON);
  EXPECT_EQ(must_run({python.string(), "-c", "print(1 + 1)"}, dir.path()), "2\n");
  const Env env = offline_env(dir.path());
  const auto way = run_host({"--python", python.string(), "--host-version"}, tree, env);
  EXPECT_TRUE(contains(way.out, "ascend-setup-host-" + version +
                                    ".so as an extension module of the interpreter (no shared "
                                    "libpython" +
                                    version + " under " + (dir.path() / "static").string() + ")"))
      << way.out;
  const auto copied = run_host({"--python", python.string(), "--dump-kwargs"}, tree, env);
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  const auto installed = run_host({"--python", SYSTEM_PYTHON, "--dump-kwargs"}, tree, env);
  ASSERT_EQ(installed.exit_code, 0) << installed.err;
  EXPECT_EQ(copied.out, installed.out);
}

// No free-threaded CPython exists here: a script in front of "the
// interpreter" (as a pyenv shim is) answering the launcher's question as a
// free-threaded 3.13 does (sys.abiflags "t").
TEST(Pythons, FreeThreadedPythonIsExit3_StandInScriptAnsweringAsAFreeThreadedBuild) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const fs::path python = dir.path() / "nogil" / "bin" / "python3";
  write_file(python, "#!/bin/sh\nprintf 'cpython\\n3.13\\nt\\n%s\\n%s\\n' '" +
                         (dir.path() / "nogil").string() + "' \"$0\"\n");
  fs::permissions(python, fs::perms::owner_all);
  expect_unservable(
      run_host({"--python", python.string(), "--dump-kwargs"}, tree, offline_env(dir.path())),
      "names " + python.string() + ", a free-threaded CPython 3.13");
}

// A free-threaded build installs its binary as python3.Yt: a real CPython
// binary under that name (only the name is staged).
TEST(Pythons, FreeThreadedPythonIsExit3_StandInBinaryNamedLikeAFreeThreadedBuild) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const std::string version = python_version(SYSTEM_PYTHON);
  const fs::path python = dir.path() / "nogil" / "bin" / ("python" + version + "t");
  fs::create_directories(python.parent_path());
  fs::copy_file(fs::canonical(SYSTEM_PYTHON), python);
  expect_unservable(
      run_host({"--python", python.string(), "--dump-kwargs"}, tree, offline_env(dir.path())),
      "a free-threaded CPython " + version);
}

TEST(Pythons, HostVersionListsTheServedMinors) {
  TempDir dir;
  const auto result = run_host({"--host-version"}, dir.path(), offline_env(dir.path()));
  EXPECT_EQ(result.exit_code, 0);
  for (const auto& python : found_pythons()) {
    EXPECT_TRUE(contains(result.out, python_version(python))) << result.out;
  }
}

TEST(Pythons, WheelForAnotherMinorIsBuiltInstalledAndImported_StubLlvm) {
  const std::string default_version = python_version(SYSTEM_PYTHON);
  fs::path python;
  for (const auto& candidate : found_pythons()) {
    if (python_version(candidate) != default_version) {
      python = candidate;
    }
  }
  ASSERT_FALSE(python.empty()) << "only CPython " << default_version << " found";
  const std::string version = python_version(python);
  const std::string tag = "cp" + version.substr(0, 1) + version.substr(2);
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  Env env = offline_env(dir.path());
  env["MAX_JOBS"] = "2";
  env["VIRTUAL_ENV"] = cached_venv(python).string();
  const auto build = run_host({"bdist_wheel"}, tree, env);
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheels[0].filename().string().rfind("triton_ascend-3.6.0-" + tag + "-" + tag, 0), 0u)
      << wheels[0];

  const fs::path venv = dir.path() / "venv";
  must_run({python.string(), "-m", "venv", venv.string()}, dir.path());
  const std::string venv_python = (venv / "bin/python").string();
  must_run(
      {venv_python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheels[0].string()},
      dir.path());
  const std::string out =
      must_run({venv_python, "-c",
                "import sys, triton, importlib.metadata as m\n"
                "print('%d.%d' % sys.version_info[:2], triton._C.libtriton.ir.add(2, 3))\n"
                "print([e.name for e in m.entry_points(group='triton.backends')])\n"},
               dir.path());
  EXPECT_EQ(out, version + " 5\n['ascend', 'nvidia', 'amd']\n");
}

}  // namespace
