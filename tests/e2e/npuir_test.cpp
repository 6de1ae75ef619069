// The NPUIR build and the BishengIR payload through the built binary, with
// stand-ins for what cannot exist offline: a stand-in AscendNPU-IR repository
// (a local remote registered as the tree's submodule, recording three nested
// repositories under third-party/ at commits that are not their remotes'
// tips, each a local remote too), a stand-in build-tools/build.sh
// (tests/stand_ins/npuir_build.sh) and a stand-in toolkit (ASCEND_HOME_PATH
// holding tools/bisheng_compiler/bin). Fetches are real libgit2 fetches; the
// wheel is a real bdist_wheel of the example tree.
#include "base/util/error.hpp"
#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

using namespace test_support;

namespace {

class NpuirTest : public ExampleTreeTest {
 protected:
  void SetUp() override {
    recorded =
        make_npuir_stand_in(tree, remotes, dir.path(), kNpuirNested,
                            [this](const std::string& name) { return (remotes / name).string(); });

    fs::create_directories(toolkit / "tools/bisheng_compiler/bin");
    use_profile({});
    env["TRITON_BUILD_NPUIR"] = "ON";
    env["ASCEND_HOME_PATH"] = toolkit.string();
    env["TRITON_ASCEND_BISHENGIR_PATH"] = std::nullopt;
    env["CCACHE_DIR"] = std::nullopt;
    env["MAX_JOBS"] = "2";
    env["NPUIR_STAND_IN_LOG"] = stand_in_log.string();
  }

  // The in-tree layer's built-in profile (NPUIR is that layer's) with the disk threshold at 0 and
  // fetch retries quick, plus `more` replacements.
  void use_profile(std::vector<std::pair<std::string, std::string>> more) {
    std::vector<std::pair<std::string, std::string>> replacements = {
        {"min_free_gib = 30", "min_free_gib = 0"},
        {"fetch_attempts = 5", "fetch_attempts = 3"},
        {"fetch_retry_seconds = 10", "fetch_retry_seconds = " + std::to_string(retry_seconds)}};
    for (auto& [from, to] : more) {
      for (auto& replacement : replacements) {
        if (replacement.first == from) {
          replacement.second = to;
          from.clear();
        }
      }
      if (!from.empty()) {
        replacements.emplace_back(from, to);
      }
    }
    write_profile(profile, replacements, in_tree_profile_text());
  }
  ascend_setup::ProcessResult host(const std::vector<std::string>& args) const {
    std::vector<std::string> all{"--profile", profile.string()};
    all.insert(all.end(), args.begin(), args.end());
    return run_host(all, tree, env);
  }
  std::string head_of(const fs::path& repo) const {
    if (!fs::exists(repo / ".git")) {
      ADD_FAILURE() << repo << " is no git checkout";
      return "";
    }
    const std::string out = must_run({"git", "rev-parse", "HEAD"}, repo, git_env(dir.path()));
    return out.substr(0, out.find('\n'));
  }
  std::vector<std::string> lines_of(const fs::path& file) const {
    std::vector<std::string> lines;
    std::istringstream in(read_file(file));
    for (std::string line; std::getline(in, line);) {
      lines.push_back(line);
    }
    return lines;
  }
  static size_t count(const std::string& text, const std::string& part) {
    size_t found = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
      ++found;
    }
    return found;
  }
  // The build_lib setuptools chose (build/lib.<platform>-<impl>).
  fs::path build_lib() const {
    for (const auto& entry : fs::directory_iterator(tree / "build")) {
      if (entry.path().filename().string().rfind("lib.", 0) == 0) {
        return entry.path();
      }
    }
    ADD_FAILURE() << "no build/lib.* in " << tree;
    return tree / "build/lib";
  }

  fs::path remotes = dir.path() / "remotes";
  fs::path toolkit = dir.path() / "toolkit";
  fs::path profile = dir.path() / "profile.toml";
  fs::path stand_in_log = dir.path() / "stand-in-build";
  fs::path npuir = tree / "third_party/ascend/AscendNPU-IR";
  fs::path payload = tree / "third_party/ascend/backend/bishengir";
  std::map<std::string, std::string> recorded;  // nested repository -> its gitlink's commit
  int retry_seconds = 0;
};

TEST_F(NpuirTest, WholeNpuirPathIntoTheWheel_StandInNpuIrRepo_StandInBuildSh_Bdist) {
  const auto result = host({"bdist_wheel"});
  ASSERT_EQ(result.exit_code, 0) << result.err;

  // The submodule and each nested repository at exactly its recorded commit.
  EXPECT_TRUE(fs::exists(npuir / "build-tools/build.sh"));
  for (const std::string& name : kNpuirNested) {
    EXPECT_EQ(head_of(npuir / "third-party" / name), recorded[name]) << name;
    EXPECT_FALSE(fs::exists(npuir / "third-party" / name / "later.txt")) << name;
  }
  // build.sh with the exact arguments, in the submodule, its output streamed.
  const fs::path wrapper = tree / "build/ascend-setup/npuir/clang++";
  EXPECT_EQ(lines_of(stand_in_log / "args"),
            (std::vector<std::string>{
                "--build-type=Release", "-o", (npuir / "build").string(), "-t", "-j", "2",
                "--bisheng-compiler=" + (toolkit / "tools/bisheng_compiler/bin").string(),
                "--cxx-compiler=" + wrapper.string(), "--add-cmake-options", "-DLLVM_ENABLE_LLD=ON",
                "--build-triton", "--build-torch-mlir", "--build-shmem-template",
                "--bishengir-publish", "ON", "--collect-binary", "-r"}));
  EXPECT_EQ(read_file(stand_in_log / "cwd"), npuir.string() + "\n");
  EXPECT_EQ(read_file(stand_in_log / "env"), "CCACHE_DIR=" + (tree / ".ccache").string() + "\n");
  EXPECT_TRUE(fs::exists(stand_in_log / "uses_cstdint.o"));  // the wrapper added -include cstdint
  EXPECT_TRUE(contains(result.err, "stand-in build.sh: building AscendNPU-IR")) << result.err;
  EXPECT_TRUE(result.out.find("stand-in build.sh") == std::string::npos);

  // The artifacts in the tree's payload, then in the wheel.
  for (const char* file : {"bin/bishengir-compile", "bin/bishengir-opt", "bin/hivmc",
                           "bin/hivmc-a5", "lib/libdevice.bc", "lib/hivm.bc"}) {
    EXPECT_TRUE(fs::exists(payload / file)) << file;
  }
  EXPECT_FALSE(fs::exists(payload / "lib/notes.txt"));
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  const auto members = wheel_members(wheels[0]);
  const std::string in_wheel = "triton/backends/ascend/backend/bishengir/";
  for (const char* tool : {"bishengir-compile", "bishengir-opt", "hivmc", "hivmc-a5"}) {
    EXPECT_TRUE(contains(members, "755 " + in_wheel + "bin/" + tool)) << tool;
  }
  EXPECT_TRUE(contains(members, "644 " + in_wheel + "lib/libdevice.bc"));
  EXPECT_TRUE(contains(members, "644 " + in_wheel + "lib/hivm.bc"));
  EXPECT_FALSE(contains(members, "644 " + in_wheel + "lib/notes.txt"));

  // A payload of the user's replaces it in build_lib, symlinks kept.
  const fs::path mine = dir.path() / "my-bishengir";
  write_file(mine / "bin/bishengir-compile", "#!/bin/sh\n");
  write_file(mine / "bin/bishengir-opt.real", "#!/bin/sh\n");
  fs::create_symlink("bishengir-opt.real", mine / "bin/bishengir-opt");
  write_file(mine / "lib/mine.bc", "mine\n");
  env["TRITON_BUILD_NPUIR"] = "OFF";
  env["TRITON_ASCEND_BISHENGIR_PATH"] = mine.string();
  const auto again = host({"build_py"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const fs::path copied = build_lib() / in_wheel;
  EXPECT_TRUE(fs::is_symlink(copied / "bin/bishengir-opt"));
  EXPECT_EQ(fs::read_symlink(copied / "bin/bishengir-opt"), "bishengir-opt.real");
  EXPECT_TRUE(fs::exists(copied / "lib/mine.bc"));
  EXPECT_FALSE(fs::exists(copied / "lib/hivm.bc"));  // what was there is replaced
  EXPECT_FALSE(fs::exists(copied / "bin/hivmc"));
  for (const auto& entry : fs::directory_iterator(copied.parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find("ascend-setup"), std::string::npos)
        << entry.path();
  }
}

// The shared compile cache reaches the NPUIR build: ccache's settings in
// build.sh's environment, the tree's prefix map in its compiler wrapper.
TEST_F(NpuirTest, BuildShCompilesThroughTheCompileCache_StandInNpuIrRepo_StandInBuildSh) {
  const TcpListener server;  // up for the probe
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port());
  env["ASCEND_SETUP_COMPILE_CACHE"] = url;
  env["NPUIR_STAND_IN_EXIT"] = "3";  // stops after recording: no Triton build
  const auto result = host({"bdist_wheel"});
  EXPECT_NE(result.exit_code, 0);
  const std::string root = fs::canonical(tree).string();
  EXPECT_EQ(lines_of(stand_in_log / "compile-cache-env"),
            (std::vector<std::string>{
                "CCACHE_REMOTE_STORAGE=" + url, "CCACHE_BASEDIR=" + root,
                "CCACHE_STATSLOG=" + root + "/build/ascend-setup/compile-cache.log"}))
      << result.err;
  EXPECT_TRUE(contains(read_file(tree / "build/ascend-setup/npuir/clang++"),
                       "-ffile-prefix-map=" + root + "=."));
}

TEST_F(NpuirTest, MissingAscendHomePathStopsBeforeAnyFetch_StandInNpuIrRepo) {
  env["ASCEND_HOME_PATH"] = std::nullopt;
  const auto result = host({"bdist_wheel"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  EXPECT_TRUE(contains(result.err,
                       "ASCEND_HOME_PATH is not set: source "
                       "<ascend-toolkit>/set_env.sh first"))
      << result.err;
  EXPECT_EQ(count(result.err, "error:"), 1u) << result.err;
  EXPECT_TRUE(fs::is_empty(npuir));
  EXPECT_FALSE(fs::exists(stand_in_log));
}

TEST_F(NpuirTest, ToolkitWithoutBishengCompilerIsNamed_StandInToolkit) {
  fs::remove_all(toolkit / "tools");
  const auto result = host({"bdist_wheel"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  EXPECT_TRUE(
      contains(result.err, (toolkit / "tools/bisheng_compiler/bin").string() + " does not exist"))
      << result.err;
}

TEST_F(NpuirTest, DiskThresholdNotMetSaysWhatIsFree_StandInNpuIrRepo) {
  use_profile({{"min_free_gib = 30", "min_free_gib = 1000000"}});
  const auto result = host({"bdist_wheel"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  EXPECT_TRUE(contains(result.err, "the NPUIR build needs 1000000 GiB free on the disk of " +
                                       tree.string() + ", and "))
      << result.err;
  EXPECT_TRUE(contains(result.err, " is free")) << result.err;
  EXPECT_EQ(count(result.err, "error:"), 1u) << result.err;
  EXPECT_TRUE(fs::is_empty(npuir));
}

TEST_F(NpuirTest, NestedRemoteMissingIsRetriedThenNamed_StandInNpuIrRepo) {
  fs::rename(remotes / "torch-mlir", dir.path() / "gone");
  const auto result = host({"bdist_wheel"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    EXPECT_EQ(count(result.err, "fetching third-party/torch-mlir at " + recorded["torch-mlir"] +
                                    " from " + (remotes / "torch-mlir").string() + " (attempt " +
                                    std::to_string(attempt) + " of 3)"),
              1u)
        << result.err;
  }
  EXPECT_FALSE(contains(result.err, "attempt 4")) << result.err;
  EXPECT_TRUE(contains(result.err, "cannot fetch third-party/torch-mlir of the NPUIR sources at " +
                                       recorded["torch-mlir"] + " from " +
                                       (remotes / "torch-mlir").string() + " (3 attempts; last: "))
      << result.err;
  // The others were fetched; the failed one left nothing behind.
  EXPECT_EQ(head_of(npuir / "third-party/llvm-project"), recorded["llvm-project"]);
  EXPECT_TRUE(fs::is_empty(npuir / "third-party/torch-mlir"));
  for (const auto& entry : fs::directory_iterator(npuir / "third-party")) {
    EXPECT_EQ(entry.path().filename().string().find("ascend-setup"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(stand_in_log));
}

TEST_F(NpuirTest, NestedRemoteAppearingBeforeTheSecondAttemptIsFetched_StandInNpuIrRepo) {
  // The remote comes back as soon as the run says the first attempt failed
  // (an event, not a time), well within the wait before the second.
  retry_seconds = 5;
  use_profile({});
  fs::rename(remotes / "torch-mlir", dir.path() / "gone");
  env["NPUIR_STAND_IN_EXIT"] = "7";  // stop at build.sh: the fetches are what is tested
  const fs::path log = dir.path() / "run.log";
  BackgroundProcess run(host_command(tree, env, {"--profile", profile.string(), "bdist_wheel"}),
                        log);
  wait_until(
      run,
      [&] {
        return contains(read_file(log), "fetching third-party/torch-mlir failed (attempt 1 of 3)");
      },
      300);
  fs::rename(dir.path() / "gone", remotes / "torch-mlir");
  const auto code = run.exit_code(300);
  ascend_setup::ProcessResult result;
  result.exit_code = code.value_or(-1);
  result.err = read_file(log);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(contains(result.err, "fetching third-party/torch-mlir failed (attempt 1 of 3)"))
      << result.err;
  EXPECT_TRUE(contains(result.err, "(attempt 2 of 3)")) << result.err;
  EXPECT_FALSE(contains(result.err, "(attempt 3 of 3)")) << result.err;
  EXPECT_EQ(head_of(npuir / "third-party/torch-mlir"), recorded["torch-mlir"]);
  EXPECT_TRUE(contains(result.err,
                       "the NPUIR build failed: `bash build-tools/build.sh "
                       "--build-type=Release"))
      << result.err;
  EXPECT_TRUE(contains(result.err, "exited with 7")) << result.err;
}

TEST_F(NpuirTest, NestedRepoHoldingCMakeListsIsKept_StandInNpuIrRepo) {
  env["NPUIR_STAND_IN_EXIT"] = "7";
  ASSERT_EQ(host({"bdist_wheel"}).exit_code, 1);
  // llvm-project is there (its remote gone, a local edit kept); shmem is emptied.
  fs::rename(remotes / "llvm-project", dir.path() / "gone");
  write_file(npuir / "third-party/llvm-project/CMakeLists.txt", "# mine\n");
  fs::remove_all(npuir / "third-party/shmem");
  fs::create_directory(npuir / "third-party/shmem");
  const auto result = host({"bdist_wheel"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(contains(result.err,
                       "third-party/llvm-project already holds a CMakeLists.txt, kept as it is"))
      << result.err;
  EXPECT_FALSE(contains(result.err, "fetching third-party/llvm-project")) << result.err;
  EXPECT_TRUE(contains(result.err, "fetching third-party/shmem")) << result.err;
  EXPECT_EQ(read_file(npuir / "third-party/llvm-project/CMakeLists.txt"), "# mine\n");
  EXPECT_EQ(head_of(npuir / "third-party/shmem"), recorded["shmem"]);
}

// A run killed while it copied the payload into build_lib left its staged
// copy there, which install_lib would copy into the bdist directory: the next
// build removes it, and its wheel holds nothing of it.
TEST_F(NpuirTest, AKilledRunsStagedPayloadIsRemovedAndNeverPacked_StandInPayload) {
  const fs::path mine = dir.path() / "my-bishengir";
  write_file(mine / "bin/bishengir-compile", "#!/bin/sh\n");
  write_file(mine / "bin/bishengir-opt", "#!/bin/sh\n");
  write_file(mine / "lib/mine.bc", "mine\n");
  env["TRITON_BUILD_NPUIR"] = "OFF";
  env["TRITON_ASCEND_BISHENGIR_PATH"] = mine.string();
  const auto first = host({"build_py"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path copied = build_lib() / "triton/backends/ascend/backend/bishengir";
  ASSERT_TRUE(fs::exists(copied / "lib/mine.bc"));
  const fs::path left = leave_staged_copy(copied, "staged", "lib/half.bc");

  const auto result = host({"bdist_wheel"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(left)) << "the staged copy a killed run left is still there";
  const auto wheels = files_in(tree / "dist", ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  const auto members = wheel_members(wheels[0]);
  EXPECT_TRUE(contains(members, "644 triton/backends/ascend/backend/bishengir/lib/mine.bc"));
  for (const std::string& member : members) {
    EXPECT_FALSE(contains(member, "ascend-setup-") || contains(member, "half.bc")) << member;
  }
}

TEST_F(NpuirTest, PayloadMissingAPartIsExit3NamingIt_StandInPayload) {
  const fs::path mine = dir.path() / "my-bishengir";
  write_file(mine / "bin/bishengir-compile", "#!/bin/sh\n");
  fs::create_directories(mine / "lib");
  env["TRITON_BUILD_NPUIR"] = "OFF";
  env["TRITON_ASCEND_BISHENGIR_PATH"] = mine.string();
  const auto result = host({"build_py"});
  EXPECT_EQ(result.exit_code, ascend_setup::exit_code::bad_input) << result.err;
  EXPECT_TRUE(contains(result.err, "the BishengIR payload " + mine.string() +
                                       " (TRITON_ASCEND_BISHENGIR_PATH) lacks bin/bishengir-opt"))
      << result.err;
  EXPECT_EQ(count(result.err, "error:"), 1u) << result.err;
  // Nothing was built first.
  if (fs::exists(tree / "build")) {
    for (const auto& entry : fs::directory_iterator(tree / "build")) {
      EXPECT_NE(entry.path().filename().string().rfind("temp.", 0), 0u) << entry.path();
    }
  }
}

TEST_F(NpuirTest, SwitchOffFetchesAndBuildsNothing_StandInNpuIrRepo) {
  env["TRITON_BUILD_NPUIR"] = std::nullopt;  // the profile's default: OFF
  const auto result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["cmdclass"]["build_py"], "__main__.AscendBuildPy");
  EXPECT_TRUE(fs::is_empty(npuir));
  EXPECT_FALSE(fs::exists(stand_in_log));
}

TEST_F(NpuirTest, DumpKwargsWithTheSwitchOnFetchesNothing_StandInNpuIrRepo) {
  ASSERT_EQ(host({"--dump-kwargs"}).exit_code, 0);
  ASSERT_EQ(host({"--list-env"}).exit_code, 0);
  const auto doctor = host({"--doctor"});
  EXPECT_TRUE(doctor.exit_code == 0 || doctor.exit_code == ascend_setup::exit_code::doctor_findings)
      << doctor.err;
  EXPECT_TRUE(fs::is_empty(npuir));
  EXPECT_FALSE(fs::exists(stand_in_log));
}

}  // namespace
