#include "base/download/package_fetch.hpp"

#include "base/download/archive_extract.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "base/util/staged_replacement.hpp"
#include "base/util/strings.hpp"
#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"
#include "base/util/whole_file.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <optional>
#include <system_error>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr const char* kRecordStaging = "record";

// A name for the hidden files beside the package directory.
std::string stem(const PackageSpec& spec) {
  return spec.name.empty() ? spec.root_dir.filename().string() : spec.name;
}

fs::path beside(const PackageSpec& spec) {
  return spec.name.empty() ? spec.root_dir.parent_path() : spec.root_dir;
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// SHA-256 of a file as lowercase hex, read in blocks (a package is GBs); a
// stop signal ends it.
std::string file_sha256(const fs::path& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    throw system_error("open", path, errno);
  }
  Sha256 sha;
  std::string block(std::size_t{1} << 20, '\0');
  while (true) {
    throw_if_stopped();
    const ssize_t n = ::read(fd.get(), block.data(), block.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw system_error("read", path, errno);
    }
    if (n == 0) {
      break;
    }
    sha.update(std::string_view(block.data(), static_cast<std::size_t>(n)));
  }
  return sha.hex();
}

void remove_download(const PackageSpec& spec) {
  std::error_code ignored;
  fs::remove(package_download(spec), ignored);
  fs::remove(package_download_record(spec), ignored);
}

// Records the complete download's URL, length and digest beside it.
void record_download(const PackageSpec& spec, std::uint64_t size, const HeldLock& held) {
  const nlohmann::json record = {
      {"url", spec.url}, {"size", size}, {"sha256", file_sha256(package_download(spec))}};
  StagedReplacement staged(held, package_download_record(spec), kRecordStaging);
  write_whole_file(staged.staged(), record.dump() + "\n");
  staged.commit();
}

// True when an earlier run's complete download of this URL is here with its
// recorded length and digest. Anything else there is removed, with one
// warning when it was a download.
bool kept_download_matches(const PackageSpec& spec) {
  const fs::path download = package_download(spec);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(download, ec))) {
    fs::remove(package_download_record(spec), ec);
    return false;
  }
  std::string mismatch;
  try {
    const auto text = read_whole_file(package_download_record(spec));
    const auto record = text ? nlohmann::json::parse(*text) : nlohmann::json();
    if (record.is_null()) {
      mismatch = "has no record of its length and digest";
    } else if (record.at("url").get<std::string>() != spec.url) {
      mismatch = "is of another URL (" + record.at("url").get<std::string>() + ")";
    } else if (const auto size = fs::file_size(download);
               size != record.at("size").get<std::uint64_t>()) {
      mismatch = "has " + std::to_string(size) + " bytes, not the " +
                 std::to_string(record.at("size").get<std::uint64_t>()) + " recorded";
    } else if (file_sha256(download) != record.at("sha256").get<std::string>()) {
      mismatch = "does not have the SHA-256 recorded when it was downloaded";
    }
  } catch (const nlohmann::json::exception& error) {
    mismatch = std::string("has an unreadable record (") + error.what() + ")";
  } catch (const fs::filesystem_error& error) {
    mismatch = std::string("cannot be checked (") + system_error(error).what() + ")";
  }
  if (mismatch.empty()) {
    spdlog::info("unpacking {} kept by an earlier run ({}, SHA-256 checked): nothing to fetch",
                 download.string(), human_bytes(double(fs::file_size(download))));
    return true;
  }
  spdlog::warn("the kept download {} {}; fetching it again", download.string(), mismatch);
  remove_download(spec);
  return false;
}

// The download unpacked into a staged copy of the package directory, its
// version.txt written last, the whole put in place.
void unpack(const PackageSpec& spec, const fs::path& directory, const HeldLock& held) {
  StagedReplacement staged(held, directory, kPackageStaging);
  std::error_code ec;
  fs::create_directory(staged.staged(), ec);
  if (ec) {
    throw system_error("create the directory", staged.staged(), ec.value());
  }
  extract_archive(package_download(spec), staged.staged(), spec.name);
  write_whole_file(staged.staged() / "version.txt", spec.url);
  staged.commit();
}

// The archive from the mirror when it has it, else from the package's URL.
DownloadResult download_package(const PackageSpec& spec, const fs::path& download,
                                const DownloadOptions& options) {
  if (const auto mirrored = mirror_url(options.package_mirror, spec.url)) {
    DownloadOptions through_mirror = options;
    through_mirror.attempts = 1;  // a mirror is a shortcut: no retry lines, the origin next
    try {
      DownloadResult result = download_file(*mirrored, download, through_mirror);
      spdlog::info("fetched {} from the package mirror ({})", spec.url, *mirrored);
      return result;
    } catch (const DownloadError& error) {
      spdlog::warn("the package mirror cannot serve {} ({}); fetching {} instead", *mirrored,
                   error.what(), spec.url);
    }
  }
  return download_file(spec.url, download, options);
}

}  // namespace

std::optional<std::string> mirror_url(const std::string& mirror, const std::string& url) {
  std::string base = mirror;
  while (!base.empty() && base.back() == '/') {
    base.pop_back();
  }
  const auto scheme = url.find("://");
  if (base.empty() || scheme == std::string::npos) {
    return std::nullopt;
  }
  const std::string_view rest = std::string_view(url).substr(scheme + 3);
  const std::string_view path = rest.substr(0, rest.find_first_of("?#"));
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) {
    return std::nullopt;  // a host alone
  }
  const std::string_view name = path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return std::nullopt;
  }
  return base + "/" + std::string(name);
}

fs::path package_directory(const PackageSpec& spec) {
  return spec.name.empty() ? spec.root_dir : spec.root_dir / spec.name;
}

fs::path package_download(const PackageSpec& spec) {
  return beside(spec) / ("." + stem(spec) + ".download");
}

fs::path package_download_record(const PackageSpec& spec) {
  return beside(spec) / ("." + stem(spec) + ".download.json");
}

fs::path package_lock(const PackageSpec& spec) {
  return beside(spec) / ("." + stem(spec) + ".lock");
}

bool package_cached(const PackageSpec& spec) {
  const auto text = read_whole_file(package_directory(spec) / "version.txt");
  return text && *text == spec.url;
}

FileLock lock_package(const PackageSpec& spec) {
  return FileLock(package_lock(spec),
                  "fetching " + spec.url + " into " + package_directory(spec).string());
}

std::string manual_command(const PackageSpec& spec) {
  const fs::path file = beside(spec) / (stem(spec) + ".tar.gz");
  return "curl -fL -C - -o " + shell_quoted(file.string()) + " " + shell_quoted(spec.url) +
         " && tar -xf " + shell_quoted(file.string()) + " -C " +
         shell_quoted(spec.root_dir.string()) + " && printf %s " + shell_quoted(spec.url) + " > " +
         shell_quoted((package_directory(spec) / "version.txt").string());
}

PackageOutcome fetch_package(const PackageSpec& spec, const DownloadOptions& options) {
  if (package_cached(spec)) {
    PackageOutcome outcome;
    outcome.directory = package_directory(spec);
    spdlog::debug("{} is cached in {}", spec.url, outcome.directory.string());
    return outcome;
  }
  const FileLock lock = lock_package(spec);
  return fetch_package(spec, options, lock);
}

PackageOutcome fetch_package(const PackageSpec& spec, const DownloadOptions& options,
                             const FileLock& held) {
  PackageOutcome outcome;
  outcome.directory = package_directory(spec);
  if (package_cached(spec)) {
    spdlog::debug("{} is cached in {}", spec.url, outcome.directory.string());
    return outcome;
  }
  const fs::path download = package_download(spec);
  // What killed runs left, first: no other run writes here while the lock is held.
  StagedReplacement::remove_leftovers(held, outcome.directory, kPackageStaging);
  StagedReplacement::remove_leftovers(held, package_download_record(spec), kRecordStaging);
  if (kept_download_matches(spec)) {
    outcome.kept_download_used = true;
  } else {
    spdlog::info("fetching {} into {}", spec.url, outcome.directory.string());
    try {
      outcome.download = download_package(spec, download, options);
    } catch (const DownloadError& error) {
      throw Error(std::string(error.offline() ? "offline or unreachable: " : "") +
                      "cannot download " + spec.url + " to " + outcome.directory.string() + " (" +
                      error.what() + "); by hand: " + manual_command(spec),
                  error.kind());
    } catch (const Error& error) {
      if (error.kind() != ErrorKind::local_io) {
        throw;
      }
      throw Error(std::string(error.what()) + "; what was downloaded is kept in " +
                      part_path(download).string() + " for the next run to resume",
                  error.kind());
    }
    record_download(spec, outcome.download.size, held);
  }
  const std::string kept = "; the download is kept in " + download.string() +
                           " (the next run unpacks it without fetching it again)";
  try {
    unpack(spec, outcome.directory, held);
  } catch (const UnreadableArchive& error) {
    remove_download(spec);
    throw Error(std::string(error.what()) + "; the download was removed (the next run fetches " +
                    spec.url + " again)",
                error.kind());
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::stopped) {
      throw Error::stopped(std::string(error.what()) + " while unpacking " + spec.url + kept,
                           error.exit_code());
    }
    throw Error(std::string(error.what()) + kept, error.kind());
  } catch (const fs::filesystem_error& error) {
    const Error as_error = system_error(error);
    throw Error(std::string(as_error.what()) + kept, as_error.kind());
  }
  outcome.fetched = true;
  remove_download(spec);
  return outcome;
}

}  // namespace ascend_setup
