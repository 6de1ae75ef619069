#include "base/git/git_apply.hpp"

#include "base/process/process.hpp"
#include "base/util/error.hpp"

namespace ascend_setup {

namespace {

// A glob for `git apply --include` that matches exactly `path`.
std::string exact_glob(const std::string& path) {
  std::string glob;
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') {
      glob += '\\';
    }
    glob += c;
  }
  return glob;
}

}  // namespace

GitApplyResult git_apply(const std::filesystem::path& scratch, const std::string& text,
                         const std::filesystem::path& origin, const GitApplyOptions& options) {
  ProcessSpec spec;
  spec.argv = {"git", "apply"};
  if (options.direction == ApplyDirection::reverse) {
    spec.argv.emplace_back("--reverse");
  }
  if (options.action == ApplyAction::check_only) {
    spec.argv.emplace_back("--check");
  }
  if (!options.directory.empty()) {
    spec.argv.push_back("--directory=" + options.directory);
  }
  for (const auto& file : options.only) {
    spec.argv.push_back("--include=" + exact_glob(file));
  }
  spec.cwd = scratch;
  spec.stdin_text = text;
  // The ceiling keeps git from finding the tree's own .git.
  spec.env_changes = {{"GIT_CEILING_DIRECTORIES", scratch.parent_path().string()},
                      {"GIT_DIR", std::nullopt},
                      {"GIT_WORK_TREE", std::nullopt},
                      {"GIT_INDEX_FILE", std::nullopt},
                      {"LC_ALL", "C"}};
  ProcessResult result;
  try {
    result = run_process(spec);
  } catch (const SpawnError& error) {
    if (!error.not_found()) {
      throw;
    }
    throw Error(std::string(error.what()) + ": git is needed on PATH to apply the Ascend patches",
                ErrorKind::bad_input);
  }
  for (const char* sign : {"corrupt patch", "No valid patches", "patch fragment without header",
                           "unrecognized input", "garbage"}) {
    if (result.err.find(sign) != std::string::npos) {
      const auto line_end = result.err.find('\n');
      throw Error("malformed patch " + origin.string() + ": git apply says " +
                      result.err.substr(0, line_end),
                  ErrorKind::bad_input);
    }
  }
  return {result.exit_code == 0, result.err};
}

}  // namespace ascend_setup
