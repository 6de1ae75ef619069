// A prebuilt package (LLVM, ...) into upstream's cache the way upstream's
// get_thirdparty_packages leaves it, without its failure modes: the archive is
// downloaded (http_download.hpp) beside the package directory, unpacked into
// a staging directory beside it, upstream's `version.txt` (the URL, what
// upstream compares) written into the staging copy last, and the whole
// renamed into place. The package directory is therefore absent or whole,
// never partial, whatever stops the run. Nothing is done when its
// `version.txt` already holds the URL.
#pragma once

#include "base/download/http_download.hpp"

#include <filesystem>
#include <string>

namespace ascend_setup {

struct PackageSpec {
  std::string url;
  // Upstream's package_root_dir (<cache>/<package>): where the archive is unpacked.
  std::filesystem::path root_dir;
  // Upstream's name: the directory the archive holds; empty when the archive's
  // content is the package itself (the package directory is then root_dir).
  std::string name;
};

struct PackageOutcome {
  std::filesystem::path directory;  // the package directory
  bool fetched = false;             // false: already cached with this URL
  DownloadResult download;
};

// The package directory of `spec`, and the hidden files beside it.
std::filesystem::path package_directory(const PackageSpec& spec);
std::filesystem::path package_download(const PackageSpec& spec);  // the archive (+ .part)
std::filesystem::path package_staging(const PackageSpec& spec);

// True when the package directory's version.txt holds exactly the URL.
bool package_cached(const PackageSpec& spec);

// Fetches and installs the package unless cached. A DownloadError becomes one
// Error(bad_input) line with the URL, the target and the command that does it
// by hand (manual_command).
PackageOutcome fetch_package(const PackageSpec& spec, const DownloadOptions& options);

// curl -fL -C - -o <file> '<url>' && tar -xf <file> -C <root> && printf %s '<url>' >
// <dir>/version.txt
std::string manual_command(const PackageSpec& spec);

}  // namespace ascend_setup
