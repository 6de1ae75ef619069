#include "base/download/package_fetch.hpp"

#include "base/download/archive_extract.hpp"
#include "base/util/error.hpp"
#include "base/util/text_file.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <system_error>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

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

// Replaces `directory` by `fresh` (both on one file system): the old one is
// moved aside first, so that the name holds either the old or the new whole.
void move_into_place(const fs::path& fresh, const fs::path& directory) {
  fs::create_directories(directory.parent_path());
  const fs::path old = directory.parent_path() /
                       ("." + directory.filename().string() + ".old-" + std::to_string(::getpid()));
  std::error_code ignored;
  if (fs::exists(fs::symlink_status(directory))) {
    fs::rename(directory, old);
  }
  fs::rename(fresh, directory);
  fs::remove_all(old, ignored);
}

}  // namespace

fs::path package_directory(const PackageSpec& spec) {
  return spec.name.empty() ? spec.root_dir : spec.root_dir / spec.name;
}

fs::path package_download(const PackageSpec& spec) {
  return beside(spec) / ("." + stem(spec) + ".download");
}

fs::path package_staging(const PackageSpec& spec) {
  return beside(spec) / ("." + stem(spec) + ".staging");
}

bool package_cached(const PackageSpec& spec) {
  const auto text = read_text_file(package_directory(spec) / "version.txt");
  return text && *text == spec.url;
}

std::string manual_command(const PackageSpec& spec) {
  const fs::path file = beside(spec) / (stem(spec) + ".tar.gz");
  return "curl -fL -C - -o " + shell_quoted(file.string()) + " " + shell_quoted(spec.url) +
         " && tar -xf " + shell_quoted(file.string()) + " -C " +
         shell_quoted(spec.root_dir.string()) + " && printf %s " + shell_quoted(spec.url) + " > " +
         shell_quoted((package_directory(spec) / "version.txt").string());
}

PackageOutcome fetch_package(const PackageSpec& spec, const DownloadOptions& options) {
  PackageOutcome outcome;
  outcome.directory = package_directory(spec);
  if (package_cached(spec)) {
    spdlog::debug("{} is cached in {}", spec.url, outcome.directory.string());
    return outcome;
  }
  const fs::path download = package_download(spec);
  const fs::path staging = package_staging(spec);
  fs::create_directories(beside(spec));
  spdlog::info("fetching {} into {}", spec.url, outcome.directory.string());
  try {
    outcome.download = download_file(spec.url, download, options);
  } catch (const DownloadError& error) {
    throw Error(std::string(error.offline() ? "offline or unreachable: " : "") +
                    "cannot download " + spec.url + " to " + outcome.directory.string() + " (" +
                    error.what() + "); by hand: " + manual_command(spec),
                ErrorKind::network);
  }
  outcome.fetched = true;
  std::error_code ignored;
  fs::remove_all(staging, ignored);  // a killed run's
  fs::create_directories(staging);
  try {
    extract_archive(download, staging);
    const fs::path unpacked = spec.name.empty() ? staging : staging / spec.name;
    if (!fs::is_directory(fs::symlink_status(unpacked))) {
      std::string held;
      for (const auto& item : fs::directory_iterator(staging)) {
        held += (held.empty() ? "" : ", ") + item.path().filename().string();
      }
      throw Error("the archive of " + spec.url + " holds no directory " + spec.name +
                  " (it holds " + (held.empty() ? std::string("nothing") : held) + ")");
    }
    const fs::path version = unpacked / "version.txt";
    write_text_file(version.string() + ".tmp", spec.url);
    fs::rename(version.string() + ".tmp", version);
    move_into_place(unpacked, outcome.directory);
  } catch (...) {
    fs::remove_all(staging, ignored);
    fs::remove(download, ignored);  // a bad archive is not kept for the next run
    throw;
  }
  fs::remove_all(staging, ignored);
  fs::remove(download, ignored);
  return outcome;
}

}  // namespace ascend_setup
