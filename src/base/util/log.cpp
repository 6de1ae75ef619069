#include "base/util/log.hpp"

#include "base/util/error.hpp"
#include "base/util/shown_url.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <memory>

namespace ascend_setup {

namespace {

// The line as the pattern formats it, then as shown (shown_url.hpp): the
// one place every log line passes, errors included.
class ShownLineFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& dest) override {
    spdlog::memory_buf_t line;
    pattern_.format(message, line);
    const std::string shown = shown_text(std::string_view(line.data(), line.size()));
    dest.append(shown.data(), shown.data() + shown.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<ShownLineFormatter>();
  }

 private:
  spdlog::pattern_formatter pattern_{"ascend-setup: %l: %v"};
};

}  // namespace

void init_logging() {
  if (spdlog::get("ascend-setup")) {
    return;
  }
  auto logger = spdlog::stderr_logger_st("ascend-setup");
  logger->set_formatter(std::make_unique<ShownLineFormatter>());
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

void set_log_level(const std::string& level) {
  static const std::pair<const char*, spdlog::level::level_enum> levels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},
  };
  for (const auto& [name, value] : levels) {
    if (level == name) {
      spdlog::set_level(value);
      return;
    }
  }
  throw Error("unknown log level '" + level + "': use trace, debug, info, warn or error",
              ErrorKind::usage);
}

bool debug_logging() { return spdlog::default_logger()->should_log(spdlog::level::debug); }

}  // namespace ascend_setup
