#include "base/git/network_retry.hpp"

#include "base/process/stop_signals.hpp"

#include <time.h>

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

}  // namespace ascend_setup
