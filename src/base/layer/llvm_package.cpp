#include "base/layer/llvm_package.hpp"

#include "base/layer/environment.hpp"
#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <memory>

namespace ascend_setup {

namespace {

// "2.36" -> 236; nullopt when the text is not "<major>.<minor>[...]" with a
// major below 1000 and a minor below 100.
std::optional<int> glibc_number(const std::optional<std::string>& version) {
  if (!version) {
    return std::nullopt;
  }
  const std::string_view text(*version);
  const std::string_view major = leading_digits(text);
  if (major.size() == text.size() || text[major.size()] != '.') {
    return std::nullopt;
  }
  const std::string_view minor = leading_digits(text.substr(major.size() + 1));
  const auto a = parse_integer(major, 0, 999);
  const auto b = parse_integer(minor, 0, 99);
  if (!a || !b) {
    return std::nullopt;
  }
  return *a * 100 + *b;
}

std::string read_file(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  if (!text) {
    throw Error("cannot read " + path.string() + " (needed for the LLVM package name)",
                ErrorKind::local_io);
  }
  return *text;
}

}  // namespace

std::string llvm_revision(const Profile::Llvm& profile, const std::filesystem::path& tree_root) {
  const std::filesystem::path file = tree_root / profile.hash_file;
  const std::string text = read_file(file);
  if (profile.hash_key.empty()) {
    return text.substr(0, static_cast<size_t>(profile.rev_length));
  }
  const nlohmann::json info = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto found = info.is_object() ? info.find(profile.hash_key) : info.end();
  if (found == info.end() || !found->is_string() || found->get<std::string>().empty()) {
    throw Error(file.string() + " holds no JSON object with a string \"" + profile.hash_key +
                    "\" (the LLVM revision, needed for the LLVM package name)",
                ErrorKind::bad_input);
  }
  return found->get<std::string>().substr(0, static_cast<size_t>(profile.rev_length));
}

std::string llvm_patch_hash(const std::filesystem::path& patch_dir, const std::string& prefix,
                            const std::string& suffix, int length, const std::string& none) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(patch_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.rfind(prefix, 0) == 0 && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(entry.path());
    }
  }
  if (files.empty()) {
    return none;
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return a.filename().string() < b.filename().string();
  });

  Sha256 digest;
  for (const auto& file : files) {
    digest.update(read_file(file));
  }
  return digest.hex().substr(0, static_cast<size_t>(length));
}

LlvmChoice choose_llvm_package(const Profile::Llvm& profile, const PlatformInfo& platform,
                               const std::string& env_suffix,
                               const std::filesystem::path& tree_root) {
  // Upstream's architecture names for LLVM builds.
  std::string arch = platform.machine;
  if (arch == "x86_64") {
    arch = "x64";
  } else if (arch == "aarch64") {
    arch = "arm64";
  }

  std::string system_suffix;
  if (!env_suffix.empty()) {
    system_suffix = env_suffix;
  } else if (platform.system == "Darwin") {
    system_suffix = "macos-" + arch;
  } else if (platform.system == "Linux" && arch == "arm64") {
    system_suffix = platform.os_id == "almalinux" ? "almalinux-arm64" : "ubuntu-arm64";
  } else if (const auto os_rule =
                 std::find_if(profile.x64_os_suffixes.begin(), profile.x64_os_suffixes.end(),
                              [&](const auto& rule) { return rule.first == platform.os_id; });
             platform.system == "Linux" && arch == "x64" &&
             os_rule != profile.x64_os_suffixes.end()) {
    system_suffix = os_rule->second;  // e.g. the manylinux images, whatever their glibc
  } else if (platform.system == "Linux" && arch == "x64") {
    // musl: platform.libc_ver() gives no glibc version, so no Ascend build fits.
    const std::optional<int> glibc = glibc_number(platform.glibc);
    if (!glibc) {
      return UserConfiguredLlvm{
          "the C library reports no glibc version (musl?), so no Ascend "
          "LLVM build can be chosen; building against a user-configured "
          "LLVM (set " +
          profile.syspath_var + " or " + profile.suffix_env + ")"};
    }
    system_suffix = *glibc >= profile.ubuntu_min_glibc ? "ubuntu-x64" : "almalinux-x64";
  } else {
    return UseUpstreamLlvm{};
  }

  const std::string rev = llvm_revision(profile, tree_root);
  const std::string patch_hash =
      llvm_patch_hash(tree_root / profile.patch_dir, profile.patch_prefix, profile.patch_suffix,
                      profile.patch_hash_length, profile.no_patch_hash);
  auto expand = [&](std::string text) {
    text = replace_all(text, "{rev}", rev);
    text = replace_all(text, "{patch_hash}", patch_hash);
    return replace_all(text, "{suffix}", system_suffix);
  };
  LlvmPackage package;
  package.name = expand(profile.name);
  package.sym_name = expand(profile.sym_name);
  package.url = replace_all(profile.url, "{name}", package.name);
  return package;
}

std::optional<PinnedSha256> llvm_package_sha256(const Profile& profile, const std::string& name) {
  if (const auto value = env_value(EnvVar::llvm_sha256, &profile); value && !trim(*value).empty()) {
    std::string sha256 = trim(*value);
    std::transform(sha256.begin(), sha256.end(), sha256.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::string variable = env_name(EnvVar::llvm_sha256, &profile);
    if (!is_sha256_hex(sha256)) {
      throw Error(variable + ": '" + *value + "' is not a SHA-256 (64 hex digits)",
                  ErrorKind::usage);
    }
    return PinnedSha256{sha256, variable};
  }
  if (const auto pinned = profile.llvm.sha256.find(name); pinned != profile.llvm.sha256.end()) {
    return PinnedSha256{pinned->second, "the profile's [llvm] sha256"};
  }
  return std::nullopt;
}

}  // namespace ascend_setup
