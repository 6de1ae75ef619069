#include "base/launch/main_guard.hpp"

#include "base/util/error.hpp"
#include "base/util/system_error.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace ascend_setup {

int run_guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& error) {
    spdlog::error("{}", error.what());
    return error.exit_code();
  } catch (const std::filesystem::filesystem_error& error) {
    const Error as_error = system_error(error);
    spdlog::error("{}", as_error.what());
    return as_error.exit_code();
  } catch (const std::exception& error) {
    spdlog::error("internal error: {}", error.what());
    return exit_code::internal;
  }
}

}  // namespace ascend_setup
