// The transaction's writes through symlinks: a symlinked file or directory on
// a staged file's way is followed when it leads inside the tree and refused,
// before anything is written, when it leads outside.
#include "base/tree/tree_transaction.hpp"

#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

class TreeTransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(tree / "python/triton/language/core.py", "core\n");
    write_file(outside / "backends/driver.py", "outside\n");
    fs::create_directories(journal);
  }
  // The Error staging `file` throws ("" when it throws none).
  std::string stage_error(TreeTransaction& transaction, const std::string& file,
                          std::optional<std::string> content) {
    try {
      transaction.stage(file, std::move(content), 0644);
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::bad_input);
      return error.what();
    }
    return "";
  }

  TempDir dir;
  fs::path tree = dir.path() / "tree";
  fs::path outside = dir.path() / "outside";
  fs::path journal = dir.path() / "journal";
};

TEST_F(TreeTransactionTest, SymlinkedDirectoryLeadingOutsideIsRefusedAndNothingIsWritten) {
  fs::create_directory_symlink(outside / "backends", tree / "python/triton/backends");
  TreeTransaction transaction(tree, journal);
  transaction.stage("python/triton/language/core.py", "patched\n", 0644);
  for (const std::optional<std::string>& content :
       {std::optional<std::string>("patched\n"), std::optional<std::string>()}) {
    const std::string message =
        stage_error(transaction, "python/triton/backends/driver.py", content);
    EXPECT_TRUE(contains(message,
                         "python/triton/backends/driver.py: its directory "
                         "python/triton/backends is a symlink to " +
                             (outside / "backends").string() + ", outside the tree"))
        << message;
    EXPECT_TRUE(contains(message, "nothing was written")) << message;
  }
  // A new file below the link, too.
  EXPECT_NE(stage_error(transaction, "python/triton/backends/new/file.py", "new\n"), "");
  EXPECT_EQ(read_file(outside / "backends/driver.py"), "outside\n");
  EXPECT_FALSE(fs::exists(outside / "backends/new"));
  EXPECT_EQ(read_file(tree / "python/triton/language/core.py"), "core\n");
}

TEST_F(TreeTransactionTest, SymlinkedDirectoryOfADirectoryLeadingOutsideIsRefused) {
  fs::create_directory_symlink(outside, tree / "third_party");
  TreeTransaction transaction(tree, journal);
  const std::string message = stage_error(transaction, "third_party/backends/driver.py", "x\n");
  EXPECT_TRUE(contains(message, "its directory third_party is a symlink")) << message;
  EXPECT_EQ(read_file(outside / "backends/driver.py"), "outside\n");
}

TEST_F(TreeTransactionTest, SymlinkedDirectoryLeadingInsideIsWrittenThroughAndStaysALink) {
  write_file(tree / "real/backends/driver.py", "inside\n");
  fs::create_directory_symlink("../../real/backends", tree / "python/triton/backends");
  TreeTransaction transaction(tree, journal);
  transaction.stage("python/triton/backends/driver.py", "patched\n", 0644);
  transaction.write();
  transaction.finish();
  EXPECT_TRUE(fs::is_symlink(tree / "python/triton/backends"));
  EXPECT_EQ(read_file(tree / "real/backends/driver.py"), "patched\n");
}

TEST_F(TreeTransactionTest, SymlinkedDirectoryLeadingInsideIsRolledBackThroughTheLink) {
  write_file(tree / "real/backends/driver.py", "inside\n");
  fs::create_directory_symlink(tree / "real/backends", tree / "python/triton/backends");
  {
    TreeTransaction transaction(tree, journal);
    transaction.stage("python/triton/backends/driver.py", "patched\n", 0644);
    transaction.write();
    EXPECT_EQ(read_file(tree / "real/backends/driver.py"), "patched\n");
  }  // not finished: rolled back
  EXPECT_EQ(read_file(tree / "real/backends/driver.py"), "inside\n");
  EXPECT_TRUE(fs::is_symlink(tree / "python/triton/backends"));
}

// The last component as before: a symlinked file leading outside is refused.
TEST_F(TreeTransactionTest, SymlinkedFileLeadingOutsideIsRefused) {
  fs::create_symlink(outside / "backends/driver.py", tree / "python/triton/language/driver.py");
  TreeTransaction transaction(tree, journal);
  const std::string message =
      stage_error(transaction, "python/triton/language/driver.py", "patched\n");
  EXPECT_TRUE(contains(message, "python/triton/language/driver.py is a symlink to")) << message;
  EXPECT_EQ(read_file(outside / "backends/driver.py"), "outside\n");
}

}  // namespace
