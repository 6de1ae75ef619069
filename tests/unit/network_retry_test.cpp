#include "base/git/network_retry.hpp"

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
