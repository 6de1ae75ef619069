// The Ascend configure arguments (base/layer/cmake_arguments.hpp): the order
// the maintainers' layer adds them in, and the ones computed from the build
// (the 3.8.0 line's LLVM_SYSPATH, GSan's clang++, the wheel's version).
#include "base/layer/cmake_arguments.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ascend_setup;
using namespace test_support;

namespace {

// The variables these arguments read, unset for each test and after it.
class CmakeArgumentsTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override {
    clear();
    ::setenv("PATH", path_.c_str(), 1);
  }
  static void clear() {
    for (const char* name : {"ASCENDNPU_IR_TAG", "TRITON_BUILD_TD", "TRITON_APPEND_CMAKE_ARGS"}) {
      ::unsetenv(name);
    }
  }
  // PATH holding one directory with an executable clang++ (or none).
  fs::path path_with_clangxx() {
    const fs::path bin = dir.path() / "path-bin";
    write_file(bin / "clang++", "#!/bin/sh\n");
    fs::permissions(bin / "clang++", fs::perms(0755));
    ::setenv("PATH", bin.c_str(), 1);
    return bin / "clang++";
  }
  TempDir dir;
  std::string path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
  Profile line380 = parse_profile(builtin_profile_text_of("triton-ascend-3.8.0.toml"), "3.8.0");
};

TEST_F(CmakeArgumentsTest, TheOlderLinesGetWhatTheyGotBefore) {
  const Profile profile = parse_profile(builtin_profile_text(), "built-in");
  ConfigureFacts facts{dir.path() / "llvm", "3.6.0+git12345678"};
  ::setenv("TRITON_BUILD_TD", "ON", 1);
  EXPECT_EQ(
      ascend_cmake_args(profile, facts),
      (std::vector<std::string>{"-DLLVM_MAJOR_VERSION_22_COMPATIBLE=ON", "-DTRITON_BUILD_TD=ON",
                                "-DLLVM_SYSPATH=" + (dir.path() / "llvm").string()}))
      << "an LLVM handed over is passed whatever the line; the 3.6.0 host hands none";
  EXPECT_EQ(
      ascend_cmake_args(profile, {}),
      (std::vector<std::string>{"-DLLVM_MAJOR_VERSION_22_COMPATIBLE=ON", "-DTRITON_BUILD_TD=ON"}));
}

TEST_F(CmakeArgumentsTest, TheLine380AddsTheLlvmClangxxAndVersionInTheirLayersOrder) {
  const fs::path llvm = dir.path() / "llvm";
  write_file(llvm / "bin/clang++", "");
  ::setenv("ASCENDNPU_IR_TAG", "v1", 1);
  path_with_clangxx();
  EXPECT_EQ(
      ascend_cmake_args(line380, {llvm, "3.8.0+gitabcdef12"}),
      (std::vector<std::string>{"-DASCENDNPU_IR_TAG=v1", "-DLLVM_MAJOR_VERSION_24_COMPATIBLE=ON",
                                "-DTRITON_BUILD_TD=OFF", "-DLLVM_SYSPATH=" + llvm.string(),
                                "-DTRITON_GSAN_CLANGXX=" + (llvm / "bin/clang++").string(),
                                "-DTRITON_VERSION=3.8.0+gitabcdef12"}));
}

TEST_F(CmakeArgumentsTest, GsanClangxxFallsBackToPathAndYieldsToTheUsersArguments) {
  const fs::path on_path = path_with_clangxx();
  const fs::path llvm = dir.path() / "llvm-without-clang";  // no bin/clang++
  auto gsan = [&] {
    std::vector<std::string> found;
    for (const auto& arg : ascend_cmake_args(line380, {llvm, "v"})) {
      if (arg.rfind("-DTRITON_GSAN_CLANGXX", 0) == 0) {
        found.push_back(arg);
      }
    }
    return found;
  };
  EXPECT_EQ(gsan(), std::vector<std::string>{"-DTRITON_GSAN_CLANGXX=" + on_path.string()});
  ::setenv("TRITON_APPEND_CMAKE_ARGS", "-DTRITON_BUILD_UT=OFF -DTRITON_GSAN_CLANGXX=/opt/c++", 1);
  EXPECT_TRUE(gsan().empty()) << "the user's own -DTRITON_GSAN_CLANGXX is overridden";
  ::unsetenv("TRITON_APPEND_CMAKE_ARGS");
  ::setenv("PATH", (dir.path() / "empty").c_str(), 1);
  EXPECT_TRUE(gsan().empty()) << "a clang++ that does not exist is passed";
}

}  // namespace
