// The 3.7.0 line (the maintainers' in-tree layer for upstream Triton 3.7.0,
// li-lizhe/triton-ascend ee05fd4) on the 3.7 example tree, whose
// AscendNPU-IR is a nested git checkout as a submodule's is: its profile
// chosen with no option, the doctor before (the 3.6.0 profile) and after,
// setup()'s kwargs in the CI variants, the NPU-IR patch inside the nested
// checkout through --apply-patches, --patch-status, --restore-sources and
// --force-patches, a power loss at every write, and the wheel.
#include "line_tree.hpp"

#include <gtest/gtest.h>

using namespace test_support;

namespace {

const char* const npuir = "third_party/ascend/AscendNPU-IR";
const char* const npuir_patch = "third_party/ascend/patch/npuir_adapter_to_llvm_23.patch";

fs::path example_370() { return fs::path(EXAMPLE_TREE).parent_path() / "triton-3.7"; }

class Line370Test : public LineTreeTest {
 protected:
  Line370Test() : LineTreeTest("triton-3.7") {}

  // What `git apply` makes of a plain copy: the release set (main patch,
  // then the NPU-IR patch with --directory), file by file.
  std::map<std::string, std::string> reference_patched() const {
    const fs::path reference = dir.path() / "reference";
    fs::copy(example_370(), reference, fs::copy_options::recursive);
    must_run({"git", "apply", "third_party/ascend/patch/triton-ascend-3.7.0.patch"}, reference,
             git_env(dir.path()));
    must_run({"git", "apply", "--directory=" + std::string(npuir), npuir_patch}, reference,
             git_env(dir.path()));
    return files_under(reference);
  }
};

TEST_F(Line370Test, TheTreeGetsThe370ProfileAndItsKwargsInEachCiVariant) {
  auto dump = host({"--log-level", "debug", "--dump-kwargs"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_TRUE(contains(dump.err, "profile triton-ascend-3.7.0-in-tree")) << dump.err;
  auto kwargs = parse_json(dump.out);
  EXPECT_EQ(kwargs["name"], "triton_ascend");
  EXPECT_EQ(kwargs["version"], "3.7.0+git" + head.substr(0, 8)) << "version.txt plus the hash";
  EXPECT_FALSE(kwargs.contains("long_description_content_type"))
      << "the 3.7.0 layer sets none: " << kwargs.dump();
  EXPECT_EQ(kwargs["install_requires"].back(), "triton==3.7.0");
  EXPECT_EQ(kwargs["cmdclass"]["bdist_wheel"], "__main__.BuildWheel");

  dump = host({"--dump-kwargs"}, {{"IS_MANYLINUX", "1"}});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(parse_json(dump.out)["version"], "3.7.0") << "no hash on manylinux";

  dump = host({"--dump-kwargs"}, {{"IS_MANYLINUX", "1"}, {"TRITON_WHEEL_VERSION_SUFFIX", "rc1"}});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(parse_json(dump.out)["version"], "3.7.0rc1");

  // The LLVM package's system suffix changes no kwarg.
  const auto plain = parse_json(host({"--dump-kwargs"}).out);
  dump = host({"--dump-kwargs"}, {{"TRITON_LLVM_SYSTEM_SUFFIX", "ubuntu-arm64"}});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(parse_json(dump.out), plain);
}

// With only the 3.6.0 in-tree profile, the doctor names every reason the
// 3.7.0 tree does not fit it; with the built-in choice (3.7.0) it finds nothing.
TEST_F(Line370Test, TheDoctorNamesEveryReasonUnderThe360ProfileAndNoneUnderThe370One) {
  const fs::path profile_360 = dir.path() / "triton-ascend-3.6.0-in-tree.toml";
  write_file(profile_360, std::string(in_tree_profile_text()));
  const auto before = host({"--profile", profile_360.string(), "--doctor=json"});
  EXPECT_EQ(before.exit_code, 7) << before.err;
  const auto report = parse_json(before.out);
  std::set<std::string> found;
  for (const auto& finding : report["findings"]) {
    found.insert(finding["kind"].get<std::string>() + " " + finding["subject"].get<std::string>());
  }
  for (const char* expected :
       {"upstream-version TRITON_VERSION", "version-file version.txt",
        "missing-patch third_party/ascend/patch/triton-ascend-3.6.0.patch",
        "missing-patch third_party/ascend/patch/triton-ascend-dev-3.6.0.patch",
        "unused-patch third_party/ascend/patch/npuir_adapter_to_llvm_23.patch",
        "unused-patch third_party/ascend/patch/triton-ascend-3.7.0.patch",
        "unused-patch third_party/ascend/patch/triton-ascend-dev-3.7.0.patch",
        "tool-not-built third_party/ascend/bin/triton-mlir-opt"}) {
    EXPECT_TRUE(found.count(expected)) << expected << " not found in " << before.out;
  }
  EXPECT_EQ(git_status(tree), "") << "the doctor wrote something";

  const auto after = host({"--doctor"});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  EXPECT_TRUE(contains(after.out, "profile triton-ascend-3.7.0-in-tree")) << after.out;
  EXPECT_TRUE(contains(after.out, "healthy: the tree fits the profile")) << after.out;
}

TEST_F(Line370Test, TheNpuIrPatchIsAppliedReportedAndRestoredInsideTheNestedCheckout) {
  auto status = host({"--release", "--patch-status"});
  EXPECT_EQ(status.exit_code, 1) << status.err;
  EXPECT_TRUE(contains(status.out, "patch not-applied npuir_adapter_to_llvm_23.patch\n"))
      << status.out;

  const auto apply = host({"--release", "--apply-patches"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  const auto patched = files_under(tree);
  const auto reference = reference_patched();
  for (const auto& [file, hash] : reference) {
    if (file == ".gitmodules") {
      continue;  // the test's own: it points the submodule at its local repository
    }
    EXPECT_EQ(patched.count(file) ? patched.at(file) : "(missing)", hash) << file;
  }
  EXPECT_NE(git_status(tree / npuir), "") << "nothing patched inside the checkout";

  status = host({"--release", "--patch-status"});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_TRUE(contains(status.out, "patch applied npuir_adapter_to_llvm_23.patch\n")) << status.out;
  EXPECT_TRUE(contains(status.out, std::string("file patched ") + npuir + "/")) << status.out;

  // Nothing changed: nothing written, no process started (the record).
  const auto again = host({"--release", "--apply-patches"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "up to date, no file touched")) << again.err;

  const auto restore = host({"--restore-sources"});
  ASSERT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(git_status(tree / npuir), "") << "the file the patch added, or a change, stayed";
  EXPECT_EQ(git_status(tree), "");
}

TEST_F(Line370Test, AnEditOverlappingTheNpuIrPatchExits5AndForceSavesIt) {
  const fs::path patched_file = tree / npuir / "lib/Conversion/Adapter.cpp";
  const std::string before = read_file(patched_file);
  // A line the NPU-IR patch's hunk in Adapter.cpp changes, edited by the user.
  const std::string patch = read_file(tree / npuir_patch);
  const auto removed =
      patch.find("\n-", patch.find("@@", patch.find("+++ b/lib/Conversion/Adapter.cpp")));
  ASSERT_NE(removed, std::string::npos) << patch;
  const std::string line = patch.substr(removed + 2, patch.find('\n', removed + 1) - removed - 2);
  const std::string mine = replace_once(before, line, line + " // mine");
  write_file(patched_file, mine);
  const auto tree_before = files_under(tree);

  const auto run = host({"--release", "--apply-patches"});
  EXPECT_EQ(run.exit_code, 5) << run.err;
  EXPECT_TRUE(contains(run.err, std::string(npuir) + "/lib/Conversion/Adapter.cpp")) << run.err;
  EXPECT_EQ(files_under(tree), tree_before) << "something was written";

  const auto forced = host({"--release", "--apply-patches", "--force-patches"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  const auto saved = files_in(tree / "build/ascend-setup/patches/saved", "");
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(read_file(saved[0] / npuir / "lib/Conversion/Adapter.cpp"), mine);
  EXPECT_EQ(files_under(tree).at(std::string(npuir) + "/lib/Conversion/Adapter.cpp"),
            reference_patched().at(std::string(npuir) + "/lib/Conversion/Adapter.cpp"))
      << "patched from the nested checkout's committed content";
}

// A SIGKILL at every write of --apply-patches (the stand-in preload), then
// any run: the tree and the nested checkout are both pristine or both patched.
TEST_F(Line370Test, PowerLossAtEveryWriteLeavesTheTreeAndTheNestedCheckoutWhole) {
  expect_whole_at_every_write(FAIL_NTH_WRITE, npuir);
}

// The wheel of the 3.7 example: their layer's metadata, triton-opt stripped
// beside the extension and no triton-mlir-opt (gone with LLVM 23).
TEST_F(Line370Test, BdistWheelHasTheLinesMetadataAndOnlyAStrippedTritonOpt_StubLlvm) {
  env["MAX_JOBS"] = "2";
  const auto build = host({"bdist_wheel"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheels[0].filename().string().rfind("triton_ascend-3.7.0+git" + head.substr(0, 8), 0),
            0u)
      << wheels[0];
  const auto members = wheel_members(wheels[0]);
  EXPECT_TRUE(contains(members, "755 triton/_C/triton-opt")) << testing::PrintToString(members);
  for (const auto& member : members) {
    EXPECT_FALSE(contains(member, "triton-mlir-opt")) << member;
  }
  const fs::path unpacked = dir.path() / "unpacked";
  must_run({"python3", "-m", "zipfile", "-e", wheels[0].string(), unpacked.string()}, dir.path());
  const auto symbols = ascend_setup::run_process(
      {{"nm", (unpacked / "triton/_C/triton-opt").string()}, dir.path(), {}, ""});
  EXPECT_TRUE(contains(symbols.err, "no symbols")) << "triton-opt is not stripped";
  const auto metadata = files_in(unpacked, ".dist-info");
  ASSERT_EQ(metadata.size(), 1u);
  const std::string text = read_file(metadata[0] / "METADATA");
  EXPECT_TRUE(contains(text, "\nRequires-Dist: triton (==3.7.0)\n")) << text;
  EXPECT_FALSE(contains(text, "Description-Content-Type")) << text;
  EXPECT_TRUE(contains(text, "\nName: triton_ascend\n") ||
              contains(text, "\nName: triton-ascend\n"))
      << text;
}

}  // namespace
