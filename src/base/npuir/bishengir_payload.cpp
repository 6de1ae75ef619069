#include "base/npuir/bishengir_payload.hpp"

#include "base/layer/environment.hpp"
#include "base/util/error.hpp"
#include "base/util/staged_replacement.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ascend_setup {

namespace fs = std::filesystem;

namespace {

void copy_entry(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (!ec) {
    fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  }
  if (ec) {
    throw Error("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message(),
                ErrorKind::local_io);
  }
}

constexpr const char* kStaging = "staged";

// A new `target` filled by `fill`, then swapped in whole; the staged copies
// a killed run left beside it removed first (the caller holds the lock that
// keeps other writers of `target` out).
template <typename Fill>
void stage_and_replace(const HeldLock& held, const fs::path& target, Fill fill) {
  StagedReplacement staging(held, target, kStaging);
  fill(staging.staged());
  staging.commit();
}

}  // namespace

std::optional<fs::path> bishengir_payload_source(const fs::path& tree_root,
                                                 const Profile& profile) {
  if (!profile.bishengir.present) {
    return std::nullopt;
  }
  if (const auto given = env_value(EnvVar::bishengir_path, &profile); given && !given->empty()) {
    return fs::absolute(*given);
  }
  if (env_on(EnvVar::npuir, profile) && !profile.bishengir.source.empty()) {
    return tree_root / profile.bishengir.source;
  }
  return std::nullopt;
}

std::vector<std::string> missing_payload_parts(const fs::path& payload,
                                               const std::vector<std::string>& required) {
  std::vector<std::string> missing;
  for (const std::string& part : required) {
    std::error_code ec;
    const bool directory = !part.empty() && part.back() == '/';
    const fs::path path = payload / (directory ? part.substr(0, part.size() - 1) : part);
    if (directory ? !fs::is_directory(path, ec) : !fs::exists(path, ec)) {
      missing.push_back(part);
    }
  }
  return missing;
}

void check_bishengir_payload(const fs::path& source, const std::vector<std::string>& required,
                             const std::string& origin) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) {
    throw Error("the BishengIR payload " + source.string() + " (" + origin + ") is not a directory",
                ErrorKind::bad_input);
  }
  const std::vector<std::string> missing = missing_payload_parts(source, required);
  if (!missing.empty()) {
    std::string names;
    for (const std::string& part : missing) {
      names += (names.empty() ? "" : ", ") + part;
    }
    throw Error("the BishengIR payload " + source.string() + " (" + origin + ") lacks " + names,
                ErrorKind::bad_input);
  }
}

void install_bishengir_payload(const fs::path& source, const fs::path& target,
                               const std::vector<std::string>& required, const std::string& origin,
                               const HeldLock& held) {
  check_bishengir_payload(source, required, origin);
  stage_and_replace(held, target,
                    [&source](const fs::path& staged) { copy_entry(source, staged); });
  spdlog::info("BishengIR payload: {} copied to {}", source.string(), target.string());
}

void collect_artifacts(const fs::path& output, const std::vector<std::string>& artifacts,
                       const fs::path& target, const HeldLock& held) {
  stage_and_replace(held, target, [&](const fs::path& staged) {
    fs::create_directories(staged);
    for (const std::string& artifact : artifacts) {
      const fs::path relative(artifact);
      const std::string pattern = relative.filename().string();
      if (pattern.find('*') == std::string::npos) {
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(output / relative, ec))) {
          throw Error("the NPUIR build wrote no " + (output / relative).string(),
                      ErrorKind::python);
        }
        copy_entry(output / relative, staged / relative);
        continue;
      }
      const fs::path dir = output / relative.parent_path();
      std::vector<fs::path> matches;
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (::fnmatch(pattern.c_str(), it->path().filename().c_str(), 0) == 0) {
          matches.push_back(it->path());
        }
      }
      if (matches.empty()) {
        throw Error("the NPUIR build wrote no " + (output / relative).string(), ErrorKind::python);
      }
      for (const fs::path& match : matches) {
        copy_entry(match, staged / relative.parent_path() / match.filename());
      }
    }
  });
  spdlog::info("NPUIR build: artifacts of {} copied to {}", output.string(), target.string());
}

}  // namespace ascend_setup
