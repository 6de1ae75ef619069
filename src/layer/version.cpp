#include "ascend_setup/version.hpp"

#include "ascend_setup/environment.hpp"
#include "ascend_setup/error.hpp"
#include "ascend_setup/source_repo.hpp"
#include "ascend_setup/text_file.hpp"

#include <regex>

namespace ascend_setup {

namespace {

std::string strip(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return "";
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

}  // namespace

bool is_pep440_version(std::string_view version) {
  // PEP 440's grammar, permissive spellings included (as packaging accepts them):
  // [N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]
  static const std::regex pattern(R"(^\s*v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*)"
                                  R"((?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?)"
                                  R"((?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?)"
                                  R"((?:[-_.]?dev[-_.]?[0-9]*)?)"
                                  R"((?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$)",
                                  std::regex::icase | std::regex::ECMAScript);
  return std::regex_match(version.begin(), version.end(), pattern);
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
  const auto text = read_text_file(tree_root / profile.version.file);
  return text ? strip(*text) : profile.version.fallback;
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
    if (auto repo = SourceRepo::open(tree_root)) {
      git_hash = repo->head_short_id(v.git_hash_length);
    }
  }

  const std::string version = compose_version(base, suffix, git_hash);
  if (!is_pep440_version(version)) {
    const std::string culprit = suffix.empty() ? base_origin + " ('" + base + "')"
                                               : "$" + v.suffix_env + " ('" + suffix + "')";
    throw Error("version '" + version + "' is not a valid PEP 440 version: fix " + culprit);
  }
  return version;
}

}  // namespace ascend_setup
