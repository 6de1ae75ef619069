// The suites of one maintainers' line on its example tree
// (line_370_test.cpp, line_380_test.cpp): the tree copied, its AscendNPU-IR
// stand-in made a nested repository registered as a submodule, the whole
// committed; the offline environment; runs of the binary there; and the
// power-loss check every line's nested patch gets.
#pragma once

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace test_support {

class LineTreeTest : public ::testing::Test {
 protected:
  explicit LineTreeTest(const std::string& example);

  // The binary run in the tree with the environment plus `extra`.
  ascend_setup::ProcessResult host(const std::vector<std::string>& args,
                                   const Env& extra = {}) const;

  std::string git_status(const fs::path& where) const;

  // A SIGKILL at every write of `--release --apply-patches` (the preload at
  // `fail_nth_write`), then any run: the tree and the nested checkout at
  // `nested` are both pristine or both patched.
  void expect_whole_at_every_write(const std::string& fail_nth_write,
                                   const std::string& nested) const;

  TempDir dir;
  fs::path tree;
  std::string head;  // the tree's commit
  Env env;
};

}  // namespace test_support
