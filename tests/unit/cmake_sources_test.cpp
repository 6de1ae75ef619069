// The doctor's reading of the tree's CMake code: comments left out, whole
// words only, build and hidden directories skipped.
#include "base/tree/cmake_sources.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

TEST(CmakeSources, ACommentOrALongerNameIsNoTarget) {
  const std::string code = without_cmake_comments(
      "# triton-mlir-opt is gone\n"
      "add_executable(triton-opt main.cpp) # not triton-mlir-opt either\n"
      "add_executable(triton-opt-extra x.cpp)\n");
  EXPECT_TRUE(names_word(code, "triton-opt"));
  EXPECT_FALSE(names_word(code, "triton-mlir-opt"));
  EXPECT_FALSE(names_word(code, "opt"));
  EXPECT_FALSE(names_word(code, "triton-opt-extr"));
  EXPECT_TRUE(names_word(code, "triton-opt-extra"));
  EXPECT_FALSE(names_word(code, ""));
}

TEST(CmakeSources, BuildAndHiddenDirectoriesAreNotRead) {
  TempDir dir;
  write_file(dir.path() / "CMakeLists.txt", "add_subdirectory(lib)\n");
  write_file(dir.path() / "lib/CMakeLists.txt", "add_executable(kept k.cpp)\n");
  write_file(dir.path() / "cmake/rules.cmake", "add_executable(from_module m.cpp)\n");
  write_file(dir.path() / "build/CMakeLists.txt", "add_executable(in_build b.cpp)\n");
  write_file(dir.path() / ".git/CMakeLists.txt", "add_executable(hidden h.cpp)\n");
  write_file(dir.path() / "lib/notes.txt", "add_executable(not_cmake n.cpp)\n");
  std::string all;
  for (const std::string& text : cmake_code(dir.path())) {
    all += text;
  }
  EXPECT_TRUE(names_word(all, "kept"));
  EXPECT_TRUE(names_word(all, "from_module"));
  EXPECT_FALSE(names_word(all, "in_build"));
  EXPECT_FALSE(names_word(all, "hidden"));
  EXPECT_FALSE(names_word(all, "not_cmake"));
}
