// The PEP 517/660 backend ascend_setup.build_meta through the real front ends
// (pip wheel, python -m build: sdist then the wheel from the sdist, pip install
// -e) on a copy of the example tree whose pyproject.toml opts in. The backend
// is importable through PYTHONPATH (python_shims) and runs the built launcher
// ($ASCEND_SETUP_BINARY); every wheel is compared with `ascend-setup bdist_wheel`'s.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;

namespace {

const char* opt_in =
    "[build-system]\nrequires = [\"setuptools>=40.8.0\", \"wheel\"]\n"
    "build-backend = \"ascend_setup.build_meta\"\n";

// Name, sorted members (mode and name), METADATA and entry_points.txt of a wheel.
std::string wheel_summary(const fs::path& wheel) {
  return must_run({SYSTEM_PYTHON, "-c",
                   "import sys, os, zipfile\n"
                   "z = zipfile.ZipFile(sys.argv[1])\n"
                   "print(os.path.basename(sys.argv[1]))\n"
                   "for i in sorted(z.infolist(), key=lambda i: i.filename):\n"
                   "    if not i.filename.endswith('/RECORD'):\n"
                   "        print(oct((i.external_attr >> 16) & 0o777)[2:], i.filename)\n"
                   "for n in sorted(z.namelist()):\n"
                   "    if n.endswith(('/METADATA', '/entry_points.txt')):\n"
                   "        print(z.read(n).decode())\n",
                   wheel.string()},
                  wheel.parent_path());
}

class Backend : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = copy_example_tree(dir.path());
    write_file(tree / "pyproject.toml", opt_in);
    env = offline_env(dir.path());
    env["MAX_JOBS"] = "2";
    env["PYTHONPATH"] = PYTHON_SHIMS;
    env["ASCEND_SETUP_BINARY"] = ASCEND_SETUP_BINARY;
    env["PIP_NO_INDEX"] = "1";
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
    // The reference: ascend-setup itself, on a second copy.
    fs::create_directories(dir.path() / "reference");
    const fs::path reference_tree = copy_example_tree(dir.path() / "reference");
    write_file(reference_tree / "pyproject.toml", opt_in);
    const auto build = run_host({"bdist_wheel"}, reference_tree, env);
    ASSERT_EQ(build.exit_code, 0) << build.err;
    const auto wheels = files_in(reference_tree / "dist", ".whl");
    ASSERT_EQ(wheels.size(), 1u);
    reference = wheel_summary(wheels[0]);
  }

  std::string run(const std::vector<std::string>& argv) { return must_run(argv, dir.path(), env); }

  TempDir dir;
  fs::path tree;
  Env env;
  std::string reference;
};

TEST_F(Backend, PipWheelAndPythonMBuildGiveTheAscendWheel_StubLlvm) {
  const fs::path out = dir.path() / "pip-out";
  run({SYSTEM_PYTHON, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w",
       out.string(), tree.string()});
  auto wheels = files_in(out, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheel_summary(wheels[0]), reference);

  // sdist, then the wheel from the unpacked sdist (no git, no build dir).
  const fs::path built = dir.path() / "build-out";
  run({SYSTEM_PYTHON, "-m", "build", "--no-isolation", "-o", built.string(), tree.string()});
  const auto sdists = files_in(built, ".tar.gz");
  ASSERT_EQ(sdists.size(), 1u);
  const std::string listing = run({"tar", "tzf", sdists[0].string()});
  for (const char* needed : {"/setup.py", "/pyproject.toml", "/version.txt", "/CMakeLists.txt",
                             "/README.md", "/third_party/ascend/", "/PKG-INFO"}) {
    EXPECT_TRUE(contains(listing, needed)) << needed << " missing from the sdist:\n" << listing;
  }
  EXPECT_FALSE(contains(listing, "/build/")) << listing;
  wheels = files_in(built, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheel_summary(wheels[0]), reference);
}

TEST_F(Backend, ConfigSettingsReachSetupPyAsWithSetuptools) {
  const fs::path out = dir.path() / "out";
  // --build-option goes after bdist_wheel: a build tag in the wheel's name.
  run({SYSTEM_PYTHON, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
       "--config-settings=--build-option=--build-number=7", "-w", out.string(), tree.string()});
  const auto wheels = files_in(out, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheels[0].filename().string().rfind("triton_ascend-3.6.0-7-", 0), 0u) << wheels[0];
}

TEST_F(Backend, EditableInstallRegistersAscendFirstAndLinksTheBackends_StubLlvm) {
  const fs::path venv = dir.path() / "venv";
  run({SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv.string()});
  const std::string python = (venv / "bin/python").string();
  run({python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "-e",
       tree.string()});
  Env plain = env;
  plain["PYTHONPATH"] = std::nullopt;
  const std::string out =
      must_run({python, "-c",
                "import triton, importlib.metadata as m\n"
                "print(triton.backends(), triton._C.libtriton.ir.add(2, 3))\n"
                "print([e.name for e in m.entry_points(group='triton.backends')])\n"
                "print(triton.__file__)\n"},
               dir.path(), plain);
  EXPECT_EQ(out, "['ascend', 'nvidia', 'amd'] 5\n['ascend', 'nvidia', 'amd']\n" +
                     (tree / "python/triton/__init__.py").string() + "\n");
  // What develop links (add_links(external_only=False)): the backends into the tree.
  EXPECT_TRUE(fs::is_symlink(tree / "python/triton/backends/ascend"));
}

// `python -m build` of a git checkout: the sdist has no .git, yet the wheel
// built from it must be the checkout's (version with +git<HEAD>).
TEST(BackendOfACheckout, WheelFromTheSdistKeepsTheCheckoutsVersion_StubLlvm) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  write_file(tree / "pyproject.toml", opt_in);
  const std::string head = make_git_repo(tree, dir.path());
  Env env = offline_env(dir.path());
  env["MAX_JOBS"] = "2";
  env["PYTHONPATH"] = PYTHON_SHIMS;
  env["ASCEND_SETUP_BINARY"] = ASCEND_SETUP_BINARY;
  // The reference: ascend-setup bdist_wheel in a clone (same HEAD, same branch).
  const fs::path clone = dir.path() / "clone";
  must_run({"git", "clone", "-q", tree.string(), clone.string()}, dir.path(), git_env(dir.path()));
  const auto build = run_host({"bdist_wheel"}, clone, env);
  ASSERT_EQ(build.exit_code, 0) << build.err;
  const auto reference = files_in(clone / "dist", ".whl");
  ASSERT_EQ(reference.size(), 1u);
  EXPECT_TRUE(contains(reference[0].filename().string(), "+git" + head.substr(0, 8)))
      << reference[0];

  const fs::path built = dir.path() / "build-out";
  must_run({SYSTEM_PYTHON, "-m", "build", "--no-isolation", "-o", built.string(), tree.string()},
           dir.path(), env);
  const auto sdists = files_in(built, ".tar.gz");
  ASSERT_EQ(sdists.size(), 1u);
  EXPECT_FALSE(contains(must_run({"tar", "tzf", sdists[0].string()}, dir.path()), "/.git/"));
  const auto wheels = files_in(built, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheel_summary(wheels[0]), wheel_summary(reference[0]));
}

}  // namespace
