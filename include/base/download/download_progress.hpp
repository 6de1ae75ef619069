// Progress of one download on stderr: on a terminal one live line rewritten
// in place (at most 4 times a second); otherwise a plain line each time
// another 10% has arrived or 30 s have passed, so that CI logs stay short.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace ascend_setup {

class DownloadProgress {
 public:
  DownloadProgress(std::string label, bool enabled);
  // `total` nullopt: unknown length. `connections`: transfers running now.
  void update(std::uint64_t done, std::optional<std::uint64_t> total, int connections);
  // The last line (ends the live line on a terminal).
  void finish(std::uint64_t done, const std::string& how);

 private:
  using Clock = std::chrono::steady_clock;
  std::string line(std::uint64_t done, std::optional<std::uint64_t> total, int connections) const;

  std::string label_;
  bool enabled_;
  bool terminal_;
  Clock::time_point start_;
  Clock::time_point last_print_;
  std::uint64_t start_done_ = 0;
  bool started_ = false;
  int last_tenth_ = -1;
  bool live_line_open_ = false;
};

}  // namespace ascend_setup
