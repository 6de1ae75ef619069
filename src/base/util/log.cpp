#include "base/util/log.hpp"

#include "base/util/error.hpp"

#include <spdlog/sinks/stdout_sinks.h>

namespace ascend_setup {

void init_logging() {
  if (spdlog::get("ascend-setup")) {
    return;
  }
  auto logger = spdlog::stderr_logger_st("ascend-setup");
  logger->set_pattern("ascend-setup: %l: %v");
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
