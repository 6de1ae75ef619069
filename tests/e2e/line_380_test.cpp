// The 3.8.0 line (the maintainers' entry layer for upstream Triton 3.8.0,
// TecJesh/triton-ascend 1828d56) on the 3.8 example tree, of upstream's new
// shape: setup.py without get_llvm_package_info, python/build_helpers.py run
// by CMake as a process of its own, cmake/llvm-info.json. Its profile chosen
// with no option (the entry form, and the in-tree one once the tree adopts
// the hooks), the doctor before (the 3.6.0 profile) and after, the kwargs in
// the CI variants, an offline build without LLVM_SYSPATH, the NPU-IR patch
// of a CRLF checkout through --apply-patches, a second apply and
// --restore-sources, a power loss at every write, and the wheel built with
// the LLVM ascend-setup fetched from a loopback server and handed to CMake
// while upstream's helper downloads nothing.
#include "line_tree.hpp"
#include "loopback_servers.hpp"
#include "package_build.hpp"

#include "base/util/strings.hpp"

#include <gtest/gtest.h>

using namespace test_support;

namespace line_380_test {  // named: the unity build joins it with line_370_test

const char* const npuir = "third_party/ascend/AscendNPU-IR";
const char* const npuir_patch = "third_party/ascend/patch/npuir_adapter_to_llvm_24.patch";
const char* const npuir_lists = "third_party/ascend/AscendNPU-IR/CMakeLists.txt";
const char* const npuir_added = "third_party/ascend/AscendNPU-IR/lib/Conversion/Llvm24Compat.cpp";

fs::path example_380() { return fs::path(EXAMPLE_TREE).parent_path() / "triton-3.8"; }

std::set<std::string> finding_keys(const nlohmann::ordered_json& report) {
  std::set<std::string> found;
  for (const auto& finding : report["findings"]) {
    found.insert(finding["kind"].get<std::string>() + " " + finding["subject"].get<std::string>());
  }
  return found;
}

class Line380Test : public LineTreeTest {
 protected:
  Line380Test() : LineTreeTest("triton-3.8") {}

  // What their layer makes of a plain copy: the release set (main patch,
  // then the NPU-IR patch with --directory, after the CRLF of the files it
  // names that exist was made LF), file by file.
  std::map<std::string, std::string> reference_patched() const {
    const fs::path reference = dir.path() / "reference";
    fs::copy(example_380(), reference, fs::copy_options::recursive);
    must_run({"git", "apply", "third_party/ascend/patch/triton-ascend-3.8.0.patch"}, reference,
             git_env(dir.path()));
    write_file(reference / npuir_lists,
               ascend_setup::replace_all(read_file(reference / npuir_lists), "\r\n", "\n"));
    must_run({"git", "apply", "--directory=" + std::string(npuir), npuir_patch}, reference,
             git_env(dir.path()));
    return files_under(reference);
  }
};

TEST_F(Line380Test, TheTreeGetsThe380ProfileOfItsFormAndItsKwargsInEachCiVariant) {
  auto dump = host({"--log-level", "debug", "--dump-kwargs"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_TRUE(contains(dump.err, "debug: profile triton-ascend-3.8.0 ")) << dump.err;
  const auto kwargs = parse_json(dump.out);
  EXPECT_EQ(kwargs["name"], "triton_ascend");
  EXPECT_EQ(kwargs["version"], "3.8.0+git" + head.substr(0, 8)) << "version.txt plus the hash";
  EXPECT_FALSE(kwargs.contains("long_description_content_type")) << kwargs.dump();
  EXPECT_EQ(kwargs["install_requires"].back(), "triton==3.7.0") << "as their file pins it";
  EXPECT_EQ(kwargs["cmdclass"]["bdist_wheel"], "__main__.BuildWheel");
  EXPECT_EQ(kwargs["cmdclass"]["build_ext"], "__main__.CMakeBuild");

  dump = host({"--dump-kwargs"}, {{"IS_MANYLINUX", "1"}, {"TRITON_WHEEL_VERSION_SUFFIX", "rc1"}});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(parse_json(dump.out)["version"], "3.8.0rc1");
  // The stable-ABI switch changes the wheel's tag, no kwarg.
  dump = host({"--dump-kwargs"}, {{"TRITON_STABLE_ABI", "1"}});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(parse_json(dump.out), kwargs);

  // The same tree once it adopts the in-tree hooks: the in-tree profile.
  write_file(tree / "third_party/ascend/build/__init__.py",
             "from ascend_setup.hooks import prepare, activate\n");
  dump = host({"--log-level", "debug", "--dump-kwargs"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_TRUE(contains(dump.err, "debug: profile triton-ascend-3.8.0-in-tree")) << dump.err;
  EXPECT_EQ(parse_json(dump.out)["cmdclass"]["build_py"], "__main__.AscendBuildPy");
}

// With only the 3.6.0 profile, the doctor names every reason the 3.8.0 tree
// does not fit it (version, llvm-info.json, build_helpers, the patch names,
// the setup.py functions upstream moved); with the built-in choice it finds
// nothing, the CRLF AscendNPU-IR file included.
TEST_F(Line380Test, TheDoctorNamesEveryReasonUnderThe360ProfileAndNoneUnderThe380One) {
  const fs::path profile_360 = dir.path() / "triton-ascend-3.6.0.toml";
  write_file(profile_360, std::string(builtin_profile_text_of("triton-ascend-3.6.0.toml")));
  const auto before = host({"--profile", profile_360.string(), "--doctor=json"});
  EXPECT_EQ(before.exit_code, 7) << before.err;
  const std::set<std::string> found = finding_keys(parse_json(before.out));
  for (const char* expected :
       {"upstream-version TRITON_VERSION", "version-file version.txt",
        "llvm-revision cmake/llvm-hash.txt", "resolved-in-helper python/build_helpers.py",
        "missing-patch third_party/ascend/patch/triton-ascend-3.6.0.patch",
        "missing-patch third_party/ascend/patch/triton-ascend-dev-3.6.0.patch",
        "unused-patch third_party/ascend/patch/npuir_adapter_to_llvm_24.patch",
        "unused-patch third_party/ascend/patch/triton-ascend-3.8.0.patch",
        "unused-patch third_party/ascend/patch/triton-ascend-dev-3.8.0.patch",
        "missing get_llvm_package_info", "missing get_thirdparty_packages"}) {
    EXPECT_TRUE(found.count(expected)) << expected << " not found in " << before.out;
  }
  EXPECT_EQ(git_status(tree), "") << "the doctor wrote something";

  const auto after = host({"--doctor"});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  EXPECT_TRUE(contains(after.out, "profile triton-ascend-3.8.0 ")) << after.out;
  EXPECT_TRUE(contains(after.out, "healthy: the tree fits the profile")) << after.out;
}

// An offline build needs LLVM_SYSPATH: without it, one line naming it (exit
// 3) before anything is configured, as upstream's helper refuses.
TEST_F(Line380Test, AnOfflineBuildWithoutLlvmSyspathIsOneLineNamingIt) {
  const auto run = host({"build_ext"}, {{"LLVM_SYSPATH", std::nullopt}});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(error_line(run.err),
            "ascend-setup: error: an offline build needs LLVM_SYSPATH, the LLVM to build against: "
            "it is not set (the Ascend LLVM package is fetched only when the build is not "
            "offline)")
      << run.err;
  EXPECT_FALSE(contains(run.err, "Traceback")) << run.err;
  for (const auto& entry : files_in(tree / "build", "")) {
    EXPECT_FALSE(fs::exists(entry / "CMakeCache.txt")) << "configured anyway: " << entry;
  }
}

// The NPU-IR patch inside a checkout whose CMakeLists.txt is CRLF at HEAD:
// patched as their layer patches it, a second apply changes nothing, the
// restore gives the committed CRLF bytes back and removes the added file.
TEST_F(Line380Test, TheNpuIrPatchOfACrlfCheckoutIsAppliedAgainAndRestoredToItsCommittedBytes) {
  const std::string committed_lists = read_file(tree / npuir_lists);
  ASSERT_TRUE(contains(committed_lists, "\r\n")) << "the stand-in lost its CRLF";

  auto apply = host({"--release", "--apply-patches"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  const auto patched = files_under(tree);
  for (const auto& [file, hash] : reference_patched()) {
    if (file != ".gitmodules") {  // the test's own: it points the submodule at its local path
      EXPECT_EQ(patched.count(file) ? patched.at(file) : "(missing)", hash) << file;
    }
  }
  auto status = host({"--release", "--patch-status"});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_TRUE(contains(status.out, "patch applied npuir_adapter_to_llvm_24.patch\n")) << status.out;

  fs::remove(tree / "build/ascend-setup/patches/state.json");  // no record: worked out again
  apply = host({"--release", "--apply-patches"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_EQ(files_under(tree), patched) << "the second apply changed the tree";

  const auto restore = host({"--restore-sources"});
  ASSERT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(read_file(tree / npuir_lists), committed_lists);
  EXPECT_FALSE(fs::exists(tree / npuir_added));
  EXPECT_EQ(git_status(tree / npuir), "");
  EXPECT_EQ(git_status(tree), "");
}

// A SIGKILL at every write of --apply-patches (the stand-in preload), then
// any run: the tree and the CRLF checkout are both pristine or both patched.
TEST_F(Line380Test, PowerLossAtEveryWriteLeavesTheTreeAndTheCrlfCheckoutWhole) {
  expect_whole_at_every_write(FAIL_NTH_WRITE, npuir);
}

// The wheel, not offline, LLVM_SYSPATH unset: ascend-setup fetches the
// Ascend LLVM package from the test's server into upstream's cache and
// hands it to CMake; upstream's helper (which would download from the
// internet, out of reach here) finds its input defined and downloads
// nothing. The compiled version is the wheel's; the stable-ABI switch tags
// the wheel cp312-abi3 even where upstream's class has no such rule.
class Line380WheelTest : public PackageBuildTest {
 protected:
  Line380WheelTest() {
    fs::remove_all(tree);
    tree = copy_example_tree(dir.path(), "triton-3.8");
    make_nested_npuir_repo(tree, dir.path());
    head = make_git_repo(tree, dir.path());
    env["JSON_SYSPATH"] = STUB_JSON;  // upstream's own package, given
    env["MAX_JOBS"] = "2";
  }
  std::string head;
};

TEST_F(Line380WheelTest,
       BdistWheelBuildsWithTheLlvmAscendSetupFetchedAndHandedToCMake_StubLlvmOnLoopbackNginx) {
  make_package(0, [](const fs::path& package) {
    write_file(package / "bin/clang++", "#!/bin/sh\nexec clang++ \"$@\"\n");
    fs::permissions(package / "bin/clang++", fs::perms(0755));
  });
  NginxServer server(dir.path() / "nginx", www);
  const fs::path profile = write_profile(
      dir.path() / "profile-380.toml",
      {{"name = \"llvm-{rev}-{patch_hash}-{suffix}\"", "name = \"llvm-e2e\""},
       {"https://triton-ascend-artifacts.obs.myhuaweicloud.com/llvm-builds/{name}.tar.gz",
        server.url("") + "{name}.tar.gz"}},
      builtin_profile_text_of("triton-ascend-3.8.0.toml"));

  const auto build = run_host({"--profile", profile.string(), "bdist_wheel"}, tree, env);
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_FALSE(contains(build.out + build.err, "downloading and extracting"))
      << "upstream's helper downloaded";
  EXPECT_EQ(server.responses(404), 0);
  EXPECT_GT(server.body_bytes_sent(), 0u) << "the package was not fetched from the server";
  const fs::path package = package_root / "llvm-e2e";
  expect_no_partial_package(server.url("") + "llvm-e2e.tar.gz");
  EXPECT_EQ(fs::read_symlink(package_root / "llvm-ubuntu-x64"), package);

  const auto caches = files_in(tree / "build", "");
  std::string cache;
  for (const auto& entry : caches) {
    if (fs::exists(entry / "CMakeCache.txt")) {
      cache = read_file(entry / "CMakeCache.txt");
    }
  }
  EXPECT_TRUE(contains(cache, "LLVM_SYSPATH:UNINITIALIZED=" + package.string() + "\n")) << cache;
  EXPECT_TRUE(
      contains(cache,
               "TRITON_GSAN_CLANGXX:UNINITIALIZED=" + (package / "bin/clang++").string() + "\n") ||
      contains(cache, "TRITON_GSAN_CLANGXX:FILEPATH=" + (package / "bin/clang++").string() + "\n"))
      << cache;

  const std::string version = "3.8.0+git" + head.substr(0, 8);
  auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheels[0].filename().string().rfind("triton_ascend-" + version + "-cp3", 0), 0u)
      << wheels[0];
  const auto members = wheel_members(wheels[0]);
  EXPECT_TRUE(contains(members, "755 triton/_C/triton-opt")) << testing::PrintToString(members);
  const fs::path unpacked = dir.path() / "unpacked";
  must_run({"python3", "-m", "zipfile", "-e", wheels[0].string(), unpacked.string()}, dir.path());
  const std::string compiled =
      must_run({SYSTEM_PYTHON, "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); from triton._C import libtriton; "
                "print(libtriton.version())",
                unpacked.string()},
               dir.path());
  EXPECT_EQ(compiled, version + "\n") << "the compiled Version.h is not the wheel's";
  const std::string metadata = read_file(files_in(unpacked, ".dist-info").at(0) / "METADATA");
  EXPECT_TRUE(contains(metadata, "\nRequires-Dist: triton (==3.7.0)\n")) << metadata;

  // The stable ABI, with upstream's own rule gone: the layer's tag.
  edit("setup.py", "if check_env_flag(\"TRITON_STABLE_ABI\"):",
       "if False:  # upstream's rule taken away by the test");
  fs::remove_all(tree / "dist");
  env["TRITON_STABLE_ABI"] = "1";
  const auto stable = run_host({"--profile", profile.string(), "bdist_wheel"}, tree, env);
  ASSERT_EQ(stable.exit_code, 0) << stable.err;
  wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_TRUE(contains(wheels[0].filename().string(), "-cp312-abi3-linux_")) << wheels[0];
}

}  // namespace line_380_test
