#include "base/download/archive_links.hpp"

#include <deque>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

// The kernel's bound on the links followed in one lookup (MAXSYMLINKS);
// more is ELOOP there, a refusal here.
constexpr int kMostLinksFollowed = 40;

std::vector<std::string> parts_of(const fs::path& path) {
  std::vector<std::string> parts;
  for (const auto& part : plain_path(path)) {
    parts.push_back(part.string());
  }
  return parts;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) {
    out += (out.empty() ? "" : "/") + part;
  }
  return out;
}

std::deque<std::string> split(const std::string& target) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= target.size()) {
    const auto slash = target.find('/', start);
    const auto end = slash == std::string::npos ? target.size() : slash;
    parts.push_back(target.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace

fs::path plain_path(const fs::path& path) {
  fs::path out;
  for (const auto& part : path) {
    if (part != "." && !part.empty()) {
      out /= part;
    }
  }
  return out;
}

std::optional<ArchiveLinks::Parts> ArchiveLinks::resolve(const Parts& from,
                                                         const std::string& target,
                                                         const std::string& link,
                                                         std::string& why) {
  Parts at = from;
  std::deque<std::string> pending = split(target);
  int followed = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part.empty() || part == ".") {
      continue;
    }
    if (part == "..") {
      if (at.empty()) {
        why = "it would point outside the directory";
        return std::nullopt;
      }
      at.pop_back();
      continue;
    }
    at.push_back(std::move(part));
    const std::string path = joined(at);
    walked_by_[path].insert(link);
    walks_of_[link].insert(path);
    const auto found = targets_.find(path);
    if (found == targets_.end()) {
      continue;
    }
    if (++followed > kMostLinksFollowed) {
      why = "its links loop (more than " + std::to_string(kMostLinksFollowed) + " followed)";
      return std::nullopt;
    }
    at.pop_back();  // a link's target is read in the link's directory
    const auto more = split(found->second);
    pending.insert(pending.begin(), more.begin(), more.end());
  }
  return at;
}

void ArchiveLinks::forget_walks_of(const std::string& link) {
  const auto walks = walks_of_.find(link);
  if (walks == walks_of_.end()) {
    return;
  }
  for (const auto& path : walks->second) {
    walked_by_[path].erase(link);
  }
  walks_of_.erase(walks);
}

std::optional<std::string> ArchiveLinks::add_symlink(const fs::path& link,
                                                     const std::string& target) {
  if (target.empty()) {
    return "its target is empty";
  }
  if (target.front() == '/') {
    return "its target is absolute";
  }
  if (target.find('\0') != std::string::npos) {
    return "its target holds a NUL byte";
  }
  const Parts parts = parts_of(link);
  if (parts.empty()) {
    return "it would replace the directory itself";
  }
  const std::string key = joined(parts);
  targets_[key] = target;
  const Parts directory(parts.begin(), parts.end() - 1);
  std::string why;
  forget_walks_of(key);
  if (!resolve(directory, target, key, why)) {
    return why;
  }
  // The links resolved through this path before it was a link (or was
  // another one) now lead elsewhere.
  const auto walked = walked_by_.find(key);
  if (walked == walked_by_.end()) {
    return std::nullopt;
  }
  const std::set<std::string> dependents = walked->second;
  for (const auto& dependent : dependents) {
    if (dependent == key) {
      continue;
    }
    forget_walks_of(dependent);
    const Parts dependent_parts = parts_of(dependent);
    const Parts dependent_directory(dependent_parts.begin(), dependent_parts.end() - 1);
    if (!resolve(dependent_directory, targets_.at(dependent), dependent, why)) {
      return "through it the link '" + dependent + "' unpacked before it: " + why;
    }
  }
  return std::nullopt;
}

std::optional<std::string> ArchiveLinks::check_entry(const fs::path& path) const {
  if (targets_.count(joined(parts_of(path))) != 0) {
    return "it would replace a symlink unpacked before it";
  }
  return std::nullopt;
}

std::optional<std::string> ArchiveLinks::add_hard_link(const fs::path& path,
                                                       const fs::path& linked) {
  const Parts parts = parts_of(linked);
  for (std::size_t length = 1; length < parts.size(); ++length) {
    const Parts prefix(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(length));
    if (targets_.count(joined(prefix)) != 0) {
      return "its target passes through the symlink '" + joined(prefix) + "'";
    }
  }
  // A second name of a symlink's inode holds the same text, read from the
  // new name's directory.
  if (const auto found = targets_.find(joined(parts)); found != targets_.end()) {
    const std::string target = found->second;
    return add_symlink(path, target);
  }
  return check_entry(path);
}

}  // namespace ascend_setup
