#include "base/git/network_retry.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/network_settings.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"

#include <git2.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace ascend_setup {

void wait_before_retry(std::chrono::milliseconds delay) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(delay);
  timespec left{static_cast<time_t>(seconds.count()),
                static_cast<long>(std::chrono::nanoseconds(delay - seconds).count())};
  throw_if_stopped();  // one that came during the failed attempt
  // A stop signal interrupts the sleep (no SA_RESTART): EINTR, then the stop.
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    throw_if_stopped();
  }
  throw_if_stopped();
}

ErrorKind GitFailure::kind() const {
  switch (cause) {
    case Cause::proxy:
      return proxy_answer_is_transient(proxy_status) ? ErrorKind::network : ErrorKind::bad_input;
    case Cause::network:
      return ErrorKind::network;
    case Cause::local:
      return ErrorKind::local_io;
    case Cause::certificate:
    case Cause::other:
      break;
  }
  return ErrorKind::bad_input;
}

GitFailure classify_git_failure(int rc, int error_class, std::string_view message,
                                bool through_proxy) {
  const auto mentions = [&](std::string_view word) {
    return std::search(message.begin(), message.end(), word.begin(), word.end(),
                       [](char a, char b) {
                         return std::tolower(static_cast<unsigned char>(a)) ==
                                std::tolower(static_cast<unsigned char>(b));
                       }) != message.end();
  };
  GitFailure failure;
  if (rc == GIT_ECERTIFICATE || (error_class == GIT_ERROR_SSL && mentions("certificate"))) {
    failure.cause = GitFailure::Cause::certificate;
    return failure;
  }
  if (through_proxy && error_class == GIT_ERROR_HTTP) {
    constexpr std::string_view kConnectAnswer = "proxy returned unexpected status: ";
    if (const auto at = message.find(kConnectAnswer); at != std::string_view::npos) {
      failure.proxy_status =
          parse_integer(leading_digits(message.substr(at + kConnectAnswer.size())), 100L, 999L)
              .value_or(0);
    } else if (rc == GIT_EAUTH && mentions("proxy")) {
      failure.proxy_status = 407;
    }
    if (failure.proxy_status != 0) {
      failure.cause = GitFailure::Cause::proxy;
      return failure;
    }
  }
  switch (error_class) {
    case GIT_ERROR_NET:
    case GIT_ERROR_HTTP:
    case GIT_ERROR_SSL:
    case GIT_ERROR_SSH:
      failure.cause = GitFailure::Cause::network;
      break;
    case GIT_ERROR_OS:
    case GIT_ERROR_FILESYSTEM:
    case GIT_ERROR_NOMEMORY:
      failure.cause = GitFailure::Cause::local;
      break;
    default:
      break;
  }
  return failure;
}

}  // namespace ascend_setup
