#include "base/util/whole_file.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace {

using ascend_setup::Error;
using ascend_setup::read_whole_file;
using namespace test_support;

TEST(TextFile, ReadsBytesAndTakesOnlyAMissingFileForAbsent) {
  TempDir dir;
  write_file(dir.path() / "a", std::string("x\0y", 3));
  EXPECT_EQ(read_whole_file(dir.path() / "a"), std::string("x\0y", 3));
  EXPECT_EQ(read_whole_file(dir.path() / "missing"), std::nullopt);
  EXPECT_EQ(read_whole_file(dir.path() / "a" / "below-a-file"), std::nullopt);  // ENOTDIR
}

TEST(TextFile, ADirectoryIsAnErrorNotAnEmptyFile) {
  TempDir dir;
  try {
    read_whole_file(dir.path());
    FAIL() << "a directory was read as a file";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("Is a directory"), std::string::npos) << error.what();
  }
}

// As root nothing is unreadable, so the read runs in a child that has become
// the unprivileged user 65534 ("nobody").
TEST(TextFile, AnUnreadableFileIsAPermissionErrorNotAbsent) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  const fs::path file = dir.path() / "secret";
  write_file(file, "x");
  ::chmod(file.c_str(), 0600);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) {
      ::_exit(10);
    }
    try {
      ::_exit(read_whole_file(file) ? 11 : 12);  // read it, or called it absent
    } catch (const Error& error) {
      ::_exit(std::string(error.what()).find("Permission denied") != std::string::npos ? 0 : 13);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: no uid change, 11: read, 12: taken as absent, 13: "
                                       "another message";
}

}  // namespace
