// PATH lookup with execvp's rules: a regular executable file, in PATH's
// order, an empty entry for the current directory, directories and
// unexecutable files passed over.
#include "base/util/executable_search.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

void make_program(const fs::path& path, fs::perms mode = fs::perms(0755)) {
  write_file(path, "#!/bin/sh\n");
  fs::permissions(path, mode);
}

// Runs `body` with the working directory at `dir`, then goes back.
template <class Body>
void in_directory(const fs::path& dir, Body body) {
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  body();
  fs::current_path(before);
}

}  // namespace

TEST(ExecutableSearch, TheFirstRegularExecutableFileInPathOrderWins) {
  TempDir dir;
  const fs::path a = dir.path() / "a", b = dir.path() / "b", c = dir.path() / "c";
  fs::create_directories(a / "tool");  // a directory of the program's name
  fs::create_directories(b);
  make_program(b / "tool", fs::perms(0644));  // not executable
  make_program(c / "tool");
  const std::string path = a.string() + ":" + b.string() + ":" + c.string();
  EXPECT_EQ(find_executable("tool", path), c / "tool");
  make_program(b / "tool");
  EXPECT_EQ(find_executable("tool", path), b / "tool");
  EXPECT_EQ(find_executable("other", path), std::nullopt);
  EXPECT_EQ(find_executable("", path), std::nullopt);
}

TEST(ExecutableSearch, AnEmptyEntryIsTheCurrentDirectory) {
  TempDir dir;
  make_program(dir.path() / "tool");
  in_directory(dir.path(), [&] {
    EXPECT_EQ(find_executable("tool", std::string("/nonexistent:")), fs::path("./tool"));
    EXPECT_EQ(find_executable("tool", std::string(":/nonexistent")), fs::path("./tool"));
    EXPECT_EQ(find_executable("tool", std::string("/nonexistent::/x")), fs::path("./tool"));
    EXPECT_EQ(find_executable("tool", std::string("")), fs::path("./tool"));
    EXPECT_EQ(find_executable("tool", std::string("/nonexistent")), std::nullopt);
  });
}

TEST(ExecutableSearch, ASymlinkToAProgramIsFoundAndANameWithASlashIsKept) {
  TempDir dir;
  make_program(dir.path() / "real");
  fs::create_symlink(dir.path() / "real", dir.path() / "tool");
  EXPECT_EQ(find_executable("tool", dir.path().string()), dir.path() / "tool");
  EXPECT_EQ(find_executable("./missing", dir.path().string()), fs::path("./missing"));
}

TEST(ExecutableSearch, AnUnsetPathIsExecvpsDefault) {
  // /bin/sh exists on every machine the suite runs on.
  EXPECT_EQ(find_executable("sh", std::nullopt), fs::path("/bin/sh"));
}
