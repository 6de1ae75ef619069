// A full disk in the build directory or in dist/ (a small tmpfs the test
// mounts there, always unmounted): where ascend-setup's own write fails, one
// line that says the disk is full, where and, when known, how much the step
// needed, exit 3; where a tool's write fails (cmake, the compiler,
// auditwheel), that tool's failure, its own output saying why; nothing
// partial in dist/; the sources as a stop leaves them (patching rolled back,
// finished patches kept); the rerun with room goes on. A nearly full disk is
// never a reason by itself: a compile error stays one.
#include "base/util/error.hpp"
#include "base/util/strings.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace test_support;

namespace {

class FullDiskTest : public ExampleTreeTest {
 protected:
  FullDiskTest() { env["MAX_JOBS"] = "2"; }

  // Checks the one-line report of a full disk at `where` and its exit code;
  // no traceback but a tool's own (`tool_traceback`: auditwheel is Python).
  static void expect_full_disk(const ascend_setup::ProcessResult& run, const std::string& where,
                               bool tool_traceback = false) {
    EXPECT_EQ(run.exit_code, 3) << run.err;
    const std::string said = "ascend-setup: error: the disk is full: ";
    const std::string line = error_line(run.err);
    ASSERT_EQ(line.rfind(said, 0), 0u) << run.err;
    const auto at = run.err.find(said);
    EXPECT_TRUE(contains(line, where)) << line;
    EXPECT_TRUE(contains(line, " free of ")) << line;
    EXPECT_EQ(run.err.find(said, at + 1), std::string::npos) << "said twice: " << run.err;
    EXPECT_TRUE(tool_traceback || !contains(run.err, "Traceback")) << run.err;
    EXPECT_FALSE(contains(run.err, "File \"setup.py\"")) << run.err;
    EXPECT_FALSE(contains(run.err, "exited with")) << run.err;
  }

  // A tool that failed (`code`), its output saying the disk is full
  // (strerror(ENOSPC)), and no claim of ascend-setup's own that it is.
  static void expect_tool_failure(const ascend_setup::ProcessResult& run, int code,
                                  const std::string& line) {
    EXPECT_EQ(run.exit_code, code) << run.err;
    EXPECT_TRUE(contains(run.out + run.err, "No space left on device")) << run.out << run.err;
    EXPECT_FALSE(contains(run.err, "the disk is full")) << run.err;
    EXPECT_EQ(lines_with(run.err, "ascend-setup: error: ").size(), 1u) << run.err;
    EXPECT_TRUE(contains(run.err, line)) << run.err;
  }

  // Every file directly in `directory` but the disk's filler.
  static std::vector<std::string> listing(const fs::path& directory) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(directory)) {
      if (entry.path().filename() != ".filler") {
        names.push_back(entry.path().filename().string());
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

// dist/ full while the native writer packs: the previous wheel stays whole,
// no partial wheel is left, and the message says what the wheel needs.
TEST_F(FullDiskTest, FullDistWhilePackingKeepsThePreviousWheelWhole) {
  const SmallDisk disk(tree / "dist", "64m");
  const auto first = host({"bdist_wheel"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  const std::string previous = read_file(wheels[0]);
  const auto before = listing(tree / "dist");

  disk.fill(16 << 10);
  const auto full = host({"bdist_wheel"});
  expect_full_disk(full, "cannot write the wheel " + wheels[0].string() + " (");
  EXPECT_TRUE(contains(full.err, "; the step needs about ")) << full.err;
  EXPECT_EQ(read_file(wheels[0]), previous);
  EXPECT_EQ(listing(tree / "dist"), before) << "a partial wheel was left";

  fs::remove(tree / "dist/.filler");
  const auto again = host({"bdist_wheel"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "build summary: 0 objects compiled")) << again.err;
}

// dist/ full while auditwheel repairs (its output does not fit): auditwheel's
// failure, the built wheel and the previous repaired one stay whole, no
// partial repaired wheel.
TEST_F(FullDiskTest, FullDistWhileRepairingKeepsTheWheels_AuditwheelStandIn) {
  env["PATH"] = path_with_stand_ins();
  env["IS_MANYLINUX"] = "1";
  const SmallDisk disk(tree / "dist", "64m");
  const auto first = host({"bdist_wheel"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto repaired = files_in(tree / "dist", ".whl");
  ASSERT_EQ(repaired.size(), 1u);
  const std::string previous = read_file(repaired[0]);
  // The built wheel is written stored: about the entries' sizes. It fits,
  // auditwheel's copy of it does not.
  const std::string stored = must_run(
      {SYSTEM_PYTHON, "-c",
       "import sys, zipfile\n"
       "z = zipfile.ZipFile(sys.argv[1])\n"
       "print(sum(i.file_size + 2 * len(i.filename) + 100 for i in z.infolist()), end='')\n",
       repaired[0].string()},
      dir.path());
  disk.fill(std::stoull(stored) * 3 / 2);

  const auto full = host({"bdist_wheel"});
  expect_tool_failure(full, 3, "auditwheel repair of ");
  EXPECT_TRUE(contains(full.err, "the original wheel stays")) << full.err;
  EXPECT_EQ(read_file(repaired[0]), previous);
  const auto names = listing(tree / "dist");
  ASSERT_EQ(names.size(), 2u) << "a partial wheel was left: " << ascend_setup::join(names);
  for (const auto& wheel : files_in(tree / "dist", ".whl")) {
    must_run({SYSTEM_PYTHON, "-m", "zipfile", "-t", wheel.string()}, dir.path());
  }
}

// The build directory (where ascend-setup keeps the patch journal) full while
// patching: nothing of the tree is written, as a stop during patching leaves it.
TEST_F(FullDiskTest, FullBuildDirectoryWhilePatchingLeavesTheSourcesUntouched) {
  const auto sources = source_mtimes(tree);
  const SmallDisk disk(tree / "build", "16m");
  disk.fill(4 << 10);
  const auto full = host({"bdist_wheel"});
  expect_full_disk(full, (tree / "build/ascend-setup/patches").string());
  EXPECT_EQ(source_mtimes(tree), sources) << "a source file was written";
  EXPECT_FALSE(fs::exists(tree / "build/ascend-setup/patches/journal/journal.json"));
  EXPECT_FALSE(fs::exists(tree / "dist"));
  const auto status = host({"--patch-status"});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
}

// The cmake build directory (TRITON_BUILD_DIR, as upstream's get_cmake_dir
// reads it) full during configure, then during compile: the failed cmake
// call, cmake's and the compiler's own output saying why above it; the
// patches stay applied, the rerun with room builds.
TEST_F(FullDiskTest, FullBuildDirectoryDuringConfigureAndCompileIsTheToolsFailure) {
  const fs::path build_dir = dir.path() / "cmake-build";
  env["TRITON_BUILD_DIR"] = build_dir.string();
  env["TRITON_BUILD_WITH_CCACHE"] = "OFF";
  const SmallDisk disk(build_dir, "64m");

  disk.fill(8 << 10);
  const auto configure = host({"bdist_wheel"});
  expect_tool_failure(configure, 1, "ascend-setup: error: `cmake ");
  EXPECT_FALSE(fs::exists(tree / "dist"));

  fs::remove(build_dir / ".filler");
  const auto roomy = host({"bdist_wheel"});
  ASSERT_EQ(roomy.exit_code, 0) << roomy.err;
  EXPECT_TRUE(contains(roomy.err, "up to date, no file touched")) << roomy.err;

  // Every object to compile again, on a disk with room for configure (which
  // rewrites its files) but not for an object of a megabyte.
  for (const auto& entry : fs::recursive_directory_iterator(build_dir)) {
    if (entry.path().extension() == ".o") {
      fs::remove(entry.path());
    }
  }
  disk.fill(512 << 10);
  const auto wheel = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheel.size(), 1u);
  const std::string previous = read_file(wheel[0]);
  const auto compile = host({"bdist_wheel"});
  expect_tool_failure(compile, 1, "ascend-setup: error: `cmake --build");
  EXPECT_EQ(read_file(wheel[0]), previous);
}

// A compile error while the temporary directory is a small tmpfs nearly
// full (less than 5 % and 256 MiB free, as on many CI machines): the
// compile error it is, exit 1, never "the disk is full".
TEST_F(FullDiskTest, ACompileErrorBesideANearlyFullDiskIsACompileError) {
  const SmallDisk tmp(dir.path() / "tmp", "64m");
  tmp.fill(3 << 20);
  env["TMPDIR"] = tmp.path().string();
  write_file(tree / "python/src/main.cc",
             "#error broken on purpose\n" + read_file(tree / "python/src/main.cc"));
  const auto broken = host({"bdist_wheel"});
  EXPECT_EQ(broken.exit_code, ascend_setup::exit_code::python_error) << broken.err;
  EXPECT_TRUE(contains(broken.out + broken.err, "broken on purpose")) << broken.out << broken.err;
  EXPECT_FALSE(contains(broken.err, "the disk is full")) << broken.err;
  EXPECT_EQ(lines_with(broken.err, "ascend-setup: error: ").size(), 1u) << broken.err;
}

}  // namespace
