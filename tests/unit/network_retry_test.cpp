#include "base/git/network_retry.hpp"

#include <git2.h>
#include <gtest/gtest.h>

using namespace ascend_setup;

TEST(Retry, FailuresAreTriedAgainUpToTheAttemptsThenTheLastErrorIsThrown) {
  int calls = 0;
  EXPECT_EQ(with_retries({3, std::chrono::milliseconds(1)}, "x",
                         [&] {
                           if (++calls < 3) {
                             throw Error("down " + std::to_string(calls), ErrorKind::network);
                           }
                           return 7;
                         }),
            7);
  EXPECT_EQ(calls, 3);

  calls = 0;
  try {
    with_retries({2, std::chrono::milliseconds(0)}, "x",
                 [&] { throw Error("down " + std::to_string(++calls), ErrorKind::network); });
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "down 2");
  }
  EXPECT_EQ(calls, 2);
}

TEST(Retry, OnlyTheNetworkIsTriedAgainNotAStopALocalFailureOrBadInput) {
  for (const Error& thrown :
       {Error::stopped("stopped", 143), Error("disk full", ErrorKind::local_io),
        Error("no such branch", ErrorKind::bad_input),
        Error("conflict", ErrorKind::patch_conflict)}) {
    int calls = 0;
    EXPECT_THROW(with_retries({5, std::chrono::milliseconds(0)}, "x",
                              [&] {
                                ++calls;
                                throw thrown;
                              }),
                 Error);
    EXPECT_EQ(calls, 1) << thrown.what();
  }
}

TEST(Retry, TheWaitLastsItsDelay) {
  const auto start = std::chrono::steady_clock::now();
  wait_before_retry(std::chrono::milliseconds(30));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
}

// libgit2 1.5's own failures (the messages its HTTP transport sets), decided
// by the return code and the error class; the message gives only a proxy's
// status. A proxy's 502, 503 and 504 are tried again, its other answers and
// an untrusted certificate are the user's to fix.
TEST(GitFailures, TheClassDecidesAndAProxysTransientAnswerIsTriedAgain) {
  struct Case {
    int rc;
    int klass;
    const char* message;
    bool proxy;
    GitFailure::Cause cause;
    long status;
    ErrorKind kind;
  };
  using C = GitFailure::Cause;
  const Case cases[] = {
      {-1, GIT_ERROR_HTTP, "proxy returned unexpected status: 503", true, C::proxy, 503,
       ErrorKind::network},
      {-1, GIT_ERROR_HTTP, "proxy returned unexpected status: 502", true, C::proxy, 502,
       ErrorKind::network},
      {-1, GIT_ERROR_HTTP, "proxy returned unexpected status: 504", true, C::proxy, 504,
       ErrorKind::network},
      {-1, GIT_ERROR_HTTP, "proxy returned unexpected status: 403", true, C::proxy, 403,
       ErrorKind::bad_input},
      {-1, GIT_ERROR_HTTP, "proxy returned unexpected status: 401", true, C::proxy, 401,
       ErrorKind::bad_input},
      {GIT_EAUTH, GIT_ERROR_HTTP, "proxy requires authentication that we do not support", true,
       C::proxy, 407, ErrorKind::bad_input},
      // Without a proxy, or of another class, the same words are no proxy's answer.
      {-1, GIT_ERROR_HTTP, "proxy returned unexpected status: 503", false, C::network, 0,
       ErrorKind::network},
      {-1, GIT_ERROR_NET, "proxy returned unexpected status: 403", true, C::network, 0,
       ErrorKind::network},
      {GIT_EAUTH, GIT_ERROR_HTTP, "server requires authentication that we do not support", true,
       C::network, 0, ErrorKind::network},
      {GIT_ECERTIFICATE, GIT_ERROR_SSL, "the SSL certificate is invalid", true, C::certificate, 0,
       ErrorKind::bad_input},
      {-1, GIT_ERROR_SSL, "SSL error: X509 - Certificate verification failed", false,
       C::certificate, 0, ErrorKind::bad_input},
      {-1, GIT_ERROR_SSL, "SSL error: handshake failed", false, C::network, 0, ErrorKind::network},
      {-1, GIT_ERROR_NET, "failed to connect to localhost: Connection refused", false, C::network,
       0, ErrorKind::network},
      {-1, GIT_ERROR_OS, "could not open file", false, C::local, 0, ErrorKind::local_io},
      {-1, GIT_ERROR_REFERENCE, "reference 'refs/heads/x' not found", false, C::other, 0,
       ErrorKind::bad_input},
      {-1, 0, "", false, C::other, 0, ErrorKind::bad_input},
  };
  for (const Case& c : cases) {
    const GitFailure failure = classify_git_failure(c.rc, c.klass, c.message, c.proxy);
    EXPECT_EQ(failure.cause, c.cause) << c.message;
    EXPECT_EQ(failure.proxy_status, c.status) << c.message;
    EXPECT_EQ(failure.kind(), c.kind) << c.message;
  }
}
