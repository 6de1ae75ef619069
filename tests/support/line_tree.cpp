#include "line_tree.hpp"

#include <signal.h>

namespace test_support {

LineTreeTest::LineTreeTest(const std::string& example)
    : tree(copy_example_tree(dir.path(), example)) {
  make_nested_npuir_repo(tree, dir.path());
  head = make_git_repo(tree, dir.path());
  env = offline_env(dir.path());
}

ascend_setup::ProcessResult LineTreeTest::host(const std::vector<std::string>& args,
                                               const Env& extra) const {
  Env all = env;
  for (const auto& [name, value] : extra) {
    all[name] = value;
  }
  return run_host(args, tree, all);
}

std::string LineTreeTest::git_status(const fs::path& where) const {
  return must_run({"git", "status", "--porcelain"}, where, git_env(dir.path()));
}

void LineTreeTest::expect_whole_at_every_write(const std::string& fail_nth_write,
                                               const std::string& nested) const {
  const auto pristine = files_under(tree);
  for (int nth = 1;; ++nth) {
    ASSERT_LT(nth, 100) << "the run never finished";
    const auto run =
        host({"--release", "--apply-patches"}, {{"LD_PRELOAD", fail_nth_write},
                                                {"FAIL_WRITE_MATCH", tree.string()},
                                                {"FAIL_WRITE_NTH", std::to_string(nth)},
                                                {"FAIL_WRITE_KILL", "1"}});
    if (run.exit_code == 0) {
      EXPECT_GT(nth, 6) << "the stand-in never struck";
      EXPECT_NE(git_status(tree / nested), "");
      break;
    }
    ASSERT_EQ(run.exit_code, 128 + SIGKILL) << run.err;
    const auto status = host({"--release", "--patch-status"});
    EXPECT_EQ(status.exit_code, 1) << "write " << nth << status.err;
    EXPECT_EQ(files_under(tree), pristine) << "write " << nth << ": a half-patched tree";
  }
}

}  // namespace test_support
