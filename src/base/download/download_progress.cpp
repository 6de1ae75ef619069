#include "base/download/download_progress.hpp"

#include "base/util/strings.hpp"

#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ascend_setup {

DownloadProgress::DownloadProgress(std::string label, bool enabled)
    : label_(std::move(label)),
      enabled_(enabled),
      terminal_(::isatty(STDERR_FILENO) == 1),
      start_(Clock::now()),
      last_print_(start_) {}

std::string DownloadProgress::line(std::uint64_t done, std::optional<std::uint64_t> total,
                                   int connections) const {
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = seconds > 0.05 ? static_cast<double>(done - start_done_) / seconds : 0.0;
  std::string text = fmt::format("downloading {}: {}", label_, human_bytes(double(done)));
  if (total && *total > 0) {
    text += fmt::format(" of {} ({:.0f}%)", human_bytes(double(*total)),
                        100.0 * double(done) / double(*total));
  }
  text += fmt::format(", {}/s, {} connection{}", human_bytes(rate), connections,
                      connections == 1 ? "" : "s");
  if (total && rate > 0 && *total > done) {
    text += fmt::format(", {:.0f} s left", double(*total - done) / rate);
  }
  return text;
}

void DownloadProgress::update(std::uint64_t done, std::optional<std::uint64_t> total,
                              int connections) {
  if (!enabled_) {
    return;
  }
  const auto now = Clock::now();
  if (!started_) {
    started_ = true;
    start_done_ = done;
    start_ = now;
    last_print_ = now;
  }
  if (terminal_) {
    if (now - last_print_ < std::chrono::milliseconds(250)) {
      return;
    }
    last_print_ = now;
    std::fprintf(stderr, "\r\033[K%s", line(done, total, connections).c_str());
    std::fflush(stderr);
    live_line_open_ = true;
    return;
  }
  const int tenth = total && *total > 0 ? static_cast<int>(10 * done / *total) : -1;
  if (tenth > last_tenth_ || now - last_print_ >= std::chrono::seconds(30)) {
    if (tenth > last_tenth_ && last_tenth_ == -1 && tenth == 0) {
      last_tenth_ = 0;  // the start: no line for 0%
      return;
    }
    last_tenth_ = std::max(tenth, last_tenth_);
    last_print_ = now;
    std::fprintf(stderr, "%s\n", line(done, total, connections).c_str());
  }
}

void DownloadProgress::finish(std::uint64_t done, const std::string& how) {
  if (!enabled_) {
    return;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  std::fprintf(stderr, "%sdownloaded %s: %s in %.1f s%s%s\n", live_line_open_ ? "\r\033[K" : "",
               label_.c_str(), human_bytes(double(done)).c_str(), seconds, how.empty() ? "" : ", ",
               how.c_str());
  live_line_open_ = false;
}

}  // namespace ascend_setup
