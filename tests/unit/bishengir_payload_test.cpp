// The BishengIR payload: its source, its check, the staged copies that
// replace a directory whole (symlinks kept), the artifacts' collection.
#include "base/npuir/bishengir_payload.hpp"

#include "base/layer/profile.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ascend_setup;
using namespace test_support;

namespace {

const std::vector<std::string> kRequired = {"bin/bishengir-compile", "bin/bishengir-opt", "lib/"};

fs::path make_payload(const fs::path& dir) {
  write_file(dir / "bin/bishengir-compile", "compile\n");
  write_file(dir / "bin/bishengir-opt.1", "opt\n");
  fs::create_symlink("bishengir-opt.1", dir / "bin/bishengir-opt");
  write_file(dir / "lib/a.bc", "a\n");
  return dir;
}

// Restores a variable on destruction.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
    }
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(BishengirPayload, SourceIsTheVariableElseTheTreesWithTheSwitchElseNone) {
  const Profile profile = parse_profile(test_support::in_tree_profile_text(), "built-in");
  ScopedEnv path("TRITON_ASCEND_BISHENGIR_PATH", nullptr);
  ScopedEnv npuir("TRITON_BUILD_NPUIR", "OFF");
  EXPECT_FALSE(bishengir_payload_source("/t", profile));
  ScopedEnv on("TRITON_BUILD_NPUIR", "ON");
  EXPECT_EQ(bishengir_payload_source("/t", profile),
            fs::path("/t/third_party/ascend/backend/bishengir"));
  ScopedEnv given("TRITON_ASCEND_BISHENGIR_PATH", "/payload");
  EXPECT_EQ(bishengir_payload_source("/t", profile), fs::path("/payload"));
}

TEST(BishengirPayload, MissingPartsAreNamedInOrder) {
  TempDir dir;
  write_file(dir.path() / "bin/bishengir-opt", "");
  write_file(dir.path() / "lib", "a file, not a directory");
  EXPECT_EQ(missing_payload_parts(dir.path(), kRequired),
            (std::vector<std::string>{"bin/bishengir-compile", "lib/"}));
  try {
    install_bishengir_payload(dir.path(), dir.path() / "out", kRequired, "X", test_writer_lock());
    ADD_FAILURE() << "accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::bad_input);
    EXPECT_EQ(std::string(error.what()), "the BishengIR payload " + dir.path().string() +
                                             " (X) lacks bin/bishengir-compile, lib/");
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

TEST(BishengirPayload, CopyKeepsSymlinksAndReplacesWhatWasThere) {
  TempDir dir;
  const fs::path source = make_payload(dir.path() / "payload");
  const fs::path target = dir.path() / "build/lib/bishengir";
  write_file(target / "bin/stale", "old\n");
  install_bishengir_payload(source, target, kRequired, "X", test_writer_lock());
  EXPECT_TRUE(fs::is_symlink(target / "bin/bishengir-opt"));
  EXPECT_EQ(fs::read_symlink(target / "bin/bishengir-opt"), "bishengir-opt.1");
  EXPECT_EQ(read_file(target / "lib/a.bc"), "a\n");
  EXPECT_FALSE(fs::exists(target / "bin/stale"));
  // Nothing staged is left beside it.
  for (const auto& entry : fs::directory_iterator(target.parent_path())) {
    EXPECT_EQ(entry.path().filename(), "bishengir");
  }
}

TEST(BishengirPayload, ArtifactsAreCollectedByNameAndPattern) {
  TempDir dir;
  const fs::path output = dir.path() / "bishengir-output";
  write_file(output / "bin/tool", "t\n");
  fs::permissions(output / "bin/tool", fs::perms::owner_exec, fs::perm_options::add);
  write_file(output / "lib/x.bc", "x\n");
  write_file(output / "lib/y.bc", "y\n");
  write_file(output / "lib/z.txt", "z\n");
  const fs::path target = dir.path() / "tree/bishengir";
  write_file(target / "lib/old.bc", "old\n");
  collect_artifacts(output, {"bin/tool", "lib/*.bc"}, target, test_writer_lock());
  EXPECT_TRUE((fs::status(target / "bin/tool").permissions() & fs::perms::owner_exec) !=
              fs::perms::none);
  EXPECT_TRUE(fs::exists(target / "lib/x.bc"));
  EXPECT_TRUE(fs::exists(target / "lib/y.bc"));
  EXPECT_FALSE(fs::exists(target / "lib/z.txt"));
  EXPECT_FALSE(fs::exists(target / "lib/old.bc"));
}

TEST(BishengirPayload, AnArtifactTheBuildDidNotWriteKeepsTheOldPayload) {
  TempDir dir;
  const fs::path output = dir.path() / "out";
  write_file(output / "bin/tool", "t\n");
  const fs::path target = dir.path() / "bishengir";
  write_file(target / "lib/old.bc", "old\n");
  for (const std::vector<std::string>& artifacts :
       {std::vector<std::string>{"bin/tool", "bin/missing"},
        std::vector<std::string>{"bin/tool", "lib/*.bc"}}) {
    try {
      collect_artifacts(output, artifacts, target, test_writer_lock());
      ADD_FAILURE() << "accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.exit_code(), exit_code::python_error);
      EXPECT_EQ(std::string(error.what()),
                "the NPUIR build wrote no " + (output / artifacts[1]).string());
    }
    EXPECT_EQ(read_file(target / "lib/old.bc"), "old\n");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 2);
  }
}
