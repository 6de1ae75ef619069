#include "base/layer/profile_choice.hpp"

#include "base/util/error.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#include <algorithm>
#include <compare>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

// A release's components as digit strings without leading zeros ("" for 0),
// so that components of any length compare exactly, never overflowing.
std::vector<std::string> components(const std::string& version) {
  std::vector<std::string> result;
  std::istringstream parts(version);
  for (std::string part; std::getline(parts, part, '.');) {
    result.push_back(part.substr(std::min(part.size(), part.find_first_not_of('0'))));
  }
  return result;
}

// Two releases ("1.10.2", digits and dots) in numeric order, component by
// component ("1.10" is below "1.10.0", "1.9" below "1.10").
std::strong_ordering compare_versions(const std::string& a, const std::string& b) {
  const auto by_value = [](const std::string& x, const std::string& y) {
    return x.size() != y.size() ? x.size() <=> y.size() : x.compare(y) <=> 0;
  };
  const std::vector<std::string> left = components(a);
  const std::vector<std::string> right = components(b);
  return std::lexicographical_compare_three_way(left.begin(), left.end(), right.begin(),
                                                right.end(), by_value);
}

std::string major_minor(const std::string& version) {
  const auto first = version.find('.');
  return version.substr(0, first == std::string::npos ? first : version.find('.', first + 1));
}

// The release part of a version read from the tree, without trailing dots
// ("3.6." of "3.6.x" is 3.6), so that it is a version as written again.
std::string release_number(const std::string& text) {
  std::string version = release_part(text);
  while (version.ends_with('.')) {
    version.pop_back();
  }
  return version;
}

// The leading release literal assigned to `variable` at module level, if any.
std::optional<std::string> assigned_version(const std::string& source,
                                            const std::string& variable) {
  std::istringstream lines(source);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(variable)) {
      continue;
    }
    std::size_t at = line.find_first_not_of(" \t", variable.size());
    if (at == std::string::npos || line[at] != '=' || line.compare(at, 2, "==") == 0) {
      continue;
    }
    at = line.find_first_not_of(" \t", at + 1);
    if (at == std::string::npos || (line[at] != '"' && line[at] != '\'')) {
      continue;
    }
    if (std::string version = release_number(line.substr(at + 1)); !version.empty()) {
      return version;
    }
  }
  return std::nullopt;
}

std::string known_profiles(const std::vector<Profile>& candidates) {
  std::vector<std::string> known;
  for (const Profile& profile : candidates) {
    known.push_back(profile.name + " for " + profile.upstream.version);
  }
  return join(known);
}

std::vector<Profile> profiles_in(const fs::path& directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    throw Error("--profile-dir " + directory.string() + ": " +
                    (error ? error.message() : std::string("not a directory")),
                ErrorKind::bad_input);
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".toml") {
      files.push_back(it->path());
    }
  }
  if (error) {
    throw Error("--profile-dir " + directory.string() + ": " + error.message(),
                ErrorKind::bad_input);
  }
  std::sort(files.begin(), files.end());
  std::vector<Profile> result;
  for (const fs::path& file : files) {
    result.push_back(load_profile_file(file));
  }
  return result;
}

}  // namespace

std::string release_part(const std::string& version) {
  return version.substr(0, version.find_first_not_of("0123456789."));
}

std::optional<TreeVersion> read_tree_version(const std::vector<Profile>& candidates,
                                             const fs::path& tree_root, const fs::path& setup_py) {
  if (const auto source = read_whole_file(setup_py)) {
    std::set<std::string> tried;
    for (const Profile& profile : candidates) {
      const std::string& variable = profile.upstream.version_variable;
      if (tried.insert(variable).second) {
        if (auto version = assigned_version(*source, variable)) {
          return TreeVersion{*version, "setup.py's " + variable};
        }
      }
    }
  }
  std::set<std::string> tried;
  for (const Profile& profile : candidates) {
    const std::string& file = profile.version.file;
    if (tried.insert(file).second) {
      if (const auto text = read_whole_file(tree_root / file)) {
        if (std::string version = release_number(trim(*text)); !version.empty()) {
          return TreeVersion{version, file};
        }
      }
    }
  }
  return std::nullopt;
}

ProfileChoice choose_profile(const std::vector<Profile>& candidates,
                             const std::optional<TreeVersion>& version, const Profile& fallback) {
  if (!version) {
    ProfileChoice choice{fallback, false};
    choice.profile.chosen_because =
        "the tree's upstream version could not be read (no version literal in setup.py, no "
        "version file): the default profile";
    return choice;
  }
  const std::string found = version->found_in + " is " + version->version;
  for (const Profile& profile : candidates) {
    if (profile.upstream.version == version->version) {
      ProfileChoice choice{profile, true};
      choice.profile.chosen_because = found;
      return choice;
    }
  }
  // Same major.minor: the highest; else the nearest below; else the nearest above.
  const Profile* best = nullptr;
  std::string how;
  auto consider = [&](const Profile& profile, bool higher_wins, const char* why) {
    const auto order = best ? compare_versions(profile.upstream.version, best->upstream.version)
                            : std::strong_ordering::equal;
    if (!best || (higher_wins ? order > 0 : order < 0)) {
      best = &profile;
      how = why;
    }
  };
  for (const Profile& profile : candidates) {
    if (major_minor(profile.upstream.version) == major_minor(version->version)) {
      consider(profile, true, "the same minor version");
    }
  }
  if (!best) {
    for (const Profile& profile : candidates) {
      if (compare_versions(profile.upstream.version, version->version) < 0) {
        consider(profile, true, "the nearest older upstream");
      }
    }
  }
  if (!best) {
    for (const Profile& profile : candidates) {
      consider(profile, false, "the nearest newer upstream");
    }
  }
  ProfileChoice choice{best ? *best : fallback, false};
  choice.profile.chosen_because =
      found + "; no profile is made for it (profiles: " + known_profiles(candidates) +
      "), this one is for " + how + "; see ascend-setup --doctor, or pass --profile";
  return choice;
}

std::optional<std::string> layer_marker_held(const Profile& profile, const fs::path& tree_root) {
  for (const std::string& marker : profile.layer.markers) {
    std::error_code ignored;
    if (fs::exists(tree_root / marker, ignored)) {
      return marker;
    }
  }
  for (const auto& [marker, text] : profile.layer.marker_texts) {
    // A marker is a small source file; a larger one or a directory is no marker.
    constexpr std::uintmax_t largest = 1 << 20;
    std::error_code ignored;
    if (!fs::is_regular_file(tree_root / marker, ignored) ||
        fs::file_size(tree_root / marker, ignored) > largest) {
      continue;
    }
    const auto content = read_whole_file(tree_root / marker);
    if (content && content->find(text) != std::string::npos) {
      return marker + ", which names " + text;
    }
  }
  return std::nullopt;
}

std::vector<Profile> fitting_layer(std::vector<Profile> candidates, const fs::path& tree_root) {
  std::vector<Profile> held, generic;
  for (Profile& profile : candidates) {
    if (profile.layer.markers.empty() && profile.layer.marker_texts.empty()) {
      generic.push_back(std::move(profile));
    } else if (layer_marker_held(profile, tree_root)) {
      held.push_back(std::move(profile));
    }
  }
  if (held.empty() && generic.empty()) {
    return candidates;  // none fits the tree's layer: the version alone decides
  }
  held.insert(held.end(), std::make_move_iterator(generic.begin()),
              std::make_move_iterator(generic.end()));
  return held;
}

ProfileChoice select_profile(const ProfileRequest& request, const fs::path& tree_root,
                             const fs::path& setup_py) {
  if (request.file) {
    ProfileChoice choice{load_profile_file(*request.file), true};
    choice.profile.chosen_because = "named by --profile";
    return choice;
  }
  const fs::path in_tree = tree_root / "ascend-setup.toml";
  if (fs::exists(in_tree)) {
    ProfileChoice choice{load_profile_file(in_tree), true};
    choice.profile.chosen_because = "the tree's own ascend-setup.toml";
    return choice;
  }
  std::vector<Profile> candidates;
  for (const fs::path& directory : request.directories) {
    for (Profile& profile : profiles_in(directory)) {
      candidates.push_back(std::move(profile));
    }
  }
  std::optional<Profile> fallback;
  for (const BuiltinProfile& builtin : builtin_profiles()) {
    candidates.push_back(parse_profile(builtin.text, "built-in " + std::string(builtin.file)));
    if (builtin.text.data() == builtin_profile_text().data()) {
      fallback = candidates.back();
    }
  }
  const std::optional<TreeVersion> version = read_tree_version(candidates, tree_root, setup_py);
  candidates = fitting_layer(std::move(candidates), tree_root);
  ProfileChoice choice = choose_profile(candidates, version, *fallback);
  if (const auto marker = layer_marker_held(choice.profile, tree_root)) {
    choice.profile.chosen_because +=
        "; the tree holds " + *marker + " (the " + choice.profile.layer.form + " layer)";
  }
  choice.candidates = candidates.size();  // those that fit the tree's layer
  choice.from_directories = static_cast<std::size_t>(
      std::count_if(candidates.begin(), candidates.end(),
                    [](const Profile& p) { return p.source.rfind("built-in ", 0) != 0; }));
  return choice;
}

}  // namespace ascend_setup
