// Which LLVM package the Ascend layer builds against: the Ascend
// build of LLVM named after upstream's LLVM revision and a hash of the Ascend
// LLVM patches, or, where no Ascend build exists, upstream's choice.
#pragma once

#include "base/layer/profile.hpp"
#include "base/util/platform_info.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <variant>

namespace ascend_setup {

struct LlvmPackage {
  std::string name;
  std::string url;
  std::string sym_name;
};

// No Ascend build for this platform: call upstream's get_llvm_package_info.
struct UseUpstreamLlvm {};

// The platform should have one but cannot be identified (a libc without a
// version, e.g. musl): build against a user-configured LLVM, as upstream does
// on an unsupported platform. `reason` is logged as a warning.
struct UserConfiguredLlvm {
  std::string reason;
};

using LlvmChoice = std::variant<LlvmPackage, UseUpstreamLlvm, UserConfiguredLlvm>;

// Upstream's LLVM revision as the package name takes it: the first
// rev_length characters of hash_file's text, or of its JSON key hash_key's
// string when that is set. Error(local_io) when the file cannot be read,
// Error(bad_input) when it holds no such key.
std::string llvm_revision(const Profile::Llvm& profile, const std::filesystem::path& tree_root);

// First `length` hex digits of SHA-256 over the bytes of every
// <prefix>*<suffix> file in `patch_dir`, in sorted name order, concatenated;
// `none` when there is no such file.
std::string llvm_patch_hash(const std::filesystem::path& patch_dir, const std::string& prefix,
                            const std::string& suffix, int length, const std::string& none);

// A pinned SHA-256 of a package's archive and what pins it, for messages.
struct PinnedSha256 {
  std::string sha256;  // 64 lowercase hex digits
  std::string from;
};

// The SHA-256 pinned for the LLVM package `name`: ASCEND_SETUP_LLVM_SHA256
// when set and not empty (64 hex digits, either case, else Error(usage)),
// else the profile's [llvm] sha256 entry for `name`; nullopt when neither.
std::optional<PinnedSha256> llvm_package_sha256(const Profile& profile, const std::string& name);

// The system suffix ("ubuntu-x64", "macos-arm64", ...) for `platform`, with
// `env_suffix` (TRITON_LLVM_SYSTEM_SUFFIX) winning when not empty.
LlvmChoice choose_llvm_package(const Profile::Llvm& profile, const PlatformInfo& platform,
                               const std::string& env_suffix,
                               const std::filesystem::path& tree_root);

}  // namespace ascend_setup
