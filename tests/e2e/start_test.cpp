// What a start loads. The launcher links only what choosing and starting a
// host needs, and the host modules do not name libcurl or libarchive (loaded
// by the first download where they are the system's shared libraries), so
// that a run that fetches nothing does not pay the dynamic loader for them
// and their dependencies (bench/RESULTS.md, "the start"). The patch options,
// which need libgit2 and no Python, run in ascend-setup-patches beside the
// hosts: the launcher execs it.
#include "base/util/elf_file.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;

namespace {

// The libraries a run on a tree needs and choosing a host does not.
const std::vector<std::string> libraries_of_a_run = {
    "libgit2",         "libcurl",    "libarchive", "libcrypto", "libssl",  "libpcre2",
    "libtomlplusplus", "libdeflate", "libz.",      "libmbed",   "libssh2", "libpython"};

std::vector<std::string> named_of(const std::vector<std::string>& needed,
                                  const std::vector<std::string>& prefixes) {
  std::vector<std::string> named;
  for (const auto& name : needed) {
    for (const auto& prefix : prefixes) {
      if (name.starts_with(prefix)) {
        named.push_back(name);
      }
    }
  }
  return named;
}

fs::path host_dir() { return fs::path(BUILD_DIR) / "libexec" / "ascend-setup"; }

TEST(Start, TheLauncherNamesNoLibraryOfARunOnATree) {
  const auto needed = ascend_setup::elf_needed_of_file(ASCEND_SETUP_BINARY);
  ASSERT_TRUE(needed.has_value());
  EXPECT_EQ(named_of(*needed, libraries_of_a_run), std::vector<std::string>{});
  // The patch options' program links them (where they are shared libraries).
  const auto patches = ascend_setup::elf_needed_of_file(host_dir() / "ascend-setup-patches");
  ASSERT_TRUE(patches.has_value());
  if (!PORTABLE_BUILD) {
    EXPECT_FALSE(named_of(*patches, {"libgit2"}).empty());
  }
}

TEST(Start, NoHostModuleNamesLibcurlOrLibarchive) {
  const auto modules = files_in(host_dir(), ".so");
  ASSERT_FALSE(modules.empty());
  for (const auto& module : modules) {
    const auto needed = ascend_setup::elf_needed_of_file(module);
    ASSERT_TRUE(needed.has_value()) << module;
    EXPECT_EQ(named_of(*needed, {"libcurl", "libarchive"}), std::vector<std::string>{}) << module;
  }
}

TEST(Start, ThePatchOptionsRunInTheProgramBesideTheHosts) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  const Env env = offline_env(dir.path());
  const auto status = run_host({"--patch-status"}, tree, env);
  ASSERT_EQ(status.exit_code, 1) << status.err;  // pristine: not patched for the mode
  EXPECT_TRUE(contains(status.out, "patch not-applied triton-ascend-3.6.0.patch\n")) << status.out;
  // Even with an interpreter that does not exist: no Python is involved.
  const auto applied = run_host({"--python", "/nonexistent/python3", "--apply-patches"}, tree, env);
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_TRUE(contains(run_host({"--patch-status"}, tree, env).out, "patch applied "));
}

TEST(Start, AMissingPatchProgramIsOneLineSayingReinstall) {
  TempDir dir;
  // An installation with its launcher and its manifest, the program left out.
  const fs::path prefix = dir.path() / "prefix";
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "libexec" / "ascend-setup");
  fs::copy_file(ASCEND_SETUP_BINARY, prefix / "bin" / "ascend-setup");
  fs::copy_file(host_dir() / "hosts.txt", prefix / "libexec" / "ascend-setup" / "hosts.txt");
  const fs::path tree = copy_example_tree(dir.path());
  const auto run =
      ascend_setup::run_process({{(prefix / "bin" / "ascend-setup").string(), "--patch-status"},
                                 tree,
                                 offline_env(dir.path()),
                                 {}});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(lines_with(run.err, "error:").size(), 1U) << run.err;
  EXPECT_TRUE(contains(run.err, (prefix / "libexec/ascend-setup/ascend-setup-patches").string() +
                                    ": No such file or directory: reinstall ascend-setup"))
      << run.err;
  EXPECT_EQ(run.out, "");
}

}  // namespace
