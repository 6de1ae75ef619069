// `git apply` of one patch text in a scratch directory that is no git
// checkout: git's offset search and all-or-nothing semantics, outside any
// repository. The patch engine's only way to apply or undo a hunk.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ascend_setup {

struct GitApplyResult {
  bool ok = false;
  std::string err;  // git's own report when it did not apply
};

enum class ApplyDirection { forward, reverse };
enum class ApplyAction { write, check_only };

struct GitApplyOptions {
  ApplyDirection direction = ApplyDirection::forward;
  ApplyAction action = ApplyAction::write;
  std::vector<std::string> only;  // tree-relative paths to limit it to; empty: all
  std::string directory;  // the patch's paths are relative to it (`--directory`); empty: the root
};

// Applies `text` to the files under `scratch` as `options` say. A malformed
// patch throws Error naming `origin`; git missing throws Error.
GitApplyResult git_apply(const std::filesystem::path& scratch, const std::string& text,
                         const std::filesystem::path& origin, const GitApplyOptions& options = {});

}  // namespace ascend_setup
