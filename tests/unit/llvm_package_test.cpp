#include "base/layer/llvm_package.hpp"

#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ascend_setup;
using namespace test_support;

namespace {
class LlvmPackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profile = parse_profile(builtin_profile_text(), "built-in profile").llvm;
    write_file(dir.path() / "cmake" / "llvm-hash.txt", "f6ded0b5b8bd0b1ea9b6cf8b1c2c1d1e\n");
  }
  LlvmChoice choose(const PlatformInfo& platform, const std::string& env_suffix = "") {
    return choose_llvm_package(profile, platform, env_suffix, dir.path());
  }
  std::string name_for(const PlatformInfo& platform, const std::string& env_suffix = "") {
    const LlvmChoice choice = choose(platform, env_suffix);
    const auto* package = std::get_if<LlvmPackage>(&choice);
    EXPECT_NE(package, nullptr);
    return package ? package->name : "";
  }
  TempDir dir;
  Profile::Llvm profile;
};
}  // namespace

TEST_F(LlvmPackageTest, PatchHashIsSha256OfSortedConcatenation) {
  const fs::path patches = dir.path() / "third_party/ascend/patch";
  EXPECT_EQ(llvm_patch_hash(patches, "llvm_patch_", ".patch", 8, "00000000"), "00000000");
  write_file(patches / "llvm_patch_b.patch", "second\n");
  write_file(patches / "llvm_patch_a.patch", "first\n");
  write_file(patches / "other.patch", "ignored\n");
  write_file(patches / "llvm_patch_c.txt", "ignored\n");
  const std::string expected = must_run(
      {"sh", "-c", "cat llvm_patch_a.patch llvm_patch_b.patch | sha256sum | cut -c1-8"}, patches);
  EXPECT_EQ(llvm_patch_hash(patches, "llvm_patch_", ".patch", 8, "00000000") + "\n", expected);
}

TEST_F(LlvmPackageTest, AscendPackageOnGlibcLinux) {
  const LlvmChoice choice = choose({"Linux", "x86_64", "2.36", "debian"});
  const auto& package = std::get<LlvmPackage>(choice);
  EXPECT_EQ(package.name, "llvm-f6ded0b5-00000000-ubuntu-x64");
  EXPECT_EQ(package.sym_name, "llvm-ubuntu-x64");
  EXPECT_EQ(package.url,
            "https://triton-ascend-artifacts.obs.myhuaweicloud.com/llvm-builds/"
            "llvm-f6ded0b5-00000000-ubuntu-x64.tar.gz");
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.28", "almalinux"}),
            "llvm-f6ded0b5-00000000-almalinux-x64");
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.29", "centos"}), "llvm-f6ded0b5-00000000-ubuntu-x64");
}

TEST_F(LlvmPackageTest, ArmMacAndSuffixOverride) {
  EXPECT_EQ(name_for({"Linux", "aarch64", "2.36", "almalinux"}),
            "llvm-f6ded0b5-00000000-almalinux-arm64");
  EXPECT_EQ(name_for({"Linux", "aarch64", "2.36", "ubuntu"}),
            "llvm-f6ded0b5-00000000-ubuntu-arm64");
  EXPECT_EQ(name_for({"Darwin", "arm64", std::nullopt, ""}), "llvm-f6ded0b5-00000000-macos-arm64");
  EXPECT_EQ(name_for({"Linux", "x86_64", std::nullopt, "alpine"}, "custom-os"),
            "llvm-f6ded0b5-00000000-custom-os");
}

TEST_F(LlvmPackageTest, MuslIsUserConfiguredNotACrash) {
  const LlvmChoice choice = choose({"Linux", "x86_64", std::nullopt, "alpine"});
  ASSERT_TRUE(std::holds_alternative<UserConfiguredLlvm>(choice));
  EXPECT_NE(std::get<UserConfiguredLlvm>(choice).reason.find("musl"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<UserConfiguredLlvm>(
      choose({"Linux", "x86_64", std::string(""), "alpine"})));
}

TEST_F(LlvmPackageTest, NoAscendBuildMeansUpstream) {
  EXPECT_TRUE(
      std::holds_alternative<UseUpstreamLlvm>(choose({"Windows", "AMD64", std::nullopt, ""})));
  EXPECT_TRUE(std::holds_alternative<UseUpstreamLlvm>(choose({"Linux", "riscv64", "2.36", ""})));
}

// The in-tree layer's rule: AlmaLinux x64 (the manylinux_2_34 image, glibc
// 2.34 > 2.28) takes the almalinux build, whose ubuntu twin needs glibc 2.35.
TEST_F(LlvmPackageTest, InTreeLayerTakesTheAlmalinuxBuildOnAlmalinuxWhateverItsGlibc) {
  for (const BuiltinProfile& builtin : builtin_profiles()) {
    if (builtin.file == "triton-ascend-3.6.0-in-tree.toml") {
      profile = parse_profile(builtin.text, std::string(builtin.file)).llvm;
    }
  }
  ASSERT_FALSE(profile.x64_os_suffixes.empty()) << "no built-in 3.6.0 in-tree profile";
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.34", "almalinux"}),
            "llvm-f6ded0b5-00000000-almalinux-x64");
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.34", "debian"}), "llvm-f6ded0b5-00000000-ubuntu-x64");
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.28", "centos"}),
            "llvm-f6ded0b5-00000000-almalinux-x64");
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.34", "almalinux"}, "forced"),
            "llvm-f6ded0b5-00000000-forced");
  // The entry-era profile keeps its rule: glibc alone decides on x64.
  profile = parse_profile(builtin_profile_text(), "built-in profile").llvm;
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.34", "almalinux"}),
            "llvm-f6ded0b5-00000000-ubuntu-x64");
}

// The 3.7.0 layer's rule (setup_patch.py at li-lizhe/triton-ascend ee05fd4):
// no exception for AlmaLinux on x64, glibc alone decides; arm64 still tells
// AlmaLinux from the rest.
TEST_F(LlvmPackageTest, TheLine370TakesTheBuildByGlibcOnX64AndByTheSystemOnArm64) {
  for (const BuiltinProfile& builtin : builtin_profiles()) {
    if (builtin.file == "triton-ascend-3.7.0-in-tree.toml") {
      profile = parse_profile(builtin.text, std::string(builtin.file)).llvm;
    }
  }
  ASSERT_EQ(profile.ubuntu_min_glibc, 229) << "no built-in 3.7.0 profile";
  EXPECT_TRUE(profile.x64_os_suffixes.empty());
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.34", "almalinux"}),
            "llvm-f6ded0b5-00000000-ubuntu-x64");
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.28", "almalinux"}),
            "llvm-f6ded0b5-00000000-almalinux-x64");
  EXPECT_EQ(name_for({"Linux", "aarch64", "2.34", "almalinux"}),
            "llvm-f6ded0b5-00000000-almalinux-arm64");
  EXPECT_EQ(name_for({"Linux", "aarch64", "2.35", "ubuntu"}),
            "llvm-f6ded0b5-00000000-ubuntu-arm64");
  EXPECT_EQ(name_for({"Linux", "x86_64", "2.34", "almalinux"}, "forced"),
            "llvm-f6ded0b5-00000000-forced");
}

// The 3.8.0 line: the revision is llvm-info.json's "llvm_hash" (upstream's
// new file); the package keeps the Ascend name. A file without the key is
// one error naming the file and the key.
TEST_F(LlvmPackageTest, TheLine380TakesTheRevisionFromLlvmInfoJson) {
  for (const char* file : {"triton-ascend-3.8.0.toml", "triton-ascend-3.8.0-in-tree.toml"}) {
    profile = parse_profile(builtin_profile_text_of(file), file).llvm;
    EXPECT_EQ(profile.resolved_in, "python/build_helpers.py");
    write_file(dir.path() / "cmake" / "llvm-info.json",
               "{\"llvm_hash\": \"0123456789abcdef0123456789abcdef01234567\", \"build_number\": 3,"
               " \"sha256sum\": {\"ubuntu-x64\": \"00\"}}\n");
    EXPECT_EQ(llvm_revision(profile, dir.path()), "01234567");
    EXPECT_EQ(name_for({"Linux", "x86_64", "2.36", "debian"}), "llvm-01234567-00000000-ubuntu-x64");
    for (const char* bad : {"{\"build_number\": 3}", "[1]", "{\"llvm_hash\": 7}", "not json"}) {
      write_file(dir.path() / "cmake" / "llvm-info.json", bad);
      try {
        llvm_revision(profile, dir.path());
        ADD_FAILURE() << bad << " gave a revision";
      } catch (const Error& error) {
        EXPECT_EQ(error.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(error.what())
                      .find("llvm-info.json holds no JSON object with a "
                            "string \"llvm_hash\""),
                  std::string::npos)
            << error.what();
      }
    }
  }
}

// std::stoi threw std::out_of_range for a glibc component too large for an int.
TEST_F(LlvmPackageTest, AGlibcVersionTooLargeToReadIsNoVersion) {
  for (const char* glibc : {"2.99999999999999999999", "99999999999999999999.36", "2.x", "2"}) {
    const LlvmChoice choice = choose({"Linux", "x86_64", std::string(glibc), "debian"});
    EXPECT_TRUE(std::holds_alternative<UserConfiguredLlvm>(choice)) << glibc;
  }
}

// The LLVM package's pin: the variable wins (either case, trimmed), else the
// profile's entry for the package's name; anything but 64 hex digits in the
// variable is a usage error naming it.
TEST(LlvmPackageSha256, TheVariableWinsOverTheProfilesEntryForTheName) {
  Profile profile = parse_profile(builtin_profile_text(), "built-in profile");
  const std::string pinned(64, 'b');
  profile.llvm.sha256["llvm-x"] = pinned;
  ::unsetenv("ASCEND_SETUP_LLVM_SHA256");
  EXPECT_EQ(llvm_package_sha256(profile, "llvm-y"), std::nullopt);
  const auto from_profile = llvm_package_sha256(profile, "llvm-x");
  ASSERT_TRUE(from_profile);
  EXPECT_EQ(from_profile->sha256, pinned);
  EXPECT_EQ(from_profile->from, "the profile's [llvm] sha256");

  ::setenv("ASCEND_SETUP_LLVM_SHA256", (" " + std::string(64, 'C') + "\n").c_str(), 1);
  for (const char* name : {"llvm-x", "llvm-y"}) {
    const auto from_variable = llvm_package_sha256(profile, name);
    ASSERT_TRUE(from_variable);
    EXPECT_EQ(from_variable->sha256, std::string(64, 'c'));
    EXPECT_EQ(from_variable->from, "ASCEND_SETUP_LLVM_SHA256");
  }
  ::setenv("ASCEND_SETUP_LLVM_SHA256", "", 1);
  EXPECT_EQ(llvm_package_sha256(profile, "llvm-x")->from, "the profile's [llvm] sha256");
  for (const char* bad : {"abc", "sha256:0000", "zz"}) {
    ::setenv("ASCEND_SETUP_LLVM_SHA256", bad, 1);
    try {
      llvm_package_sha256(profile, "llvm-x");
      ADD_FAILURE() << bad << " was taken";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::usage) << bad;
      EXPECT_EQ(std::string(error.what()), std::string("ASCEND_SETUP_LLVM_SHA256: '") + bad +
                                               "' is not a SHA-256 (64 hex digits)");
    }
  }
  ::unsetenv("ASCEND_SETUP_LLVM_SHA256");
}
