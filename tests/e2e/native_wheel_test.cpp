// The native wheel writer in real bdist_wheel runs of the example tree (real
// CMake, Ninja, setuptools, the wheel package): the same tree as the wheel
// package's writer gives (python3 -m wheel unpack), pip installs it, every
// RECORD hash verifies, two builds with SOURCE_DATE_EPOCH are byte-identical,
// unchanged entries are reused and changed ones are not (the build summary
// counts them), hard links into the bdist directory, and a write refused or
// killed midway leaves no wheel (the fail_nth_write LD_PRELOAD stand-in).
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <regex>

using namespace test_support;

namespace {

class NativeWheelTest : public ExampleTreeTest {
 protected:
  NativeWheelTest() {
    env["MAX_JOBS"] = "2";
    env["SOURCE_DATE_EPOCH"] = "1700000000";
  }
  ascend_setup::ProcessResult build(const Env& extra = {}) const {
    Env with = env;
    for (const auto& [name, value] : extra) {
      with[name] = value;
    }
    return run_host({"bdist_wheel"}, tree, with);
  }
  fs::path only_wheel() const {
    const auto wheels = files_in(tree / "dist", ".whl");
    EXPECT_EQ(wheels.size(), 1u);
    return wheels.empty() ? fs::path() : wheels[0];
  }
  // "<compressed> compressed, <reused> reused" from the summary line.
  static std::pair<int, int> counts(const std::string& err) {
    static const std::regex line(
        R"(build summary: wheel .*?(\d+) compressed, (\d+) reused from the previous wheel)");
    std::smatch match;
    if (!std::regex_search(err, match, line)) {
      ADD_FAILURE() << "no summary line in:\n" << err;
      return {-1, -1};
    }
    return {std::stoi(match[1]), std::stoi(match[2])};
  }
  // Every file of `root` (relative path, mode, content), sorted.
  static std::string tree_listing(const fs::path& root) {
    std::vector<std::string> rows;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file()) {
        rows.push_back(fs::relative(entry.path(), root).string() + " " +
                       std::to_string(static_cast<int>(entry.status().permissions())) + " " +
                       std::to_string(std::hash<std::string>()(read_file(entry.path()))));
      }
    }
    std::sort(rows.begin(), rows.end());
    std::string out;
    for (const auto& row : rows) {
      out += row + "\n";
    }
    return out;
  }
  // Entry metadata in order, RECORD's text, and a check of every hash.
  std::string describe(const fs::path& wheel) const {
    return must_run({SYSTEM_PYTHON, "-c",
                     "import sys\n"
                     "from wheel.wheelfile import WheelFile\n"
                     "with WheelFile(sys.argv[1]) as wf:\n"
                     "    for i in wf.infolist():\n"
                     "        wf.read(i)\n"  // raises on a RECORD hash mismatch
                     "        print(i.filename, i.date_time, oct(i.external_attr), i.file_size,\n"
                     "              hex(i.CRC), i.create_version, i.extract_version, i.flag_bits)\n"
                     "    print(wf.read(wf.record_path).decode())\n",
                     wheel.string()},
                    dir.path());
  }
};

TEST_F(NativeWheelTest, SameTreeAsTheWheelPackagesWriterReproducibleAndReused) {
  const auto first = build();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path wheel = only_wheel();
  EXPECT_NE(first.err.find("build summary: "), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("objects compiled"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("build summary: wheel " + wheel.string()), std::string::npos)
      << first.err;
  EXPECT_EQ(counts(first.err).second, 0);
  std::smatch links;
  const std::string err = first.err;
  ASSERT_TRUE(std::regex_search(err, links, std::regex(R"((\d+) hard links)"))) << err;
  EXPECT_GT(std::stoi(links[1]), 0) << "install_lib's copies into the bdist dir are hard links";
  const std::string native_bytes = read_file(wheel);

  // Nothing changed: byte-identical, everything but RECORD copied.
  const auto again = build();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(read_file(wheel) == native_bytes)
      << "SOURCE_DATE_EPOCH: the same input, the same wheel";
  const auto [compressed, reused] = counts(again.err);
  EXPECT_EQ(compressed, 1) << "RECORD alone";
  EXPECT_GT(reused, 10);
  EXPECT_NE(again.err.find(" 0 objects compiled"), std::string::npos) << again.err;

  // The wheel package's own writer, same tree, same epoch.
  const auto python = build({{"ASCEND_SETUP_NATIVE_WHEEL", "0"}});
  ASSERT_EQ(python.exit_code, 0) << python.err;
  EXPECT_EQ(only_wheel(), wheel);
  const fs::path python_wheel = dir.path() / "python" / wheel.filename();
  fs::create_directories(python_wheel.parent_path());
  fs::copy_file(wheel, python_wheel);
  write_file(dir.path() / "native" / wheel.filename(), native_bytes);
  const fs::path native_wheel = dir.path() / "native" / wheel.filename();
  EXPECT_EQ(describe(native_wheel), describe(python_wheel));
  for (const auto* which : {"native", "python"}) {
    must_run(
        {SYSTEM_PYTHON, "-m", "wheel", "unpack", "-d", (dir.path() / "unpacked" / which).string(),
         (dir.path() / which / wheel.filename()).string()},
        dir.path());
  }
  EXPECT_EQ(tree_listing(dir.path() / "unpacked" / "native"),
            tree_listing(dir.path() / "unpacked" / "python"));
  must_run({SYSTEM_PYTHON, "-m", "zipfile", "-t", native_wheel.string()}, dir.path());
  EXPECT_LE(static_cast<double>(fs::file_size(native_wheel)),
            1.02 * static_cast<double>(fs::file_size(python_wheel)));

  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", venv.string()}, dir.path());
  must_run({(venv / "bin/python").string(), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
            native_wheel.string()},
           dir.path());
  EXPECT_EQ(must_run({(venv / "bin/python").string(), "-c",
                      "import triton; print(triton._C.libtriton.ir.add(2, 3))"},
                     dir.path()),
            "5\n");

  // One Python file edited: it and RECORD are compressed, the rest reused
  // (from the native wheel, put back into dist).
  fs::copy_file(native_wheel, wheel, fs::copy_options::overwrite_existing);
  const fs::path edited = tree / "python" / "triton" / "__init__.py";
  write_file(edited, read_file(edited) + "# an edit\n");
  const auto after_edit = build();
  ASSERT_EQ(after_edit.exit_code, 0) << after_edit.err;
  const auto [changed, kept] = counts(after_edit.err);
  EXPECT_EQ(changed, 2) << "triton/__init__.py and RECORD";
  EXPECT_EQ(kept, reused - 1);
  must_run({SYSTEM_PYTHON, "-m", "wheel", "unpack", "-d", (dir.path() / "edited").string(),
            wheel.string()},
           dir.path());
  bool found = false;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path() / "edited")) {
    if (entry.path().filename() == "__init__.py" &&
        entry.path().parent_path().filename() == "triton") {
      EXPECT_TRUE(read_file(entry.path()).ends_with("# an edit\n"));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

// The writer's writes to its partial file refused at the 2nd and 12th write,
// and the process killed at the 3rd: the previous wheel stays as it was and
// no partial file is left (but by the kill, whose file is not a *.whl).
TEST_F(NativeWheelTest, AWriteRefusedOrKilledMidwayLeavesNoNewWheel_FailNthWrite) {
  ASSERT_EQ(build().exit_code, 0);
  const fs::path wheel = only_wheel();
  const std::string before = read_file(wheel);
  const fs::path edited = tree / "python" / "triton" / "__init__.py";
  write_file(edited, read_file(edited) + "# an edit\n");
  for (const int nth : {2, 12}) {
    const auto refused = build({{"LD_PRELOAD", FAIL_NTH_WRITE},
                                {"FAIL_WRITE_MATCH", ".whl.ascend-setup-part-"},
                                {"FAIL_WRITE_NTH", std::to_string(nth)}});
    EXPECT_NE(refused.exit_code, 0) << "write " << nth << ": " << refused.err;
    EXPECT_NE(refused.err.find("Input/output error"), std::string::npos) << refused.err;
    EXPECT_TRUE(read_file(wheel) == before) << "write " << nth;
    for (const auto& entry : fs::directory_iterator(tree / "dist")) {
      EXPECT_EQ(entry.path(), wheel) << "left behind: " << entry.path();
    }
  }
  const auto killed = build({{"LD_PRELOAD", FAIL_NTH_WRITE},
                             {"FAIL_WRITE_MATCH", ".whl.ascend-setup-part-"},
                             {"FAIL_WRITE_NTH", "3"},
                             {"FAIL_WRITE_KILL", "1"}});
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_TRUE(read_file(wheel) == before);
  EXPECT_EQ(files_in(tree / "dist", ".whl"), std::vector<fs::path>{wheel});

  // No previous wheel: nothing at all is left.
  fs::remove_all(tree / "dist");
  const auto first = build({{"LD_PRELOAD", FAIL_NTH_WRITE},
                            {"FAIL_WRITE_MATCH", ".whl.ascend-setup-part-"},
                            {"FAIL_WRITE_NTH", "5"}});
  EXPECT_NE(first.exit_code, 0);
  EXPECT_TRUE(!fs::exists(tree / "dist") || fs::is_empty(tree / "dist"));
  EXPECT_EQ(build().exit_code, 0) << "and the next run writes it";
  EXPECT_EQ(files_in(tree / "dist", ".whl").size(), 1u);
}

// The writer's deflate threads are the CPUs the compiles are sized by: a
// cgroup (a fake one, ASCEND_SETUP_CGROUP_ROOT) with a quota of 1.5 CPUs
// gives 1 thread on this machine, whatever its cores; packing and the
// re-zip of auditwheel's output alike.
TEST_F(NativeWheelTest, DeflateThreadsAreTheCgroupsCpus_AuditwheelStandIn) {
  const fs::path cgroup = dir.path() / "cgroup";
  write_file(cgroup / "cgroup.controllers", "cpu memory\n");
  write_file(cgroup / "cpu.max", "150000 100000\n");
  env["ASCEND_SETUP_CGROUP_ROOT"] = cgroup.string();
  env["ASCEND_SETUP_LOG_LEVEL"] = "debug";
  const auto packed = build();
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  EXPECT_TRUE(contains(packed.err,
                       "wheel: deflating on 1 thread (1.5 CPUs: cgroup v2 cpu.max "
                       "150000/100000 = 1.5 CPUs)"))
      << packed.err;
  EXPECT_TRUE(contains(packed.err, "reused from the previous wheel, 1 deflate thread ("))
      << packed.err;

  env["PATH"] = path_with_stand_ins();
  env["IS_MANYLINUX"] = "1";
  const auto repaired = build();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.err;
  EXPECT_TRUE(contains(repaired.err, "auditwheel's output deflated: ")) << repaired.err;
  EXPECT_TRUE(contains(repaired.err, " reused, 1 deflate thread\n")) << repaired.err;
}

// IS_MANYLINUX on with an auditwheel that takes a compression level (6.1+):
// the wheel it reads is stored, it writes level 0, the native writer deflates
// its output (reusing the previous repaired wheel's unchanged entries); an
// older auditwheel deflates it itself. Either way the wheel is deflated once.
TEST_F(NativeWheelTest, ManylinuxRepairDeflatesOnce_AuditwheelStandIn) {
  const fs::path log = dir.path() / "auditwheel.log";
  env["PATH"] = path_with_stand_ins();
  env["IS_MANYLINUX"] = "1";
  env["AUDITWHEEL_STAND_IN_LOG"] = log.string();
  const auto repaired = build();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.err;
  const fs::path wheel = only_wheel();
  EXPECT_NE(wheel.string().find("manylinux"), std::string::npos);
  EXPECT_NE(read_file(log).find("--zip-compression-level 0"), std::string::npos) << read_file(log);
  const std::string described = describe(wheel);
  must_run({SYSTEM_PYTHON, "-m", "zipfile", "-t", wheel.string()}, dir.path());
  // Deflated: the stored data of libtriton.so would be larger than the wheel.
  const std::string sizes =
      must_run({SYSTEM_PYTHON, "-c",
                "import sys, zipfile\n"
                "z = zipfile.ZipFile(sys.argv[1])\n"
                "print(sum(i.file_size for i in z.infolist()) > sum(i.compress_size for i in "
                "z.infolist()),\n"
                "      all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist()))\n",
                wheel.string()},
               dir.path());
  EXPECT_EQ(sizes, "True True\n");
  EXPECT_NE(repaired.err.find("repair "), std::string::npos);

  const auto again = build();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_GT(counts(again.err).second, 10) << "the previous repaired wheel's entries reused";
  EXPECT_EQ(describe(only_wheel()), described);

  // An auditwheel without the option: asked nothing, it deflates itself.
  fs::remove(log);
  const auto old = build({{"AUDITWHEEL_STAND_IN_OLD", "1"}});
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(read_file(log).find("--zip-compression-level"), std::string::npos) << read_file(log);
  EXPECT_EQ(describe(only_wheel()), described);
}

}  // namespace
