// A tree whose setup.py carries the in-tree layer (hooks into
// third_party/ascend/build, the maintainers' newer form): the built-in
// in-tree profile is chosen by what the tree holds, its hooks do nothing
// while ascend-setup runs setup.py, and the layer is applied once. The
// stand-in layer is written for the test: if its hooks ran, prepare() would
// leave a file and rename the wheel, and activate() would add the ascend
// backend a second time and swap cmdclass.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;
using ascend_setup::ProcessResult;

namespace {

class InTreeLayerTest : public ExampleTreeTest {
 protected:
  InTreeLayerTest() {
    write_file(tree / "third_party/ascend/build/__init__.py",
               "from .setup_patch import prepare, activate\n");
    write_file(
        tree / "third_party/ascend/build/setup_patch.py",
        "import os, sys\n"
        "from pathlib import Path\n"
        "ROOT = Path(__file__).resolve().parents[3]\n"
        "def prepare():\n"
        "    (ROOT / 'prepare-ran').write_text('yes')\n"
        "    os.environ['TRITON_WHEEL_NAME'] = 'renamed_by_prepare'\n"
        "def activate():\n"
        "    (ROOT / 'activate-ran').write_text('yes')\n"
        "    g = sys._getframe(1).f_globals\n"
        "    real = g['setup']\n"
        "    def wrapped(**kwargs):\n"
        "        g['backends'] = [g['BackendInstaller'].prepare('ascend'), *g['backends']]\n"
        "        kwargs['entry_points'] = g['get_entry_points']()\n"
        "        class InTreeBuildWheel(g['bdist_wheel']):\n"
        "            pass\n"
        "        kwargs['cmdclass'] = dict(kwargs['cmdclass'], bdist_wheel=InTreeBuildWheel)\n"
        "        return real(**kwargs)\n"
        "    g['setup'] = wrapped\n");
    edit("setup.py", "from python.build_helpers import get_base_dir, get_cmake_dir  # noqa: E402\n",
         "from python.build_helpers import get_base_dir, get_cmake_dir  # noqa: E402\n"
         "from third_party.ascend.build import prepare, activate  # noqa: E402\n"
         "prepare()\n");
    edit("setup.py", "\nsetup(\n", "\nactivate()\nsetup(\n");
  }
};

}  // namespace

TEST_F(InTreeLayerTest, TheInTreeProfileIsChosenAndItsHooksDoNothing) {
  env["ASCEND_SETUP_LOG_LEVEL"] = "debug";
  const ProcessResult dump = host({"--dump-kwargs"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_TRUE(contains(dump.err, "profile triton-ascend-3.6.0-in-tree")) << dump.err;
  EXPECT_TRUE(contains(dump.err, "the tree holds third_party/ascend/build/setup_patch.py"))
      << dump.err;
  EXPECT_TRUE(contains(dump.err, "in-tree hook third_party.ascend.build.prepare() skipped"));
  EXPECT_TRUE(contains(dump.err, "in-tree hook third_party.ascend.build.activate() skipped"));
  EXPECT_FALSE(fs::exists(tree / "prepare-ran"));
  EXPECT_FALSE(fs::exists(tree / "activate-ran"));

  const auto kwargs = parse_json(dump.out);
  EXPECT_EQ(kwargs["name"], "triton_ascend");
  EXPECT_EQ(
      backend_entry_points(kwargs),
      (std::vector<std::string>{"ascend = triton.backends.ascend",
                                "nvidia = triton.backends.nvidia", "amd = triton.backends.amd"}))
      << "the ascend backend once, first";
  EXPECT_EQ(kwargs["cmdclass"]["bdist_wheel"], "__main__.BuildWheel");
  // The newer layer's values.
  const auto& requires_ = kwargs["install_requires"];
  EXPECT_NE(std::find(requires_.begin(), requires_.end(), "pytest>=8.3.2,<9.0.0"), requires_.end());
  EXPECT_NE(std::find(requires_.begin(), requires_.end(), "pyelftools>=0.29"), requires_.end());
  EXPECT_EQ(requires_.back(), "triton==3.6.0");

  // Upstream's own kwargs: nothing of either layer.
  const ProcessResult captured = host({"--dump-kwargs=captured"});
  ASSERT_EQ(captured.exit_code, 0) << captured.err;
  const auto upstream = parse_json(captured.out);
  EXPECT_EQ(
      backend_entry_points(upstream),
      (std::vector<std::string>{"nvidia = triton.backends.nvidia", "amd = triton.backends.amd"}));
  EXPECT_EQ(upstream["cmdclass"]["bdist_wheel"], "__main__.plugin_bdist_wheel");
  EXPECT_FALSE(fs::exists(tree / "activate-ran"));
}

// The test can fail: with the entry-era profile the hooks are not inert and
// the stand-in layer applies itself (its backend and wheel name are in what
// setup.py hands to setup()); ascend-setup would apply the layer on top, a
// second time, so it refuses.
TEST_F(InTreeLayerTest, WithoutTheInTreeProfileTheHooksWouldDoubleTheLayer) {
  const fs::path entry_profile = write_profile(dir.path() / "entry.toml", {});
  const ProcessResult captured =
      host({"--profile", entry_profile.string(), "--dump-kwargs=captured"});
  ASSERT_EQ(captured.exit_code, 0) << captured.err;
  EXPECT_TRUE(fs::exists(tree / "prepare-ran"));
  EXPECT_TRUE(fs::exists(tree / "activate-ran"));
  const auto kwargs = parse_json(captured.out);
  const auto backends = backend_entry_points(kwargs);
  EXPECT_EQ(std::count(backends.begin(), backends.end(), "ascend = triton.backends.ascend"), 1)
      << "the backend added by the hook";
  EXPECT_EQ(kwargs["name"], "renamed_by_prepare");

  const ProcessResult dump = host({"--profile", entry_profile.string(), "--dump-kwargs"});
  EXPECT_EQ(dump.exit_code, 4) << dump.out << dump.err;
  EXPECT_TRUE(contains(dump.err,
                       "setup.py already carries the Ascend layer (`ascend` is already among "
                       "setup.py's backends)"))
      << dump.err;
}

TEST_F(InTreeLayerTest, DoctorSaysTheTreeCarriesTheLayerAndAscendSetupReplacesIt) {
  const ProcessResult text = host({"--doctor"});
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_TRUE(contains(text.out, "profile triton-ascend-3.6.0-in-tree")) << text.out;
  EXPECT_TRUE(contains(text.out,
                       "layer in-tree (the tree holds "
                       "third_party/ascend/build/setup_patch.py): the tree carries the "
                       "layer itself"))
      << text.out;
  const auto report = parse_json(host({"--doctor=json"}).out);
  EXPECT_TRUE(contains(report["layer"].get<std::string>(), "applies the layer once, natively"));
  EXPECT_FALSE(fs::exists(tree / "prepare-ran"));

  // A tree without the marker keeps the entry-era profile.
  fs::remove_all(tree / "third_party/ascend/build");
  edit("setup.py",
       "from third_party.ascend.build import prepare, activate  # noqa: E402\nprepare()\n", "");
  edit("setup.py", "\nactivate()\nsetup(\n", "\nsetup(\n");
  const auto entry = parse_json(host({"--doctor=json"}).out);
  EXPECT_EQ(entry["profile"]["name"], "triton-ascend-3.6.0");
  EXPECT_EQ(entry["layer"], "entry");
}

// A real wheel of the stand-in tree: the layer once (ascend first in the
// installed entry points, the hooks never ran), and the warning that the
// checkout stays patched.
TEST_F(InTreeLayerTest, BdistWheelAppliesTheLayerOnceAndSaysHowToRestore_StubLlvm) {
  make_git_repo(tree, dir.path());
  env["MAX_JOBS"] = "2";
  env["PATH"] = path_with_stand_ins();
  const ProcessResult build = host({"bdist_wheel"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_FALSE(fs::exists(tree / "prepare-ran"));
  EXPECT_FALSE(fs::exists(tree / "activate-ran"));
  const std::string warning = "`ascend-setup --restore-sources` restores them";
  EXPECT_TRUE(contains(build.err, warning)) << build.err;
  EXPECT_EQ(build.err.find(warning), build.err.rfind(warning)) << "one warning";

  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  const std::string entry_points =
      must_run({SYSTEM_PYTHON, "-c",
                "import sys, zipfile\n"
                "z = zipfile.ZipFile(sys.argv[1])\n"
                "name = [n for n in z.namelist() if n.endswith('.dist-info/entry_points.txt')][0]\n"
                "sys.stdout.write(z.read(name).decode())\n",
                wheels[0].string()},
               dir.path());
  EXPECT_TRUE(contains(entry_points,
                       "[triton.backends]\nascend = triton.backends.ascend\n"
                       "nvidia = triton.backends.nvidia\n"))
      << entry_points;

  // --restore-sources brings every tracked file back.
  ASSERT_EQ(host({"--restore-sources"}).exit_code, 0);
  EXPECT_EQ(
      must_run({"git", "status", "--porcelain", "--untracked-files=no"}, tree, git_env(dir.path())),
      "");
}

// A tree that adopted ascend_setup.hooks (its layer package is the one line,
// no setup_patch.py): the in-tree profile, the hooks inert under the command
// (the interpreter has no ascend_setup installed: the stand-in serves the
// import), the layer applied once.
TEST_F(InTreeLayerTest, ATreeAdoptingAscendSetupHooksBdistWheelAppliesTheLayerOnce_StubLlvm) {
  fs::remove(tree / "third_party/ascend/build/setup_patch.py");
  write_file(tree / "third_party/ascend/build/__init__.py",
             "from ascend_setup.hooks import prepare, activate\n");
  env["ASCEND_SETUP_LOG_LEVEL"] = "debug";
  env["MAX_JOBS"] = "2";
  const ProcessResult build = host({"bdist_wheel"});
  ASSERT_EQ(build.exit_code, 0) << build.err;
  EXPECT_TRUE(contains(build.err, "profile triton-ascend-3.6.0-in-tree")) << build.err;
  EXPECT_TRUE(contains(build.err,
                       "the tree holds third_party/ascend/build/__init__.py, which "
                       "names ascend_setup.hooks"))
      << build.err;
  EXPECT_FALSE(contains(build.err, "ascend_setup.hooks: the tree")) << "the hooks ran";
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_TRUE(contains(wheel_summary(wheels[0]),
                       "[triton.backends]\nascend = triton.backends.ascend\n"
                       "nvidia = triton.backends.nvidia\namd = triton.backends.amd\n"))
      << wheel_summary(wheels[0]);

  // setup.py importing the hooks itself: the stand-in too.
  edit("setup.py", "from third_party.ascend.build import prepare, activate",
       "from ascend_setup.hooks import prepare, activate");
  const auto kwargs = parse_json(host({"--dump-kwargs"}).out);
  EXPECT_EQ(
      backend_entry_points(kwargs),
      (std::vector<std::string>{"ascend = triton.backends.ascend",
                                "nvidia = triton.backends.nvidia", "amd = triton.backends.amd"}));
}
