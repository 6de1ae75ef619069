// ascend-setup installed the two ways doc/pep517.md documents: `cmake --install`
// into a prefix, and `pip install --no-build-isolation <checkout>` into a venv
// (the project's own backend, python_shims/project_build.py, given the tests'
// build directory so that nothing is compiled twice). Each installed launcher
// finds its hosts and serves the venv it is installed in.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace test_support;

namespace {

TEST(Install, CmakeInstallGivesALauncherItsHostsThePackageAndTheDocs) {
  TempDir dir;
  const fs::path prefix = dir.path() / "prefix";
  must_run({"cmake", "--install", BUILD_DIR, "--prefix", prefix.string()}, dir.path());
  EXPECT_TRUE(fs::exists(prefix / "libexec/ascend-setup/hosts.txt"));
  EXPECT_TRUE(fs::exists(prefix / "lib/python3/dist-packages/ascend_setup/build_meta.py"));
  EXPECT_TRUE(fs::exists(prefix / "share/doc/ascend-setup/README.md"));
  const fs::path tree = copy_example_tree(dir.path());
  const auto result =
      ascend_setup::run_process({{(prefix / "bin/ascend-setup").string(), "--dump-kwargs"},
                                 tree,
                                 offline_env(dir.path()),
                                 {}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["name"], "triton_ascend");
}

TEST(Install, PipInstallOfTheCheckoutIntoAVenv) {
  TempDir dir;
  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv.string()}, dir.path());
  const std::string python = (venv / "bin/python").string();
  must_run({python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
            std::string("--config-settings=build-dir=") + BUILD_DIR, SOURCE_DIR},
           dir.path());
  const fs::path launcher = venv / "bin/ascend-setup";
  ASSERT_TRUE(fs::exists(launcher));
  EXPECT_TRUE(fs::exists(venv / "libexec/ascend-setup/hosts.txt"));

  // The installed launcher serves the venv it is in, like any script of it.
  const fs::path tree = copy_example_tree(dir.path());
  write_file(tree / "setup.py",
             "import sys\nfrom setuptools import setup\n"
             "setup(name='probe', version='1', description=sys.prefix)\n");
  Env env = offline_env(dir.path());
  env["VIRTUAL_ENV"] = venv.string();
  const auto result =
      ascend_setup::run_process({{launcher.string(), "--dump-kwargs=captured"}, tree, env, {}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["description"], venv.string());
  // The backend is importable there and finds the launcher beside it.
  EXPECT_EQ(
      must_run({python, "-c", "import ascend_setup.build_meta as b; print(b._binary())"},
               dir.path(), {{"ASCEND_SETUP_BINARY", std::nullopt}, {"PYTHONPATH", std::nullopt}}),
      launcher.string() + "\n");
}

// The project's own wheel (python_shims/project_build.py, packing this
// build) judged as auditwheel's manylinux_2_34 policy judges a wheel
// (scripts/check-wheel-policy.py: every ELF's NEEDED and symbol versions,
// libpython refused, the tags). A portable build (the quick start's test
// mode) passes and is tagged for the policy; a build linked with the
// system's libraries is tagged linux_<arch> and fails it on those libraries.
TEST(Install, TheProjectsWheelAgainstTheManylinuxPolicy) {
  TempDir dir;
  const fs::path wheels = dir.path() / "wheels";
  must_run(
      {SYSTEM_PYTHON, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "--no-index",
       std::string("--config-settings=build-dir=") + BUILD_DIR, "-w", wheels.string(), SOURCE_DIR},
      dir.path());
  const auto built = files_in(wheels, ".whl");
  ASSERT_EQ(built.size(), 1u);
  const std::string name = built[0].filename().string();
  const auto check = ascend_setup::run_process(
      {{SYSTEM_PYTHON, std::string(SOURCE_DIR) + "/scripts/check-wheel-policy.py",
        built[0].string()},
       dir.path(),
       {},
       {}});
  const auto members = wheel_members(built[0]);
  for (const char* needed : {"ascend_setup/build_meta.py", "/scripts/ascend-setup",
                             "/data/libexec/ascend-setup/hosts.txt"}) {
    EXPECT_TRUE(std::any_of(members.begin(), members.end(), [&](const std::string& m) {
      return contains(m, needed);
    })) << needed;
  }
  if (PORTABLE_BUILD) {
    EXPECT_TRUE(contains(name, "-py3-none-manylinux_2_34_")) << name;
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    EXPECT_TRUE(contains(check.out, "manylinux_2_34")) << check.out;
    EXPECT_TRUE(contains(check.out, ": ok")) << check.out;
  } else {
    EXPECT_TRUE(contains(name, "-py3-none-linux_")) << name;
    EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
    EXPECT_TRUE(contains(check.err, "libgit2.so")) << check.err;
  }
}

}  // namespace
