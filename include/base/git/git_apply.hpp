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

// Applies `text` (reversed when `reverse`; only checked when `check_only`)
// to the files under `scratch`, limited to the tree-relative paths `only`
// when given. A malformed patch throws Error naming `origin`; git missing
// throws Error.
GitApplyResult git_apply(const std::filesystem::path& scratch, const std::string& text,
                         const std::filesystem::path& origin, bool reverse, bool check_only,
                         const std::vector<std::string>& only);

}  // namespace ascend_setup
