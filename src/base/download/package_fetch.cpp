#include "base/download/package_fetch.hpp"

#include "base/download/archive_extract.hpp"
#include "base/download/file_digest.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "base/util/shown_url.hpp"
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

void remove_download(const PackageSpec& spec) {
  std::error_code ignored;
  fs::remove(package_download(spec), ignored);
  fs::remove(package_download_record(spec), ignored);
}

// A digest other than the pinned one: the download goes, and the run stops
// naming both (`source`: the URL that sent it, when known).
void check_pinned_digest(const PackageSpec& spec, const std::string& sha256,
                         const std::string& source) {
  if (spec.sha256.empty() || sha256 == spec.sha256) {
    return;
  }
  remove_download(spec);
  throw Error(
      "the download of " + shown_url(spec.url) +
          (source.empty() || source == spec.url ? "" : " (from " + shown_url(source) + ")") +
          " has the SHA-256 " + sha256 + ", not the " + spec.sha256 + " pinned by " +
          spec.sha256_from + "; the download was removed",
      ErrorKind::bad_input);
}

// Records the complete download's URL, length and digest beside it.
void record_download(const PackageSpec& spec, std::uint64_t size, const std::string& sha256,
                     const HeldLock& held) {
  const nlohmann::json record = {{"url", spec.url}, {"size", size}, {"sha256", sha256}};
  StagedReplacement staged(held, package_download_record(spec), kRecordStaging);
  write_whole_file(staged.staged(), record.dump() + "\n");
  staged.commit();
}

// A fresh download: its digest (computed as it arrived) checked against the
// pin, then recorded.
void record_download(const PackageSpec& spec, const DownloadResult& result,
                     const std::string& source, const HeldLock& held) {
  check_pinned_digest(spec, result.sha256, source);
  record_download(spec, result.size, result.sha256, held);
}

// Why an earlier run's download of this URL cannot be used as it is (empty:
// it can): its record must name the URL, its length and its digest. One
// without a record is whole (only a complete download gets its name): a run
// stopped between the rename and the record, so it is hashed and recorded
// now rather than fetched again.
std::string kept_download_mismatch(const PackageSpec& spec, const HeldLock& held) {
  const fs::path download = package_download(spec);
  const auto text = read_whole_file(package_download_record(spec));
  if (!text) {
    const std::string sha256 = file_sha256(download);
    spdlog::info(
        "{} is whole but has no record (a run stopped right after it was downloaded): "
        "recording it",
        download.string());
    check_pinned_digest(spec, sha256, "");
    record_download(spec, fs::file_size(download), sha256, held);
    return {};
  }
  const auto record = nlohmann::json::parse(*text);
  if (record.at("url").get<std::string>() != spec.url) {
    return "is of another URL (" + record.at("url").get<std::string>() + ")";
  }
  if (const auto size = fs::file_size(download); size != record.at("size").get<std::uint64_t>()) {
    return "has " + std::to_string(size) + " bytes, not the " +
           std::to_string(record.at("size").get<std::uint64_t>()) + " recorded";
  }
  const std::string sha256 = file_sha256(download);
  if (sha256 != record.at("sha256").get<std::string>()) {
    return "does not have the SHA-256 recorded when it was downloaded";
  }
  check_pinned_digest(spec, sha256, "");
  return {};
}

// True when an earlier run's complete download of this URL is here and
// usable (kept_download_mismatch). Anything else there is removed, with one
// warning when it was a download.
bool kept_download_matches(const PackageSpec& spec, const HeldLock& held) {
  const fs::path download = package_download(spec);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(download, ec))) {
    fs::remove(package_download_record(spec), ec);
    return false;
  }
  std::string mismatch;
  try {
    mismatch = kept_download_mismatch(spec, held);
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

// The archive from the mirror when it has it (a copy of the package's URL:
// download_file checks its length against that URL's), else from the
// package's URL; `source` is set to the URL that served it.
DownloadResult download_package(const PackageSpec& spec, const fs::path& download,
                                const DownloadOptions& options, std::string& source) {
  if (const auto mirrored = mirror_url(options.package_mirror, spec.url)) {
    DownloadOptions through_mirror = options;
    through_mirror.attempts = 1;  // a mirror is a shortcut: no retry lines, the origin next
    try {
      DownloadResult result = download_file(*mirrored, download, through_mirror, spec.url);
      spdlog::info("fetched {} from the package mirror ({})", shown_url(spec.url),
                   shown_url(*mirrored));
      source = *mirrored;
      return result;
    } catch (const DownloadError& error) {
      spdlog::warn("the package mirror cannot serve {} ({}); fetching {} instead",
                   shown_url(*mirrored), shown_text(error.what()), shown_url(spec.url));
    }
  }
  source = spec.url;
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
  const std::string_view authority_and_path = rest.substr(0, rest.find_first_of("?#"));
  const auto slash = authority_and_path.find('/');
  if (slash == std::string_view::npos) {
    return std::nullopt;  // a host alone
  }
  const std::string_view path = authority_and_path.substr(slash);
  std::string_view last;
  for (std::string_view left = path.substr(1);;) {
    const auto next = left.find('/');
    last = left.substr(0, next);
    if (last == "." || last == "..") {
      return std::nullopt;  // not a path a mirror may be asked for
    }
    if (next == std::string_view::npos) {
      break;
    }
    left.remove_prefix(next + 1);
  }
  if (last.empty()) {
    return std::nullopt;  // no file
  }
  return base + std::string(path);
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
  if (kept_download_matches(spec, held)) {
    outcome.kept_download_used = true;
  } else {
    spdlog::info("fetching {} into {}", spec.url, outcome.directory.string());
    std::string source;
    try {
      outcome.download = download_package(spec, download, options, source);
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
    record_download(spec, outcome.download, source, held);
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
  } catch (const RefusedArchive& error) {
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
