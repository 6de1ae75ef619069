// One URL to one file, on libcurl, in a way that survives a slow, flaky
// server and a killed run. The bytes go to `<target>.part`, the progress to
// `<target>.part.state` (JSON: the package, the URL that wrote it, validator,
// length, byte ranges done); the part is renamed to `target` only when every
// byte of the length the server gave has arrived, its SHA-256 computed as
// the bytes arrived (file_digest.hpp). A rerun of the same package resumes
// from the state: from the same URL with Range and If-Range on the server's
// ETag or Last-Modified; from another source of the package (a mirror, or
// the package's own URL after one) once its first answer gives the same
// length. Nothing on disk changes before a source answers with the file, so
// a source that cannot serve leaves the part as it was. With a length and
// ranges the file is fetched as several range requests at once (split again
// when one finishes early); a server that ignores Range (a 200 answer) is
// read from 0 in one stream. Resets, 5xx/429/408, truncated bodies and stalls
// (below a low-speed limit for some seconds) are retried with exponential
// backoff, each segment from where it stopped. The proxy and the CA are the
// options' NetworkSettings (util/network_settings.hpp), given to libcurl
// explicitly (its own reading of the environment is off); a CONNECT tunnel's
// answer is never taken for the server's. A proxy's 502, 503 or 504 to
// CONNECT (and a reset during it) is retried like the server's 503; its
// other refusals (407, 403, ...) and an untrusted certificate are not: they
// need the user's fix. Throws
// DownloadError when the URL cannot be had (its `offline` says no connection
// was ever made), Error for a local failure (disk), the stop Error on a stop
// signal. Nothing thrown in a libcurl callback unwinds through libcurl: it is
// kept and rethrown once libcurl has returned.
#pragma once

#include "base/util/error.hpp"
#include "base/util/network_settings.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

struct DownloadOptions {
  int connections = 8;     // parallel range requests
  int attempts = 6;        // consecutive failures of one segment before giving up
  int stall_seconds = 30;  // below stall_bytes_per_second this long: a stall
  long stall_bytes_per_second = 1024;
  int connect_timeout_seconds = 30;
  std::chrono::milliseconds backoff{1000};  // first retry delay, doubled each time, at most 30 s
  std::uint64_t min_split_bytes = 2 << 20;  // smallest remaining range split for an idle connection
  NetworkSettings network;                  // the proxy of the URL, the CA
  std::string label;                        // the name progress lines show
  // Progress on stderr: a live line on a terminal, else a line per 10% or 30 s.
  bool progress = true;
  // ASCEND_SETUP_PACKAGE_MIRROR: a base URL fetch_package tries first for
  // every package (package_fetch.hpp); empty: none. download_file ignores it.
  std::string package_mirror;
};

struct DownloadResult {
  std::uint64_t size = 0;          // bytes of the file
  std::uint64_t fetched = 0;       // body bytes received by this run
  std::uint64_t resumed_from = 0;  // bytes already in the part when this run began
  int retries = 0;                 // failed requests retried
  bool ranged = false;             // the server honoured Range
  std::string sha256;              // of the file, lowercase hex
};

class DownloadError : public Error {
 public:
  // `kind`: network (worth another try later) unless the user must fix
  // something first (a proxy's refusal, an untrusted certificate: bad_input).
  DownloadError(const std::string& reason, bool offline, ErrorKind kind = ErrorKind::network)
      : Error(reason, kind), offline_(offline) {}
  bool offline() const noexcept { return offline_; }

 private:
  bool offline_;
};

// The options from the registry's download variables (connections, attempts,
// stall seconds, backoff, the package mirror: an http:// or https:// URL, else
// a usage error) and network_settings_from_environment() (proxies,
// CA: layer/environment.hpp).
DownloadOptions download_options_from_environment();

// Downloads `url` to `target` (see the top). An existing `target` is replaced.
// `package`: what the bytes are when `url` is one source of several (a
// mirror's copy of the package's own URL); empty: `url` itself. A copy must
// have the length the package's URL gives when that answers (asked beside
// the download), and never discards a part it did not write in this call
// when its length differs: DownloadError, the part left to the package's URL.
DownloadResult download_file(const std::string& url, const std::filesystem::path& target,
                             const DownloadOptions& options, const std::string& package = {});

// The parsers of a server's answer, on text (never throwing).

// One response's headers as the downloader reads them.
struct ResponseHeaders {
  long status = 0;  // 0: no status line yet, or its code is not 100 to 999
  std::string etag;
  std::string last_modified;
  std::string content_range;
  std::optional<std::uint64_t> content_length;  // absent unless a whole number
};

// One header line as libcurl hands it over (CRLF included) into `headers`:
// a status line ("HTTP/...") begins a new response (everything else reset),
// ETag, Last-Modified and Content-Range are kept without their blanks,
// Content-Length only when it is a whole number, other lines are ignored.
// True for the blank line that ends the headers.
bool read_header_line(std::string_view line, ResponseHeaders& headers);

// A Content-Range value, "bytes FIRST-LAST/TOTAL" (TOTAL "*": unknown).
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;              // inclusive
  std::optional<std::uint64_t> total;  // nullopt for "*"
};

// nullopt for any other text (blanks, signs, a number too large), LAST
// below FIRST, or a TOTAL not above LAST.
std::optional<ContentRange> parse_content_range(std::string_view text);

// The part and state files of `target`.
std::filesystem::path part_path(const std::filesystem::path& target);
std::filesystem::path state_path(const std::filesystem::path& target);

}  // namespace ascend_setup
