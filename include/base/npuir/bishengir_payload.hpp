// The BishengIR payload (bin/bishengir-compile, bin/bishengir-opt, lib/, ...):
// where build_py takes it from, its check, and the copies that put it in
// place. Every copy is staged beside its target and swapped in with one
// rename, so a target is either the old payload or the whole new one, never
// half-written; symlinks are copied as symlinks. The staged copies a killed
// run left beside the target are removed first: the callers hold the lock of
// the target (build_lib: the build lock; the tree's payload: the NPUIR lock).
#pragma once

#include "base/layer/profile.hpp"
#include "base/util/held_lock.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

// The payload build_py copies: the directory [bishengir] path_env names when
// set (relative to the directory setup.py runs in), else [bishengir] source in
// the tree when the [npuir] switch is on, else none.
std::optional<std::filesystem::path> bishengir_payload_source(
    const std::filesystem::path& tree_root, const Profile& profile);

// The entries of `required` (relative paths; a trailing '/' means a
// directory) that `payload` lacks, in order.
std::vector<std::string> missing_payload_parts(const std::filesystem::path& payload,
                                               const std::vector<std::string>& required);

// Throws Error(bad_input) naming what is missing when `source` is no
// directory or lacks one of `required` (`origin` says where the source came
// from, e.g. the variable).
void check_bishengir_payload(const std::filesystem::path& source,
                             const std::vector<std::string>& required, const std::string& origin);

// Copies the payload directory `source` to `target`, replacing what was there,
// after check_bishengir_payload(). Throws Error naming the path when a copy
// fails. `held`: the lock that keeps other writers of `target` out (the
// build lock), so that staged copies stopped runs left are removed
// (StagedReplacement).
void install_bishengir_payload(const std::filesystem::path& source,
                               const std::filesystem::path& target,
                               const std::vector<std::string>& required, const std::string& origin,
                               const HeldLock& held);

// Copies each of `artifacts` (relative to `output`; a '*' in the last part
// is a pattern that must match at least one file) to the same relative path
// in a new directory that replaces `target`. Throws Error(python_error, as a
// failing build tool) naming an artifact the build did not write. `held`: as
// above (the NPUIR build's lock).
void collect_artifacts(const std::filesystem::path& output,
                       const std::vector<std::string>& artifacts,
                       const std::filesystem::path& target, const HeldLock& held);

}  // namespace ascend_setup
