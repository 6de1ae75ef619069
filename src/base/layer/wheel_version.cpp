#include "base/layer/wheel_version.hpp"

#include "base/layer/checkout_record.hpp"
#include "base/layer/environment.hpp"
#include "base/util/error.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>

namespace ascend_setup {

bool is_pep440_version(std::string_view version) {
  // PEP 440's grammar, permissive spellings included (as packaging accepts them):
  // [N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]
  // PCRE2 (compiled once, a few thousand instructions; std::regex's icase
  // compile took about 1% of a --dump-kwargs).
  static const std::unique_ptr<pcre2_code, void (*)(pcre2_code*)> pattern = [] {
    constexpr const char* text = R"(^\s*v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*)"
                                 R"((?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?)"
                                 R"((?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?)"
                                 R"((?:[-_.]?dev[-_.]?[0-9]*)?)"
                                 R"((?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$)";
    int error = 0;
    PCRE2_SIZE offset = 0;
    return std::unique_ptr<pcre2_code, void (*)(pcre2_code*)>(
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(text), PCRE2_ZERO_TERMINATED,
                      PCRE2_CASELESS | PCRE2_DOLLAR_ENDONLY, &error, &offset, nullptr),
        pcre2_code_free);
  }();
  const std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> match(
      pcre2_match_data_create_from_pattern(pattern.get(), nullptr), pcre2_match_data_free);
  return pcre2_match(pattern.get(), reinterpret_cast<PCRE2_SPTR>(version.data()), version.size(), 0,
                     PCRE2_ANCHORED, match.get(), nullptr) >= 0;
}

std::string compose_version(const std::string& base, const std::string& suffix,
                            const std::optional<std::string>& git_hash) {
  if (!git_hash) {
    return base + suffix;
  }
  const std::string git_part = "+git" + *git_hash;
  if (suffix.find('+') != std::string::npos) {
    // Upstream's rule: a version has one "+"; the suffix follows the git part
    // with its "+" turned into "-".
    std::string local = suffix;
    for (char& c : local) {
      if (c == '+') {
        c = '-';
      }
    }
    return base + git_part + local;
  }
  return base + suffix + git_part;
}

std::string version_text(const Profile& profile, const std::filesystem::path& tree_root) {
  const auto text = read_whole_file(tree_root / profile.version.file);
  return text ? trim(*text) : profile.version.fallback;
}

std::string wheel_version(const Profile& profile, const std::filesystem::path& tree_root) {
  const Profile::Version& v = profile.version;
  std::string base;
  std::string base_origin;
  if (auto value = env_value(EnvVar::version_override, &profile)) {
    base = *value;
    base_origin = "$" + v.override_env;
  } else {
    base = version_text(profile, tree_root);
    base_origin = std::filesystem::exists(tree_root / v.file) ? (tree_root / v.file).string()
                                                              : "the profile's version.fallback";
  }
  const std::string suffix = env_value(EnvVar::version_suffix, &profile).value_or("");

  std::optional<std::string> git_hash;
  if (!env_on(EnvVar::manylinux, profile)) {
    // A checkout's HEAD, or the one an sdist of a checkout recorded.
    if (auto facts = checkout_facts(tree_root, v.git_hash_length)) {
      git_hash = facts->head_short_id;
    }
  }

  const std::string version = compose_version(base, suffix, git_hash);
  if (!is_pep440_version(version)) {
    const std::string culprit = suffix.empty() ? base_origin + " ('" + base + "')"
                                               : "$" + v.suffix_env + " ('" + suffix + "')";
    throw Error("version '" + version + "' is not a valid PEP 440 version: fix " + culprit,
                ErrorKind::bad_input);
  }
  return version;
}

}  // namespace ascend_setup
