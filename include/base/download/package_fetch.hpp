// A prebuilt package (LLVM, ...) into upstream's cache the way upstream's
// get_thirdparty_packages leaves it, without its failure modes, fetched once
// per machine however many builds share the cache:
// - The package's lock (`.<name>.lock` beside the package directory,
//   base/tree/file_lock.hpp) is held while it is fetched, unpacked and used:
//   a second build waits (one line naming the holder's pid and host and the
//   URL), then finds it cached. Under the lock, what killed runs left
//   (staged copies) is removed first.
// - The archive is downloaded (http_download.hpp; a killed run's `.part` is
//   resumed) to `.<name>.download` beside the package directory; once it is
//   complete, its URL, length and SHA-256 (computed as it arrived) are
//   recorded beside it (`.<name>.download.json`, written beside and renamed).
//   A pinned SHA-256 (PackageSpec::sha256) is checked first, whichever server
//   sent it: a mismatch removes the download and is Error(bad_input) naming
//   both digests.
// - It is unpacked into a staged copy (util/staged_replacement.hpp),
//   upstream's `version.txt` (the URL, what upstream compares) written into
//   it last, and the whole put in place in one step: the package directory
//   is absent or whole, never partial, whatever stops the run.
// - The download is kept until the package is in place: a stop or a failure
//   while unpacking (a full disk, a refused member) leaves it, and the next
//   run unpacks it without fetching once its length and digest match the
//   record (a mismatch: one warning, then it is fetched again); one without
//   a record (a stop between its rename and its record) is whole, so it is
//   hashed and recorded then, not fetched again. The failure's message says
//   where it is kept. Only an archive libarchive cannot read is removed, so
//   that the next run fetches it again.
// - With a package mirror (DownloadOptions::package_mirror), the archive is
//   fetched first from the mirror, under the URL's path (mirror_url()), in
//   one attempt, as a copy of the package's own URL (its length checked
//   against that URL's when it answers); a mirror that fails, lacks the file
//   or has another is one warning, then the package's own URL. The part is
//   one per package: a source that cannot serve leaves it as it was, and a
//   rerun resumes it from whichever source serves the package. The package
//   is the same either way: its record and version.txt name its own URL.
// Nothing is done when the package directory's `version.txt` holds the URL.
#pragma once

#include "base/download/http_download.hpp"
#include "base/tree/file_lock.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace ascend_setup {

struct PackageSpec {
  std::string url;
  // Upstream's package_root_dir (<cache>/<package>): where the archive is unpacked.
  std::filesystem::path root_dir;
  // Upstream's name: the directory the archive holds; empty when the archive's
  // content is the package itself (the package directory is then root_dir).
  std::string name;
  // The archive's SHA-256 (64 lowercase hex digits) when pinned, and what
  // pins it (for the message); empty: no pin.
  std::string sha256 = {};
  std::string sha256_from = {};
};

struct PackageOutcome {
  std::filesystem::path directory;  // the package directory
  bool fetched = false;             // put in place by this call; false: already cached
  bool kept_download_used = false;  // unpacked from an earlier run's download, nothing fetched
  DownloadResult download;
};

// The package directory of `spec`, and the hidden files beside it.
std::filesystem::path package_directory(const PackageSpec& spec);
std::filesystem::path package_download(const PackageSpec& spec);         // the archive (+ .part)
std::filesystem::path package_download_record(const PackageSpec& spec);  // its URL, length, digest
std::filesystem::path package_lock(const PackageSpec& spec);

// The `what` of the package's staged copy (StagedReplacement).
inline constexpr const char* kPackageStaging = "unpack";

// True when the package directory's version.txt holds exactly the URL.
bool package_cached(const PackageSpec& spec);

// Takes the package's lock, waiting for another run that holds it.
FileLock lock_package(const PackageSpec& spec);

// Fetches and installs the package unless cached, under its lock (`held`,
// from lock_package). A DownloadError becomes one Error(network) line with
// the URL, the target and the command that does it by hand (manual_command).
PackageOutcome fetch_package(const PackageSpec& spec, const DownloadOptions& options,
                             const FileLock& held);

// The same, taking the lock itself when the package is not cached.
PackageOutcome fetch_package(const PackageSpec& spec, const DownloadOptions& options);

// `url`'s path (query and fragment dropped) under `mirror` (trailing slashes
// dropped): two packages of one file name in two directories stay apart.
// nullopt when `mirror` is empty, the URL names no file (no path, or one
// ending in "/"), or a segment of its path is "." or "..".
std::optional<std::string> mirror_url(const std::string& mirror, const std::string& url);

// curl -fL -C - -o <file> '<url>' && tar -xf <file> -C <root> && printf %s '<url>' >
// <dir>/version.txt
std::string manual_command(const PackageSpec& spec);

}  // namespace ascend_setup
