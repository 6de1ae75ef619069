#include "base/download/http_download.hpp"

#include "base/download/download_progress.hpp"
#include "base/download/file_digest.hpp"
#include "base/download/libraries.hpp"
#include "base/layer/environment.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/numbers.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/strings.hpp"
#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"
#include "base/util/whole_file.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();
constexpr int kMaxRestarts = 3;
// Bytes of later ranges read back for the digest per pass of the loop (a
// pass stays short: the stop and the progress are checked between).
constexpr std::uint64_t kDigestBytesPerPass = std::uint64_t{16} << 20;

struct Segment {
  std::uint64_t start = 0;
  std::uint64_t end = kUnknown;  // exclusive; kUnknown while the length is unknown
  std::uint64_t done = 0;
  int failures = 0;
  Clock::time_point not_before{};
  bool active = false;

  std::uint64_t position() const { return start + done; }
  bool complete() const { return end != kUnknown && position() >= end; }
  std::uint64_t remaining() const { return end == kUnknown ? kUnknown : end - position(); }
};

struct Transfer {
  class Downloader* owner = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  int generation = 0;
  size_t segment = 0;
  std::uint64_t request_offset = 0;
  bool asked_range = false;
  bool probe = false;
  bool length_check = false;  // asks the package's own URL for its length only
  ResponseHeaders response;   // of the current (last) response
  bool body_started = false;
  // Why the transfer was ended by us: cut (its range is done), a retryable
  // reason, a local write error.
  bool cut = false;
  std::string retry_reason;
  int write_errno = 0;
  std::uint64_t received = 0;
  char error_buffer[CURL_ERROR_SIZE] = {};

  ~Transfer() {
    if (headers != nullptr) {
      libcurl().curl_slist_free_all(headers);
    }
    if (easy != nullptr) {
      libcurl().curl_easy_cleanup(easy);
    }
  }
};

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { libcurl().curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Whether a failed request is tried again: a reset, a stall, a 5xx, 429 or
// 408 are; a DNS failure (thrown here: nobody answered) and other answers
// are not. `reason` becomes the words of the failure.
bool worth_retrying(CURLcode code, long status, std::string& reason, bool ever_answered) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      throw DownloadError(reason, !ever_answered);
    case CURLE_HTTP_RETURNED_ERROR:
      reason = "HTTP " + std::to_string(status);
      return status >= 500 || status == 429 || status == 408;
    case CURLE_OPERATION_TIMEDOUT:
      reason = "stalled (" + reason + ")";
      return true;
    case CURLE_COULDNT_CONNECT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WRITE_ERROR:
      return true;
    default:
      return false;
  }
}

class Downloader {
 public:
  Downloader(const std::string& url, const fs::path& target, const DownloadOptions& options,
             const std::string& package)
      : url_(url),
        package_(package.empty() ? url : package),
        mirror_(package_ != url_),
        target_(target),
        part_(part_path(target)),
        state_file_(state_path(target)),
        options_(options),
        progress_(options.label.empty() ? shown_url(url) : shown_text(options.label),
                  options.progress),
        proxy_(options.network.proxy_for(url)),
        ca_(options.network.download_ca()) {
    options_.connections = std::max(1, options_.connections);
    options_.attempts = std::max(1, options_.attempts);
  }

  ~Downloader() {
    transfers_.clear();
    if (multi_ != nullptr) {
      libcurl().curl_multi_cleanup(multi_);
    }
  }

  DownloadResult run() {
    global_init();
    multi_ = libcurl().curl_multi_init();
    libcurl().curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, long(options_.connections));
    fs::create_directories(target_.parent_path());
    load_state();
    try {
      loop();
      digest_.read_back(fd_.get(), part_, length_);
    } catch (...) {
      save_state();  // a stop or failure keeps what arrived for the next run
      throw;
    }
    finish();
    return result_;
  }

  // libcurl's callbacks: nothing thrown may unwind through libcurl's C
  // frames, so an exception is kept, the transfer ended (0 is libcurl's
  // write error) and the exception rethrown once libcurl has returned.
  template <class Callback>
  size_t guarded(Callback&& callback) noexcept {
    try {
      return callback();
    } catch (...) {
      if (!failure_) {
        failure_ = std::current_exception();
      }
      return 0;
    }
  }

  void rethrow_callback_failure() {
    if (failure_) {
      std::rethrow_exception(std::exchange(failure_, nullptr));
    }
  }

  size_t on_header(Transfer& t, const char* data, size_t size) {
    if (t.length_check) {
      return on_length_header(t, data, size);
    }
    if (t.generation != generation_) {
      return 0;
    }
    if (read_header_line(std::string_view(data, size), t.response)) {
      // The end of a response's headers. Only the server's answer counts:
      // libcurl records its code before handing its header lines over, and
      // never a CONNECT tunnel's (those are suppressed too).
      long code = 0;
      libcurl().curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &code);
      if (code != t.response.status) {
        t.response.status = 0;
        return size;
      }
      if (t.response.status == 200 || t.response.status == 206) {
        ever_answered_ = true;
        if (!on_response(t)) {
          return 0;
        }
      } else if (t.response.status >= 400) {
        ever_answered_ = true;  // FAILONERROR ends the transfer; the code says why
      }
    }
    return size;
  }

  size_t on_body(Transfer& t, const char* data, size_t size) {
    if (t.length_check || t.generation != generation_ || t.response.status == 0 || !fd_) {
      return 0;
    }
    Segment& segment = segments_[t.segment];
    const std::uint64_t position = segment.position();
    const std::uint64_t take = std::min<std::uint64_t>(size, segment.remaining());
    std::uint64_t written = 0;
    while (written < take) {
      const ssize_t n = ::pwrite(fd_.get(), data + written, take - written,
                                 static_cast<off_t>(position + written));
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        t.write_errno = errno;
        return 0;
      }
      written += static_cast<std::uint64_t>(n);
    }
    digest_.written(position, std::string_view(data, take));
    segment.done += take;
    t.received += take;
    result_.fetched += take;
    if (take < size) {
      t.cut = true;  // its range is done (it was split): end this transfer
      return 0;
    }
    return size;
  }

 private:
  // The response's headers are complete: a 200 or a 206 to this request.
  bool on_response(Transfer& t) {
    const std::string validator = !t.response.etag.empty() && t.response.etag.rfind("W/", 0) != 0
                                      ? t.response.etag
                                      : t.response.last_modified;
    if (t.response.status == 206) {
      const auto range = parse_content_range(t.response.content_range);
      if (!range || range->first != t.request_offset) {
        t.retry_reason = "the server answered another range (" + t.response.content_range + ")";
        return false;
      }
      const std::optional<std::uint64_t> total = range->total;
      if (t.probe) {
        if (!total) {
          t.retry_reason =
              "the server gave no length (Content-Range " + t.response.content_range + ")";
          return false;
        }
        claim_part();
        start_ranged(t, *total, validator);
        return true;
      }
      if (total && length_ != kUnknown && *total != length_) {
        refuse_another_file(*total);
        t.retry_reason = "the file changed on the server (length " + std::to_string(*total) +
                         " instead of " + std::to_string(length_) + ")";
        restart_requested_ = true;
        return false;
      }
      claim_part();
      if (validator_.empty()) {
        validator_ = validator;  // a part another source wrote: this one's validator from now on
      }
      if (!ranged_ && length_ != kUnknown) {
        ranged_ = true;  // a resumed single stream: more connections may now help
      }
      return true;
    }
    // 200: the whole file from byte 0.
    refuse_another_file(t.response.content_length.value_or(kUnknown));
    if (!t.probe && t.asked_range) {
      spdlog::info(
          "{}: the server ignored the range request (or the file changed): reading it "
          "from byte 0 in one stream",
          url_);
    }
    const int kept = generation_ + 1;
    generation_ = kept;  // every other transfer is stale now
    t.generation = kept;
    resumable_ = false;
    claim_part();
    if (::ftruncate(fd_.get(), 0) != 0) {
      t.write_errno = errno;
      return false;
    }
    digest_.restart();
    t.received = 0;
    length_ = t.response.content_length ? *t.response.content_length : kUnknown;
    validator_ = validator;
    ranged_ = false;
    segments_.assign(1, Segment{0, length_, 0});
    segments_[0].active = true;
    t.segment = 0;
    t.request_offset = 0;
    t.probe = false;
    single_stream_ = true;
    return true;
  }

  // The probe asked for the first min_split_bytes and learnt the length: it
  // keeps its range, the rest is split among the other connections.
  void start_ranged(Transfer& t, std::uint64_t total, const std::string& validator) {
    digest_.restart();
    length_ = total;
    validator_ = validator;
    ranged_ = true;
    if (::ftruncate(fd_.get(), static_cast<off_t>(total)) != 0) {
      throw system_error("size the partial download", part_, errno, total);
    }
    const std::uint64_t first = std::min(total, probe_bytes());
    segments_.assign(1, Segment{0, first, 0});
    const std::uint64_t rest = total - first;
    const std::uint64_t n =
        rest == 0 ? 0
                  : std::max<std::uint64_t>(
                        1, std::min<std::uint64_t>(
                               options_.connections > 1 ? options_.connections - 1 : 1,
                               rest / std::max<std::uint64_t>(1, options_.min_split_bytes)));
    for (std::uint64_t i = 0; i < n; ++i) {
      segments_.push_back(Segment{first + rest * i / n, first + rest * (i + 1) / n, 0});
    }
    segments_[0].active = true;
    t.segment = 0;
    t.probe = false;
  }

  std::uint64_t probe_bytes() const { return std::max<std::uint64_t>(1, options_.min_split_bytes); }

  // A state of the same package whose part has the recorded length: the
  // part is resumed, from this source or from another whose first answer
  // gives the same length (it has no validator of this source: its first
  // requests carry no If-Range). Nothing on disk changes here.
  void load_state() {
    if (const auto text = read_whole_file(state_file_)) {
      try {
        const auto state = nlohmann::json::parse(*text);
        const std::string source = state.at("url").get<std::string>();
        const std::string package =
            state.contains("package") ? state.at("package").get<std::string>() : source;
        struct stat info {};
        if (package == package_ && ::stat(part_.c_str(), &info) == 0 &&
            static_cast<std::uint64_t>(info.st_size) == state.at("length").get<std::uint64_t>() &&
            !state.at("validator").get<std::string>().empty()) {
          length_ = state.at("length").get<std::uint64_t>();
          validator_ = source == url_ ? state.at("validator").get<std::string>() : std::string();
          ranged_ = state.at("ranged").get<bool>();
          for (const auto& item : state.at("segments")) {
            Segment segment{item.at(0).get<std::uint64_t>(), item.at(1).get<std::uint64_t>(),
                            item.at(2).get<std::uint64_t>()};
            if (segment.end > length_ || segment.position() > segment.end) {
              throw std::runtime_error("segment out of range");
            }
            segments_.push_back(segment);
          }
          resumable_ = !segments_.empty();
          part_source_ = source;
        }
      } catch (const std::exception& error) {
        spdlog::debug("{}: state not used ({})", state_file_.string(), error.what());
        segments_.clear();
        resumable_ = false;
      }
    }
    if (!resumable_) {
      reset_fresh();
      return;
    }
    for (const Segment& segment : segments_) {
      result_.resumed_from += segment.done;
    }
    if (!ranged_ && segments_.size() == 1) {
      single_stream_ = true;
    }
    if (part_source_ != url_ && complete()) {
      // Whole, but from another source: its last byte asked again, so that
      // this one's answer confirms the length before the part is taken.
      for (Segment& segment : segments_) {
        if (segment.end == length_ && segment.done > 0) {
          --segment.done;
          --result_.resumed_from;
        }
      }
    }
  }

  // The part becomes this call's once a source has answered with the file:
  // a resumable part is opened as it is, any other emptied and its state
  // removed. Until then nothing on disk changes, so a source that cannot
  // serve leaves the part another one wrote as it found it.
  void claim_part() {
    if (fd_) {
      return;
    }
    if (!resumable_) {
      std::error_code ignored;
      fs::remove(state_file_, ignored);
    }
    fd_.reset(
        ::open(part_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | (resumable_ ? 0 : O_TRUNC), 0644));
    if (!fd_) {
      throw system_error("open", part_, errno);
    }
    if (resumable_) {
      spdlog::info("resuming {}: {} of {} already here{}", part_.filename().string(),
                   human_bytes(double(result_.resumed_from)), human_bytes(double(length_)),
                   part_source_ == url_ ? "" : " (fetched from " + shown_url(part_source_) + ")");
    }
    length_check_wanted_ = mirror_;
  }

  // A mirror whose answer has another length than the part an earlier run
  // or another source wrote of the package: not the same file. The part is
  // left as it is for the package's own URL.
  void refuse_another_file(std::uint64_t length) const {
    if (mirror_ && resumable_ && !fd_ && length != length_) {
      throw DownloadError(
          "it has " +
              (length == kUnknown ? std::string("an unknown number of") : std::to_string(length)) +
              " bytes where the part of " + package_ + " holds " + std::to_string(length_) +
              ": another file",
          false);
    }
  }

  void reset_fresh() {
    length_ = kUnknown;
    validator_.clear();
    ranged_ = false;
    single_stream_ = false;
    resumable_ = false;
    segments_.assign(1, Segment{0, kUnknown, 0});
    probe_pending_ = true;
    digest_.restart();
    if (fd_) {
      std::error_code ignored;
      fs::remove(state_file_, ignored);
      if (::ftruncate(fd_.get(), 0) != 0) {
        throw system_error("truncate", part_, errno);
      }
    }
  }

  void save_state() {
    if (another_file_) {
      std::error_code ignored;
      fs::remove(state_file_, ignored);
      return;
    }
    if (!fd_ || length_ == kUnknown || validator_.empty()) {
      return;
    }
    nlohmann::json segments = nlohmann::json::array();
    for (const Segment& segment : segments_) {
      segments.push_back({segment.start, segment.end, segment.done});
    }
    const nlohmann::json state = {
        {"url", url_},       {"package", package_}, {"validator", validator_},
        {"length", length_}, {"ranged", ranged_},   {"segments", segments}};
    // The recorded bytes are in the part before the state says so.
    ::fdatasync(fd_.get());
    const fs::path temporary = state_file_.string() + ".tmp";
    try {
      write_whole_file(temporary, state.dump());
      fs::rename(temporary, state_file_);
    } catch (const std::exception& error) {
      spdlog::debug("cannot save the download state: {}", error.what());
    }
  }

  int active_transfers() const {
    int count = 0;
    for (const auto& t : transfers_) {
      if (t->generation == generation_) {
        ++count;
      }
    }
    return count;
  }

  // A transfer of `url` (through `proxy`) with every option but its range.
  std::unique_ptr<Transfer> new_transfer(const std::string& url,
                                         const std::optional<ProxyChoice>& proxy) {
    auto t = std::make_unique<Transfer>();
    t->owner = this;
    t->easy = libcurl().curl_easy_init();
    if (t->easy == nullptr) {
      throw Error("cannot start a download: libcurl is out of memory", ErrorKind::local_io);
    }
    CURL* easy = t->easy;
    libcurl().curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    libcurl().curl_easy_setopt(easy, CURLOPT_PRIVATE, t.get());
    libcurl().curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    libcurl().curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    libcurl().curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 10L);
    libcurl().curl_easy_setopt(easy, CURLOPT_FAILONERROR, 1L);
    libcurl().curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    libcurl().curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT,
                               long(options_.connect_timeout_seconds));
    libcurl().curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, options_.stall_bytes_per_second);
    libcurl().curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, long(options_.stall_seconds));
    libcurl().curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error_buffer);
    libcurl().curl_easy_setopt(easy, CURLOPT_USERAGENT, "ascend-setup/" ASCEND_SETUP_VERSION);
    // The proxy chosen here (libcurl's own reading of the environment off:
    // an empty string is "none"); no_proxy still applies to a redirect's host.
    libcurl().curl_easy_setopt(easy, CURLOPT_PROXY, proxy ? proxy->url.c_str() : "");
    libcurl().curl_easy_setopt(
        easy, CURLOPT_NOPROXY,
        options_.network.no_proxy ? options_.network.no_proxy->value.c_str() : "");
    libcurl().curl_easy_setopt(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    for (const CURLoption option : {CURLOPT_CAINFO, CURLOPT_PROXY_CAINFO}) {
      if (ca_.file) {
        libcurl().curl_easy_setopt(easy, option, ca_.file->c_str());
      }
    }
    for (const CURLoption option : {CURLOPT_CAPATH, CURLOPT_PROXY_CAPATH}) {
      if (ca_.directory) {
        libcurl().curl_easy_setopt(easy, option, ca_.directory->c_str());
      }
    }
    libcurl().curl_easy_setopt(
        easy, CURLOPT_HEADERFUNCTION,
        +[](char* data, size_t size, size_t count, void* user) -> size_t {
          auto* transfer = static_cast<Transfer*>(user);
          return transfer->owner->guarded(
              [&] { return transfer->owner->on_header(*transfer, data, size * count); });
        });
    libcurl().curl_easy_setopt(easy, CURLOPT_HEADERDATA, t.get());
    libcurl().curl_easy_setopt(
        easy, CURLOPT_WRITEFUNCTION,
        +[](char* data, size_t size, size_t count, void* user) -> size_t {
          auto* transfer = static_cast<Transfer*>(user);
          return transfer->owner->guarded(
              [&] { return transfer->owner->on_body(*transfer, data, size * count); });
        });
    libcurl().curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
    return t;
  }

  void start(size_t index, bool probe) {
    auto t = new_transfer(url_, proxy_);
    t->generation = generation_;
    t->segment = index;
    t->probe = probe;
    Segment& segment = segments_[index];
    if (single_stream_ && segment.done > 0 && validator_.empty()) {
      segment.done = 0;  // no validator: a resumed stream could mix two files
    }
    t->request_offset = segment.position();
    std::string range;
    if (probe) {
      // The first range: its answer gives the length (Content-Range) without
      // sending more than this connection's share.
      range = "Range: bytes=0-" + std::to_string(probe_bytes() - 1);
    } else if (t->request_offset > 0 || (segment.end != kUnknown && segment.end != length_)) {
      range = "Range: bytes=" + std::to_string(t->request_offset) + "-" +
              (segment.end == kUnknown ? std::string() : std::to_string(segment.end - 1));
    }
    if (!range.empty()) {
      t->asked_range = true;
      t->headers = libcurl().curl_slist_append(t->headers, range.c_str());
      if (!probe && !validator_.empty()) {
        t->headers = libcurl().curl_slist_append(t->headers, ("If-Range: " + validator_).c_str());
      }
      libcurl().curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, t->headers);
    }
    segment.active = true;
    libcurl().curl_multi_add_handle(multi_, t->easy);
    transfers_.push_back(std::move(t));
  }

  // A mirror's copy is the package only with the length of the package's
  // own URL: that URL is asked for it (a range of one byte) beside the
  // download, once the mirror has answered. No answer there, no check.
  void start_length_check() {
    length_check_wanted_ = false;
    auto t = new_transfer(package_, options_.network.proxy_for(package_));
    t->length_check = true;
    t->generation = -1;  // never stale, never one of the download's transfers
    t->headers = libcurl().curl_slist_append(t->headers, "Range: bytes=0-0");
    libcurl().curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, t->headers);
    libcurl().curl_multi_add_handle(multi_, t->easy);
    transfers_.push_back(std::move(t));
    length_check_running_ = true;
  }

  // The length check's answer: its length, then the transfer ends (0).
  size_t on_length_header(Transfer& t, const char* data, size_t size) {
    if (!read_header_line(std::string_view(data, size), t.response)) {
      return size;
    }
    long code = 0;
    libcurl().curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &code);
    if (code != t.response.status) {
      return size;  // a CONNECT tunnel's answer
    }
    if (t.response.status == 206) {
      const auto range = parse_content_range(t.response.content_range);
      package_length_ = range ? range->total : std::nullopt;
    } else if (t.response.status == 200) {
      package_length_ = t.response.content_length;
    } else {
      return size;  // a redirect is followed; an error ends it (FAILONERROR)
    }
    return 0;
  }

  void length_check_done() {
    length_check_running_ = false;
    if (!package_length_) {
      spdlog::debug("{} gave no length to check the mirror's copy against", shown_url(package_));
    }
  }

  void check_package_length() {
    if (package_length_ && length_ != kUnknown && *package_length_ != length_) {
      another_file_ = true;  // no one resumes it
      throw DownloadError("it has " + std::to_string(length_) + " bytes where " + package_ +
                              " has " + std::to_string(*package_length_) + ": another file",
                          false);
    }
  }

  // Starts what may start now: pending segments, then a split of the largest
  // remaining range for an idle connection.
  void schedule() {
    if (length_check_wanted_) {
      start_length_check();
    }
    if (restart_requested_) {
      restart_requested_ = false;
      if (++restarts_ > kMaxRestarts) {
        throw DownloadError("the file kept changing on the server while it was downloaded", false);
      }
      ++generation_;
      reset_fresh();
    }
    const auto now = Clock::now();
    if (probe_pending_) {
      if (active_transfers() == 0 && now >= segments_[0].not_before) {
        probe_pending_ = false;
        start(0, true);
      }
      return;
    }
    // The ranges not asked for yet are divided among the idle connections
    // first (a resumed part's one remaining range, say): a range split once
    // its request is out costs what the server has sent past the split.
    while (ranged_ && active_transfers() + ready_segments(now) < options_.connections &&
           split_largest([now](const Segment& segment) {
             return ready(segment, now) && segment.end != kUnknown;
           })) {
    }
    for (size_t i = 0; i < segments_.size(); ++i) {
      if (active_transfers() >= options_.connections) {
        return;
      }
      if (ready(segments_[i], now)) {
        start(i, false);
      }
    }
    // A connection still idle takes half of the largest range in flight.
    while (ranged_ && active_transfers() < options_.connections &&
           split_largest([](const Segment& segment) { return segment.active; })) {
      start(segments_.size() - 1, false);
    }
  }

  // Splits the largest range that `eligible` accepts and that holds at least
  // twice min_split_bytes: its second half becomes a new range at the end of
  // segments_. False when there is none.
  template <typename Eligible>
  bool split_largest(Eligible eligible) {
    size_t largest = segments_.size();
    for (size_t i = 0; i < segments_.size(); ++i) {
      const Segment& segment = segments_[i];
      if (eligible(segment) && segment.remaining() >= 2 * options_.min_split_bytes &&
          (largest == segments_.size() || segment.remaining() > segments_[largest].remaining())) {
        largest = i;
      }
    }
    if (largest == segments_.size()) {
      return false;
    }
    Segment& old = segments_[largest];
    const std::uint64_t middle = old.position() + old.remaining() / 2;
    const Segment second{middle, old.end, 0};
    old.end = middle;
    segments_.push_back(second);
    return true;
  }

  // A range that may be asked for now: not in flight, not complete, past its
  // backoff.
  static bool ready(const Segment& segment, Clock::time_point now) {
    return !segment.active && !segment.complete() && now >= segment.not_before;
  }

  int ready_segments(Clock::time_point now) const {
    return static_cast<int>(
        std::count_if(segments_.begin(), segments_.end(),
                      [now](const Segment& segment) { return ready(segment, now); }));
  }

  std::chrono::milliseconds backoff(int failures) const {
    auto delay = options_.backoff;
    for (int i = 1; i < failures && delay < std::chrono::seconds(30); ++i) {
      delay *= 2;
    }
    return std::min<std::chrono::milliseconds>(delay, std::chrono::seconds(30));
  }

  // A finished transfer: done, retried later, or the end of the download.
  void on_done(Transfer& t, CURLcode code) {
    if (t.generation != generation_) {
      return;
    }
    Segment& segment = segments_[t.segment];
    segment.active = false;
    if (t.write_errno != 0) {
      throw system_error("write", part_, t.write_errno, remaining_bytes());
    }
    long status = 0;
    libcurl().curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    std::string reason;
    bool retryable = true;
    if (code == CURLE_OK || t.cut) {
      if (segment.end == kUnknown && code == CURLE_OK) {
        segment.end = segment.position();  // a stream of unknown length ended cleanly
        length_ = segment.end;
      }
      if (segment.complete()) {
        if (t.received > 0) {
          segment.failures = 0;
        }
        return;
      }
      reason = "the server sent fewer bytes than announced";
    } else if (!t.retry_reason.empty()) {
      reason = t.retry_reason;
    } else {
      reason = t.error_buffer[0] != '\0' ? std::string(t.error_buffer)
                                         : libcurl().curl_easy_strerror(code);
      long connect_code = 0;
      libcurl().curl_easy_getinfo(t.easy, CURLINFO_HTTP_CONNECTCODE, &connect_code);
      if (proxy_ && proxy_answer_is_transient(connect_code)) {
        reason = "the proxy answered HTTP " + std::to_string(connect_code) + " to CONNECT";
      } else {
        throw_if_refused(code, status, connect_code, reason);
        retryable = worth_retrying(code, status, reason, ever_answered_);
      }
    }
    if (proxy_) {
      reason += " (through the proxy " + proxy_->shown() + " from " + proxy_->variable + ")";
    }
    if (!retryable) {
      throw DownloadError(reason, !ever_answered_);
    }
    segment.failures = t.received > 0 ? 1 : segment.failures + 1;
    ++result_.retries;
    if (segment.failures >= options_.attempts || result_.retries > 16 * options_.attempts) {
      throw DownloadError(reason + " (gave up after " + std::to_string(segment.failures) +
                              " attempts in a row, " + std::to_string(result_.retries) +
                              " retries in all)",
                          !ever_answered_);
    }
    const auto delay = backoff(segment.failures);
    segment.not_before = Clock::now() + delay;
    if (t.probe || (single_stream_ && segment.done == 0 && length_ == kUnknown)) {
      probe_pending_ = true;
      segments_.assign(1, Segment{0, kUnknown, 0, segment.failures, segment.not_before});
      length_ = kUnknown;
    }
    spdlog::warn("{}: {}; retrying from byte {} in {:.1f} s (attempt {} of {})", url_, reason,
                 segments_[std::min(t.segment, segments_.size() - 1)].position(),
                 double(delay.count()) / 1000.0, segment.failures + 1, options_.attempts);
  }

  // What the user must fix, never retried: the proxy refused (its CONNECT
  // answer but a transient one, or a 407 to a request through it), the
  // certificate is not trusted.
  void throw_if_refused(CURLcode code, long status, long connect_code, const std::string& reason) {
    if (proxy_ && (connect_code >= 300 || (code == CURLE_HTTP_RETURNED_ERROR && status == 407))) {
      // A 407 to a request through the proxy says all; a CONNECT's failure has libcurl's words.
      throw DownloadError(
          proxy_refusal_message(*proxy_, url_, connect_code >= 300 ? connect_code : status,
                                connect_code >= 300 ? reason : std::string()),
          false, ErrorKind::bad_input);
    }
    if (code == CURLE_PEER_FAILED_VERIFICATION) {
      throw DownloadError(untrusted_certificate_message(url_, reason, ca_), false,
                          ErrorKind::bad_input);
    }
    if (code == CURLE_SSL_CACERT_BADFILE) {
      throw DownloadError("the CA certificates " + ca_.file.value_or("") + " (from " +
                              ca_.named_by + ") cannot be used (" + reason +
                              "): name a readable PEM bundle",
                          false, ErrorKind::bad_input);
    }
  }

  bool complete() const {
    if (probe_pending_ || length_ == kUnknown) {
      return false;
    }
    for (const Segment& segment : segments_) {
      if (!segment.complete() || segment.active) {
        return false;
      }
    }
    return true;
  }

  // What is still to arrive; nullopt while the length is unknown.
  std::optional<std::uint64_t> remaining_bytes() const {
    if (length_ == kUnknown) {
      return std::nullopt;
    }
    return length_ - std::min(length_, bytes_done());
  }

  // The end of the prefix every byte of which has arrived.
  std::uint64_t contiguous_done() const {
    std::vector<const Segment*> order;
    for (const Segment& segment : segments_) {
      order.push_back(&segment);
    }
    std::sort(order.begin(), order.end(),
              [](const Segment* a, const Segment* b) { return a->start < b->start; });
    std::uint64_t end = 0;
    for (const Segment* segment : order) {
      if (segment->start != end) {
        break;
      }
      end = segment->position();
      if (!segment->complete()) {
        break;
      }
    }
    return end;
  }

  std::uint64_t bytes_done() const {
    std::uint64_t done = 0;
    for (const Segment& segment : segments_) {
      done += segment.done;
    }
    return done;
  }

  void loop() {
    auto last_save = Clock::now();
    // Bounded: every pass either moves bytes, waits for a backoff (bounded by
    // the attempts) or ends; a pass lasts at most 200 ms.
    while (true) {
      throw_if_stopped();
      if (complete() && !fd_) {
        claim_part();  // whole from this URL (a run stopped before its rename): nothing to ask
      }
      schedule();
      if (complete() && active_transfers() == 0 && !length_check_running_) {
        check_package_length();
        return;
      }
      int running = 0;
      libcurl().curl_multi_perform(multi_, &running);
      rethrow_callback_failure();
      int queued = 0;
      while (CURLMsg* message = libcurl().curl_multi_info_read(multi_, &queued)) {
        if (message->msg != CURLMSG_DONE) {
          continue;
        }
        Transfer* done = nullptr;
        libcurl().curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &done);
        const CURLcode code = message->data.result;
        libcurl().curl_multi_remove_handle(multi_, message->easy_handle);
        auto owned = std::find_if(transfers_.begin(), transfers_.end(),
                                  [done](const auto& item) { return item.get() == done; });
        std::unique_ptr<Transfer> transfer = std::move(*owned);
        transfers_.erase(owned);
        if (transfer->length_check) {
          length_check_done();
        } else {
          on_done(*transfer, code);
        }
      }
      check_package_length();
      if (fd_) {
        digest_.read_back(fd_.get(), part_, contiguous_done(), kDigestBytesPerPass);
      }
      // Stale transfers (a restart from 0): removed without a word.
      for (auto it = transfers_.begin(); it != transfers_.end();) {
        if ((*it)->generation != generation_ && !(*it)->length_check) {
          libcurl().curl_multi_remove_handle(multi_, (*it)->easy);
          it = transfers_.erase(it);
        } else {
          ++it;
        }
      }
      progress_.update(bytes_done(), length_ == kUnknown ? std::nullopt : std::optional(length_),
                       active_transfers());
      if (Clock::now() - last_save >= std::chrono::seconds(1)) {
        save_state();
        last_save = Clock::now();
      }
      libcurl().curl_multi_poll(multi_, nullptr, 0, 200, nullptr);
    }
  }

  void finish() {
    struct stat info {};
    if (::fstat(fd_.get(), &info) != 0) {
      throw system_error("inspect", part_, errno);
    }
    if (static_cast<std::uint64_t>(info.st_size) != length_ || bytes_done() != length_ ||
        digest_.hashed() != length_) {
      throw DownloadError("the download has " + std::to_string(info.st_size) + " bytes, not the " +
                              std::to_string(length_) + " the server announced",
                          false);
    }
    if (::fdatasync(fd_.get()) != 0 || !fd_.close()) {
      throw system_error("flush", part_, errno);
    }
    // The state goes only once the file has its name: a failed rename keeps a
    // part the next run can check and finish instead of fetching it again.
    if (::rename(part_.c_str(), target_.c_str()) != 0) {
      throw system_error("rename " + part_.string() + " to", target_, errno);
    }
    std::error_code ignored;
    fs::remove(state_file_, ignored);
    result_.size = length_;
    result_.ranged = ranged_;
    result_.sha256 = digest_.hex();
    progress_.finish(length_,
                     fmt::format("{} fetched by this run{}{}", human_bytes(double(result_.fetched)),
                                 ranged_ ? "" : ", one stream (no ranges)",
                                 result_.retries > 0 ? fmt::format(", {} retries", result_.retries)
                                                     : std::string()));
  }

  std::string url_;
  std::string package_;  // what the bytes are: url_, or the URL a mirror's copy is of
  bool mirror_;          // url_ is a copy of package_
  fs::path target_;
  fs::path part_;
  fs::path state_file_;
  DownloadOptions options_;
  DownloadProgress progress_;
  std::optional<ProxyChoice> proxy_;
  CaChoice ca_;
  std::exception_ptr failure_;  // thrown in a libcurl callback, rethrown after it
  DownloadResult result_;
  CURLM* multi_ = nullptr;
  UniqueFd fd_;
  std::vector<std::unique_ptr<Transfer>> transfers_;
  std::vector<Segment> segments_;
  std::uint64_t length_ = kUnknown;
  std::string validator_;
  bool resumable_ = false;   // continuing the part an earlier run (or source) wrote
  std::string part_source_;  // the URL that wrote it
  FileDigest digest_;
  bool length_check_wanted_ = false;
  bool length_check_running_ = false;
  std::optional<std::uint64_t> package_length_;  // the package URL's, for a mirror's copy
  bool another_file_ = false;                    // the copy is not the package: its part is dropped
  bool ranged_ = false;
  bool single_stream_ = false;
  bool probe_pending_ = false;
  bool restart_requested_ = false;
  bool ever_answered_ = false;
  int restarts_ = 0;
  int generation_ = 0;
};

int positive(EnvVar var, int fallback, int max) {
  const auto text = env_value(var, nullptr);
  if (!text || text->empty()) {
    return fallback;
  }
  return parse_setting(env_name(var, nullptr), *text, 1, max);
}

}  // namespace

std::optional<ContentRange> parse_content_range(std::string_view text) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  if (!text.starts_with("bytes ")) {
    return std::nullopt;
  }
  text.remove_prefix(6);
  const size_t dash = text.find('-');
  const size_t slash = text.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  const auto first = parse_integer<std::uint64_t>(text.substr(0, dash), 0, kMax);
  const auto last = parse_integer<std::uint64_t>(text.substr(dash + 1, slash - dash - 1), 0, kMax);
  const std::string_view total_text = text.substr(slash + 1);
  if (!first || !last || *last < *first) {
    return std::nullopt;
  }
  ContentRange range{*first, *last, std::nullopt};
  if (total_text != "*") {
    range.total = parse_integer<std::uint64_t>(total_text, 0, kMax);
    if (!range.total || *range.total <= *last) {
      return std::nullopt;
    }
  }
  return range;
}

bool read_header_line(std::string_view line, ResponseHeaders& headers) {
  const auto named = [&](std::string_view name) {
    return line.size() > name.size() && strncasecmp(line.data(), name.data(), name.size()) == 0;
  };
  const auto value = [&](std::string_view name) { return trim(line.substr(name.size())); };
  if (line.starts_with("HTTP/")) {
    headers = ResponseHeaders{};
    const size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      const std::string_view rest = line.substr(space + 1);
      headers.status =
          parse_integer(rest.substr(0, rest.find_first_of(" \r\n")), 100L, 999L).value_or(0);
    }
  } else if (named("etag:")) {
    headers.etag = value("etag:");
  } else if (named("last-modified:")) {
    headers.last_modified = value("last-modified:");
  } else if (named("content-range:")) {
    headers.content_range = value("content-range:");
  } else if (named("content-length:")) {
    headers.content_length = parse_integer<std::uint64_t>(
        value("content-length:"), 0, std::numeric_limits<std::uint64_t>::max());
  } else if (trim(line).empty()) {
    return true;
  }
  return false;
}

fs::path part_path(const fs::path& target) { return target.string() + ".part"; }
fs::path state_path(const fs::path& target) { return target.string() + ".part.state"; }

DownloadOptions download_options_from_environment() {
  DownloadOptions options;
  options.connections = positive(EnvVar::download_connections, options.connections, 64);
  options.attempts = positive(EnvVar::download_attempts, options.attempts, 1000);
  options.stall_seconds = positive(EnvVar::download_stall_seconds, options.stall_seconds, 3600);
  options.backoff = std::chrono::milliseconds(
      positive(EnvVar::download_backoff_ms, int(options.backoff.count()), 600000));
  options.network = network_settings_from_environment();
  if (const auto mirror = env_value(EnvVar::package_mirror, nullptr)) {
    options.package_mirror = trim(*mirror);
    const auto starts = [&](std::string_view scheme) {
      return strncasecmp(options.package_mirror.c_str(), scheme.data(), scheme.size()) == 0;
    };
    const bool http = starts("http://") || starts("https://");
    const bool blanks = std::any_of(options.package_mirror.begin(), options.package_mirror.end(),
                                    [](unsigned char c) { return c <= ' ' || c == 0x7f; });
    if (!options.package_mirror.empty() && (!http || blanks)) {
      throw Error(env_name(EnvVar::package_mirror, nullptr) + ": '" +
                      shown_url(options.package_mirror) +
                      "' is not an http:// or https:// URL without blanks",
                  ErrorKind::usage);
    }
  }
  return options;
}

DownloadResult download_file(const std::string& url, const fs::path& target,
                             const DownloadOptions& options, const std::string& package) {
  Downloader downloader(url, target, options, package);
  return downloader.run();
}

}  // namespace ascend_setup
