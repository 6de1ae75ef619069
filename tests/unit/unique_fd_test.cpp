// The owning fd and FILE*: closed once, released on request, close's
// failure reported where it is asked for.
#include "base/util/unique_fd.hpp"
#include "test_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

using namespace ascend_setup;
using namespace test_support;

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

}  // namespace

TEST(UniqueFd, ClosesOnceAndMovesOwnership) {
  int raw = -1;
  {
    UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    raw = fd.get();
    UniqueFd moved(std::move(fd));
    EXPECT_FALSE(fd);
    EXPECT_EQ(moved.get(), raw);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, ReleaseHandsTheFdOver) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw = fd.release();
  EXPECT_FALSE(fd);
  EXPECT_TRUE(is_open(raw));
  ::close(raw);
}

TEST(UniqueFd, CloseReportsAFailure) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw = fd.get();
  EXPECT_TRUE(fd.close());
  EXPECT_FALSE(fd);
  EXPECT_TRUE(fd.close());  // nothing owned
  UniqueFd stale(raw);      // already closed: close fails with EBADF
  EXPECT_FALSE(stale.close());
  EXPECT_EQ(errno, EBADF);
}

TEST(UniqueFile, FcloseOnceAndItsResult) {
  TempDir dir;
  UniqueFile file(std::fopen((dir.path() / "f").c_str(), "w"));
  ASSERT_TRUE(file);
  std::fputs("x", file.get());
  EXPECT_TRUE(file.close());
  EXPECT_FALSE(file);
  // A buffered write to a full device fails at fclose.
  UniqueFile full(std::fopen("/dev/full", "w"));
  ASSERT_TRUE(full);
  std::fputs("x", full.get());
  EXPECT_FALSE(full.close());
}
