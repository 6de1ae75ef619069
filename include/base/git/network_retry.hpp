// Network work tried more than once: `attempt` runs up to `attempts` times
// while it throws a retryable Error (ErrorKind::network: a local failure or a
// stop is rethrown at once), with `delay` between two tries; every failed try but
// the last is one warning naming it, the last one's Error is rethrown. A stop
// signal ends the wait (throw_if_stopped(): exit 128 + signal).
//
// What decides whether a failed libgit2 call is worth another try is here
// too: classify_git_failure(), from libgit2's return code and error class.
#pragma once

#include "base/util/error.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <string_view>

namespace ascend_setup {

// A failed libgit2 call as its return code, error class (git_error's
// klass) and message say.
struct GitFailure {
  enum class Cause {
    proxy,        // the proxy answered CONNECT with `proxy_status` (407: credentials)
    certificate,  // the server's certificate is not trusted
    network,      // the network or the server (GIT_ERROR_NET, _HTTP, _SSL, _SSH)
    local,        // this machine (GIT_ERROR_OS, _FILESYSTEM, _NOMEMORY)
    other,        // anything else: the input
  };
  Cause cause = Cause::other;
  long proxy_status = 0;

  // network for the network and a proxy's transient answer (502, 503, 504:
  // tried again), local_io for this machine, bad_input for the rest (a
  // proxy's refusal and an untrusted certificate need the user's fix).
  ErrorKind kind() const;
};

// Decided by `rc` (GIT_ECERTIFICATE, GIT_EAUTH) and `error_class` (GIT_ERROR_*,
// 0 when libgit2 set none); the message is read only for what libgit2 puts
// nowhere else: the status of a proxy's CONNECT answer ("proxy returned
// unexpected status: N", class HTTP) and whether a GIT_EAUTH was the proxy's.
// `through_proxy`: the call went through a proxy.
GitFailure classify_git_failure(int rc, int error_class, std::string_view message,
                                bool through_proxy);

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
