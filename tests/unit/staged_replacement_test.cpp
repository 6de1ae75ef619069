#include "base/util/staged_replacement.hpp"
#include "base/launch/main_guard.hpp"
#include "base/process/process.hpp"
#include "base/util/error.hpp"
#include "base/util/system_error.hpp"
#include "base/util/whole_file.hpp"
#include "test_support.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <sstream>

namespace {

using ascend_setup::Error;
using ascend_setup::ErrorKind;
using ascend_setup::StagedReplacement;
using namespace test_support;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(StagedReplacement, ADirectoryReplacesTheOldOneWholeAndNothingIsLeftBeside) {
  TempDir dir;
  const fs::path target = dir.path() / "package";
  write_file(target / "old-only", "old");
  write_file(target / "both", "old");
  {
    StagedReplacement staging(test_writer_lock(), target, "staging");
    EXPECT_EQ(staging.staged().parent_path(), dir.path());
    EXPECT_FALSE(fs::exists(staging.staged()));
    write_file(staging.staged() / "both", "new");
    write_file(staging.staged() / "deep" / "new-only", "new");
    staging.commit();
  }
  EXPECT_EQ(read_file(target / "both"), "new");
  EXPECT_EQ(read_file(target / "deep" / "new-only"), "new");
  EXPECT_FALSE(fs::exists(target / "old-only"));
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"package"});
}

TEST(StagedReplacement, AFileTakesThePlaceOfAnAbsentTargetOrAnEmptyPlaceholder) {
  TempDir dir;
  {
    StagedReplacement staging(test_writer_lock(), dir.path() / "sub" / "wheel.whl", "part");
    write_file(staging.staged(), "zip");
    staging.commit();
  }
  EXPECT_EQ(read_file(dir.path() / "sub" / "wheel.whl"), "zip");
  fs::create_directories(dir.path() / "placeholder");
  {
    StagedReplacement staging(test_writer_lock(), dir.path() / "placeholder", "clone");
    write_file(staging.staged() / "file", "x");
    staging.commit();
  }
  EXPECT_EQ(read_file(dir.path() / "placeholder" / "file"), "x");
}

TEST(StagedReplacement, WithoutCommitTheTargetStaysAndTheStagedCopyGoes) {
  TempDir dir;
  const fs::path target = dir.path() / "payload";
  write_file(target / "file", "old");
  try {
    StagedReplacement staging(test_writer_lock(), target, "staged");
    write_file(staging.staged() / "file", "half");
    throw Error("a failed copy", ErrorKind::local_io);
  } catch (const Error&) {
  }
  EXPECT_EQ(read_file(target / "file"), "old");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"payload"});
}

// Whatever their pid (a run in another container sharing the cache has pids
// this one cannot see): the holder of the lock is the only writer.
TEST(StagedReplacement, UnderTheLockWhatAnyStoppedRunStagedIsRemovedFirst) {
  TempDir dir;
  const fs::path target = dir.path() / "llvm";
  write_file(dir.path() / ".llvm.ascend-setup-staging-12345" / "half", "x");
  write_file(dir.path() / ".llvm.ascend-setup-staging-1", "x");
  write_file(dir.path() / ".llvm.ascend-setup-other-12345", "x");
  write_file(dir.path() / ".llvmx.ascend-setup-staging-1", "x");
  {
    StagedReplacement staging(test_writer_lock(), target, "staging");
    EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{".llvm.ascend-setup-other-12345",
                                                              ".llvmx.ascend-setup-staging-1"}));
  }
  write_file(dir.path() / ".llvm.ascend-setup-staging-7" / "half", "x");
  StagedReplacement::remove_leftovers(test_writer_lock(), target, "staging");
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{".llvm.ascend-setup-other-12345",
                                                            ".llvmx.ascend-setup-staging-1"}));
}

// The one test of the staging pattern: every name StagedReplacement gives a
// staged copy (and the fallback's old one), whatever the target and `what`,
// and no other name, hidden or not.
TEST(StagedReplacement, ItsNamesAndOnlyThoseAreStagedNames) {
  TempDir dir;
  for (const char* target : {"bishengir", "triton-3.6.whl", ".triton", "a.ascend-setup-x"}) {
    for (const char* what : {"staged", "part", "unpack"}) {
      const StagedReplacement staging(test_writer_lock(), dir.path() / target, what);
      const std::string name = staging.staged().filename().string();
      EXPECT_TRUE(ascend_setup::is_staged_name(name)) << name;
      EXPECT_TRUE(ascend_setup::is_staged_name(name + "-old")) << name;
      EXPECT_FALSE(ascend_setup::is_staged_name(name + "x")) << name;
      EXPECT_FALSE(ascend_setup::is_staged_name(name.substr(name.rfind(".ascend-setup-")))) << name;
    }
  }
  for (const char* other :
       {".hidden", ".ascend-setup-staged-1", "..ascend-setup--1", ".x.ascend-setup-staged-",
        ".x.ascend-setup-staged-12a", "x.whl", ".x.ascend-setup-staged-1-older", ""}) {
    EXPECT_FALSE(ascend_setup::is_staged_name(other)) << other;
  }
}

// A run killed between the two renames of the fallback (below) left the old
// target aside and none in place: the next holder of the lock puts it back.
TEST(StagedReplacement, AnOldTargetAKilledRunMovedAsideIsPutBack) {
  TempDir dir;
  const fs::path target = dir.path() / "package";
  write_file(dir.path() / ".package.ascend-setup-staging-4242-old" / "file", "old");
  write_file(dir.path() / ".package.ascend-setup-staging-4242" / "file", "new");
  {
    StagedReplacement staging(test_writer_lock(), target, "staging");
    EXPECT_EQ(read_file(target / "file"), "old");
    EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"package"});
  }
  // With the target in place, an old one aside is only a leftover.
  write_file(dir.path() / ".package.ascend-setup-staging-4242-old" / "file", "older");
  StagedReplacement::remove_leftovers(test_writer_lock(), target, "staging");
  EXPECT_EQ(read_file(target / "file"), "old");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"package"});
}

// The cases below run in a child of this test binary with the stand-in
// tests/stand_ins/file_system_calls.cpp preloaded (renameat2 without its
// flags, as on NFS; every rename and sync recorded): this test starts it and
// asks that all of them ran and passed.
TEST(StagedReplacement, UnderAFileSystemWithoutRenameat2FlagsEachCaseHolds) {
  TempDir dir;
  const ascend_setup::ProcessResult child =
      ascend_setup::run_process({{fs::read_symlink("/proc/self/exe").string(),
                                  "--gtest_filter=StagedReplacementWithoutRenameat2Flags.*"},
                                 std::nullopt,
                                 {{"LD_PRELOAD", FILE_SYSTEM_CALLS},
                                  {"STAND_IN_RENAME_FLAGS", "einval"},
                                  {"STAND_IN_CALL_LOG", (dir.path() / "calls.log").string()}},
                                 ""});
  EXPECT_EQ(child.exit_code, 0) << child.out << child.err;
  EXPECT_TRUE(contains(child.out, "[  PASSED  ] ")) << child.out;
  EXPECT_FALSE(contains(child.out, "[  PASSED  ] 0 tests")) << child.out;
  EXPECT_FALSE(contains(child.out, "SKIPPED")) << child.out;
}

// The calls the stand-in recorded since `from` (the log's size before).
std::vector<std::string> calls_since(std::size_t from) {
  const std::string log = read_file(std::getenv("STAND_IN_CALL_LOG"));
  std::vector<std::string> calls;
  std::istringstream lines(log.substr(from));
  for (std::string line; std::getline(lines, line);) {
    calls.push_back(line);
  }
  return calls;
}

std::size_t log_size() {
  std::error_code ec;
  const auto size = fs::file_size(std::getenv("STAND_IN_CALL_LOG"), ec);
  return ec ? 0 : size;
}

class StagedReplacementWithoutRenameat2Flags : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("STAND_IN_CALL_LOG") == nullptr) {
      GTEST_SKIP() << "runs under the stand-in only, from "
                      "StagedReplacement.UnderAFileSystemWithoutRenameat2FlagsEachCaseHolds";
    }
    const int refused =
        ::renameat2(AT_FDCWD, "/nonexistent-a", AT_FDCWD, "/nonexistent-b", RENAME_NOREPLACE);
    const int error_number = errno;
    ASSERT_EQ(refused, -1);
    ASSERT_EQ(error_number, EINVAL) << "the stand-in is not preloaded";
  }
  TempDir dir;
  // As the stand-in reads a descriptor's path.
  const fs::path root = fs::canonical(dir.path());
};

TEST_F(StagedReplacementWithoutRenameat2Flags, ADirectoryReplacesAPresentOneSyncedFileByFile) {
  const fs::path target = root / "package";
  write_file(target / "old-only", "old");
  const std::size_t before = log_size();
  fs::path staged;
  {
    StagedReplacement staging(test_writer_lock(), target, "staging");
    staged = staging.staged();
    write_file(staged / "both", "new");
    write_file(staged / "deep" / "new-only", "new");
    staging.commit();
  }
  EXPECT_EQ(read_file(target / "both"), "new");
  EXPECT_FALSE(fs::exists(target / "old-only"));
  EXPECT_EQ(names_in(root), std::vector<std::string>{"package"});
  std::vector<std::string> calls = calls_since(before);
  const fs::path aside = staged.string() + "-old";
  // Each file and directory of the new one (in the directory's order), the
  // new one itself, then the parent after the renames; never the whole file
  // system (other jobs' data).
  ASSERT_EQ(calls.size(), 7u) << ::testing::PrintToString(calls);
  std::sort(calls.begin(), calls.begin() + 3);
  EXPECT_EQ(calls, (std::vector<std::string>{
                       "fsync " + (staged / "both").string(),
                       "fsync " + (staged / "deep").string(),
                       "fsync " + (staged / "deep" / "new-only").string(),
                       "fsync " + staged.string(),
                       "rename " + target.string() + " " + aside.string(),
                       "rename " + staged.string() + " " + target.string(),
                       "fsync " + root.string(),
                   }))
      << ::testing::PrintToString(calls);
}

TEST_F(StagedReplacementWithoutRenameat2Flags, AFileReplacesItsTargetInOneRename) {
  const fs::path target = root / "wheel.whl";
  write_file(target, "old");
  const std::size_t before = log_size();
  fs::path staged;
  {
    StagedReplacement staging(test_writer_lock(), target, "part");
    staged = staging.staged();
    write_file(staged, "new");
    staging.commit();
  }
  EXPECT_EQ(read_file(target), "new");
  EXPECT_EQ(names_in(root), std::vector<std::string>{"wheel.whl"});
  EXPECT_EQ(calls_since(before), (std::vector<std::string>{
                                     "fsync " + staged.string(),
                                     "rename " + staged.string() + " " + target.string(),
                                     "fsync " + root.string(),
                                 }));
}

TEST_F(StagedReplacementWithoutRenameat2Flags, AFailedMoveInPutsTheOldOneBackAtOnce) {
  const fs::path target = root / "package";
  write_file(target / "file", "old");
  {
    StagedReplacement staging(test_writer_lock(), target, "staging");
    write_file(staging.staged() / "file", "new");
    // The first rename from the staged copy is refused (a directory over a
    // present one); the second, the move-in, fails.
    ::setenv("STAND_IN_RENAME_FAIL", "2:.package.ascend-setup-staging-", 1);
    EXPECT_THROW(staging.commit(), Error);
    ::unsetenv("STAND_IN_RENAME_FAIL");
  }
  EXPECT_EQ(read_file(target / "file"), "old");
  EXPECT_EQ(names_in(root), std::vector<std::string>{"package"});
}

TEST_F(StagedReplacementWithoutRenameat2Flags, ARunKilledBetweenTheRenamesLosesNothing) {
  const fs::path target = root / "package";
  write_file(target / "file", "old");
  const pid_t run = ::fork();
  if (run == 0) {
    // A run killed (SIGKILL, by the stand-in) with the old one aside and the
    // new one not yet in.
    ::setenv("STAND_IN_RENAME_KILL", "2:.package.ascend-setup-staging-", 1);
    try {
      StagedReplacement staging(test_writer_lock(), target, "staging");
      write_file(staging.staged() / "file", "new");
      staging.commit();
    } catch (...) {
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(run, &status, 0), run);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_FALSE(fs::exists(target));
  const std::string aside = ".package.ascend-setup-staging-" + std::to_string(run) + "-old";
  EXPECT_EQ(read_file(root / aside / "file"), "old");

  // The next holder of the lock: the old one back first, then replaced.
  StagedReplacement staging(test_writer_lock(), target, "staging");
  EXPECT_EQ(read_file(target / "file"), "old");
  EXPECT_EQ(names_in(root), std::vector<std::string>{"package"});
  write_file(staging.staged() / "file", "new");
  staging.commit();
  EXPECT_EQ(read_file(target / "file"), "new");
  EXPECT_EQ(names_in(root), std::vector<std::string>{"package"});
}

// A real full disk (a 1 MiB tmpfs): the Error says so, where, and how much
// is free; its kind is local_io, so nothing retries it.
TEST(SystemError, AFullDiskSaysSoWithWhereAndWhatIsFree) {
  TempDir dir;
  SmallDisk disk(dir.path() / "disk", "1m");
  disk.fill(0);
  const fs::path file = disk.path() / "sub" / "file";
  fs::create_directories(file.parent_path());
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  const std::string block(64 << 10, 'x');
  const ssize_t written = ::write(fd, block.data(), block.size());
  const int error_number = errno;
  ::close(fd);
  ASSERT_LT(written, 0);
  ASSERT_EQ(error_number, ENOSPC);
  const Error error = ascend_setup::system_error("write", file, error_number, 3u << 20);
  EXPECT_EQ(error.kind(), ErrorKind::local_io);
  EXPECT_FALSE(error.retryable());
  EXPECT_EQ(error.exit_code(), 3);
  const std::string text = error.what();
  EXPECT_EQ(text.rfind("the disk is full: cannot write " + file.string() + " (", 0), 0u) << text;
  EXPECT_NE(text.find("free of 1.0 MiB on " + disk.path().string()), std::string::npos) << text;
  EXPECT_NE(text.find("the step needs about 3.0 MiB"), std::string::npos) << text;

  // std::filesystem's own error, translated the same way.
  const fs::filesystem_error full("cannot copy file", dir.path() / "a", file,
                                  std::make_error_code(std::errc::no_space_on_device));
  const std::string translated = ascend_setup::system_error(full).what();
  EXPECT_EQ(translated.rfind("the disk is full: cannot copy file " + (dir.path() / "a").string() +
                                 " to " + file.string(),
                             0),
            0u)
      << translated;
}

TEST(ErrorKinds, OnlyTheNetworkIsRetriedAndEachKindHasItsExitCode) {
  EXPECT_TRUE(Error("x", ErrorKind::network).retryable());
  for (ErrorKind kind : {ErrorKind::bad_input, ErrorKind::local_io, ErrorKind::usage,
                         ErrorKind::upstream_contract, ErrorKind::python, ErrorKind::stopped}) {
    EXPECT_FALSE(Error("x", kind).retryable());
  }
  EXPECT_EQ(Error("x", ErrorKind::upstream_contract).exit_code(), 4);
  EXPECT_EQ(Error("x", ErrorKind::usage).exit_code(), 2);
  EXPECT_EQ(Error("x", ErrorKind::python).exit_code(), 1);
  EXPECT_EQ(Error::stopped("x", 143).exit_code(), 143);
  EXPECT_EQ(Error::stopped("x", 143).kind(), ErrorKind::stopped);
}

// What cannot happen unless ascend-setup (or a library it calls) is wrong
// has a kind and an exit code of its own, not bad input's 3 nor Python's 1;
// so has any exception that is no Error when it reaches main.
TEST(ErrorKinds, AnInternalFailureHasItsOwnExitCode) {
  EXPECT_EQ(Error("x", ErrorKind::internal).exit_code(), ascend_setup::exit_code::internal);
  EXPECT_EQ(ascend_setup::exit_code::internal, 70);
  EXPECT_FALSE(Error("x", ErrorKind::internal).retryable());
  EXPECT_EQ(ascend_setup::run_guarded([]() -> int { throw std::logic_error("a bug"); }),
            ascend_setup::exit_code::internal);
  EXPECT_EQ(ascend_setup::run_guarded([]() -> int { throw Error("bad", ErrorKind::usage); }),
            ascend_setup::exit_code::usage);
}

}  // namespace
