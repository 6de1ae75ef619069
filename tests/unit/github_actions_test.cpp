#include "base/util/github_actions.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using namespace ascend_setup;
using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;

// What the scope writes to stderr (fd 2 pointed at a file meanwhile).
class StderrCapture {
 public:
  explicit StderrCapture(const fs::path& file) : file_(file), saved_(::dup(STDERR_FILENO)) {
    fflush(stderr);
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    return read_file(file_);
  }

 private:
  void restore() {
    if (saved_ >= 0) {
      fflush(stderr);
      ::dup2(saved_, STDERR_FILENO);
      ::close(saved_);
      saved_ = -1;
    }
  }
  fs::path file_;
  int saved_;
};

// GitHub's toolkit escapes: % \r \n in a message, and : , too in a property.
TEST(GithubActions, AnnotationsEscapeMessagesAndProperties) {
  EXPECT_EQ(workflow_escape_data("50%\r\nfile: a, b"), "50%25%0D%0Afile: a, b");
  EXPECT_EQ(workflow_escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
  EXPECT_EQ(error_annotation("python/src/ir,1:2.cc", 10, "line 10: has\n\"x\""),
            "::error file=python/src/ir%2C1%3A2.cc,line=10::line 10: has%0A\"x\"");
  EXPECT_EQ(error_annotation("setup.py", 0, "no line"), "::error file=setup.py::no line");
  EXPECT_EQ(error_annotation("", 0, "nothing"), "::error::nothing");
}

// Groups never nest and always close: an inner group writes nothing, the
// outer one closes when an exception leaves its scope; off writes nothing.
TEST(GithubActions, GroupsNeverNestAndCloseOnTheWayOut) {
  TempDir dir;
  StderrCapture capture(dir.path() / "stderr");
  { const WorkflowGroup off(false, "off"); }
  try {
    const WorkflowGroup outer(true, "configure");
    const WorkflowGroup inner(true, "download");
    throw std::runtime_error("the build failed");
  } catch (const std::runtime_error&) {
  }
  { const WorkflowGroup next(true, "pack"); }
  EXPECT_EQ(capture.text(), "::group::configure\n::endgroup::\n::group::pack\n::endgroup::\n");
}

// The step summary keeps what the file held; a file that cannot be opened
// is an Error naming it.
TEST(GithubActions, TheStepSummaryIsAppendedTo) {
  TempDir dir;
  const fs::path file = dir.path() / "summary.md";
  write_file(file, "# before\n");
  append_step_summary(file, "| a | b |\n|---|---|\n");
  append_step_summary(file, "more\n");
  EXPECT_EQ(read_file(file), "# before\n| a | b |\n|---|---|\nmore\n");
  try {
    append_step_summary(dir.path() / "missing" / "summary.md", "x");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("missing/summary.md"), std::string::npos)
        << error.what();
  }
}

}  // namespace
