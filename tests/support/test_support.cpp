#include "test_support.hpp"

#include "ascend_setup/text_file.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace test_support {

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "ascend-setup-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_file(const fs::path& path) {
  return ascend_setup::read_text_file(path).value_or("");
}

fs::path copy_example_tree(const fs::path& dir) {
  const fs::path tree = dir / "tree";
  fs::copy(EXAMPLE_TREE, tree, fs::copy_options::recursive);
  return tree;
}

std::string must_run(const std::vector<std::string>& argv, const fs::path& cwd, const Env& env) {
  const ascend_setup::ProcessResult result = ascend_setup::run_process({argv, cwd, env, {}});
  std::string command;
  for (const auto& arg : argv) {
    command += arg + " ";
  }
  EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.out << result.err;
  return result.out;
}

Env git_env(const fs::path& home) {
  return {{"HOME", home.string()},
          {"GIT_CONFIG_NOSYSTEM", "1"},
          {"GIT_CONFIG_GLOBAL", "/dev/null"},
          {"GIT_AUTHOR_NAME", "Test"},
          {"GIT_AUTHOR_EMAIL", "test@example.com"},
          {"GIT_COMMITTER_NAME", "Test"},
          {"GIT_COMMITTER_EMAIL", "test@example.com"}};
}

std::string make_git_repo(const fs::path& tree, const fs::path& home) {
  const Env env = git_env(home);
  must_run({"git", "init", "-q", "-b", "main"}, tree, env);
  must_run({"git", "add", "-A"}, tree, env);
  must_run({"git", "commit", "-q", "-m", "initial"}, tree, env);
  std::string head = must_run({"git", "rev-parse", "HEAD"}, tree, env);
  return head.substr(0, head.find('\n'));
}

Env offline_env(const fs::path& home) {
  Env env = git_env(home);
  env["LLVM_SYSPATH"] = STUB_LLVM;
  env["TRITON_OFFLINE_BUILD"] = "1";
  env["TRITON_HOME"] = home.string();
  env["VIRTUAL_ENV"] = std::nullopt;
  env["ASCEND_SETUP_LOG_LEVEL"] = std::nullopt;
  for (const char* name : {"TRITON_WHEEL_NAME", "TRITON_VERSION", "TRITON_WHEEL_VERSION_SUFFIX",
                           "IS_MANYLINUX", "TRITON_BUILD_DISTRIBUTED", "TRITON_BUILD_PROTON",
                           "TRITON_APPEND_CMAKE_ARGS", "PYTHONPATH", "PYTHONHOME"}) {
    env[name] = std::nullopt;
  }
  return env;
}

ascend_setup::ProcessResult run_host(const std::vector<std::string>& args, const fs::path& cwd,
                                     const Env& env) {
  std::vector<std::string> argv{ASCEND_SETUP_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return ascend_setup::run_process({argv, cwd, env, {}});
}

nlohmann::ordered_json parse_json(const std::string& text) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const std::exception& error) {
    ADD_FAILURE() << "not JSON: " << error.what() << "\n" << text;
    return {};
  }
}

}  // namespace test_support
