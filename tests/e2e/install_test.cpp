// ascend-setup installed the two ways doc/pep517.md documents: `cmake --install`
// into a prefix, and `pip install --no-build-isolation <checkout>` into a venv
// (the project's own backend, python_shims/project_build.py, given the tests'
// build directory so that nothing is compiled twice). Each installed launcher
// finds its hosts and serves the venv it is installed in.
#include "test_support.hpp"

#include <gtest/gtest.h>

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
  // The patch options' program is installed beside the hosts.
  const auto status =
      ascend_setup::run_process({{(prefix / "bin/ascend-setup").string(), "--patch-status"},
                                 tree,
                                 offline_env(dir.path()),
                                 {}});
  EXPECT_EQ(status.exit_code, 1) << status.err;  // pristine: not patched for the mode
  EXPECT_TRUE(contains(status.out, "patch not-applied ")) << status.out << status.err;
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
  // The patch options' program, executable as the wheel recorded it.
  const fs::path patches = venv / "libexec/ascend-setup/ascend-setup-patches";
  ASSERT_TRUE(fs::exists(patches));
  EXPECT_NE(fs::status(patches).permissions() & fs::perms::owner_exec, fs::perms::none);

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

}  // namespace
