// Network work tried more than once: `attempt` runs up to `attempts` times
// while it throws a retryable Error (ErrorKind::network: a local failure or a
// stop is rethrown at once), with `delay` between two tries; every failed try but
// the last is one warning naming it, the last one's Error is rethrown. A stop
// signal ends the wait (throw_if_stopped(): exit 128 + signal).
#pragma once

#include "base/util/error.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

namespace ascend_setup {

struct RetryPolicy {
  int attempts = 1;
  std::chrono::milliseconds delay{0};
};

// Sleeps `delay`, woken early only by a stop signal (which it throws).
void wait_before_retry(std::chrono::milliseconds delay);

template <class Attempt>
auto with_retries(const RetryPolicy& policy, const std::string& what, Attempt&& attempt)
    -> decltype(attempt()) {
  for (int tried = 1;; ++tried) {
    try {
      return attempt();
    } catch (const Error& error) {
      if (tried >= policy.attempts || !error.retryable()) {
        throw;
      }
      spdlog::warn("{} failed (attempt {} of {}): {}; trying again in {} s", what, tried,
                   policy.attempts, error.what(),
                   std::chrono::duration<double>(policy.delay).count());
      wait_before_retry(policy.delay);
    }
  }
}

}  // namespace ascend_setup
