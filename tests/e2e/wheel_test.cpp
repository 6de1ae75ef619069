// A real wheel from the example tree: real CMake, Ninja and clang/lld, the
// LLVM download replaced by the stub LLVM directory (LLVM_SYSPATH), then
// installed with pip into a fresh venv and imported.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;

TEST(Wheel, BdistWheelBuildsAnInstallableWheel_StubLlvm) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  Env env = offline_env(dir.path());
  env["MAX_JOBS"] = "2";

  const ascend_setup::ProcessResult build = run_host({"bdist_wheel"}, tree, env);
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  std::vector<fs::path> wheels;
  for (const auto& entry : fs::directory_iterator(tree / "dist")) {
    wheels.push_back(entry.path());
  }
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheels[0].filename().string().rfind("triton_ascend-3.6.0-cp3", 0), 0u)
      << wheels[0].filename();

  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", venv.string()}, dir.path());
  const std::string python = (venv / "bin/python").string();
  must_run({python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheels[0].string()},
           dir.path());
  const std::string out = must_run(
      {python, "-c",
       "import triton, importlib.metadata as m\n"
       "print(triton.backends())\n"
       "print(triton._C.libtriton.ir.add(2, 3))\n"
       "print(sorted(e.name for e in m.entry_points(group='triton.backends')))\n"
       "md = m.metadata('triton-ascend')\n"
       "print(md['Home-page'], md['Description-Content-Type'])\n"
       "print('triton (==3.6.0)' in md.get_all('Requires-Dist'))\n"},
      dir.path());
  EXPECT_EQ(out,
            "['ascend', 'nvidia', 'amd']\n5\n['amd', 'ascend', 'nvidia']\n"
            "https://gitcode.com/Ascend/triton-ascend/ text/markdown\nTrue\n");
}
