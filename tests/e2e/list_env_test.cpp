// --list-env on the example tree through the built binary: both forms, what
// upstream's setup.py reads found by watching it, nothing written, stdout
// holding the listing alone, and doc/environment.md's table kept equal to the registry.
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;

namespace {

class ListEnvTest : public ExampleTreeTest {
 protected:
  void SetUp() override {
    for (const char* name : {"TRITON_WHEEL_NAME", "TRITON_BUILD_TD", "TRITON_BUILD_DISTRIBUTED",
                             "IS_MANYLINUX", "TRITON_PLUGIN_DIRS", "TRITON_APPEND_CMAKE_ARGS",
                             "TRITON_BUILD_PROTON", "TRITON_BUILD_WITH_CCACHE",
                             "TRITON_BUILD_WITH_CLANG_LLD", "TRITON_WHEEL_VERSION_SUFFIX"}) {
      env[name] = std::nullopt;
    }
  }
  nlohmann::ordered_json listing() {
    const auto result = host({"--list-env=json"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return parse_json(result.out);
  }
  static const nlohmann::ordered_json& row(const nlohmann::ordered_json& rows,
                                           const std::string& name) {
    for (const auto& entry : rows) {
      if (entry["name"] == name) {
        return entry;
      }
    }
    ADD_FAILURE() << name << " is not listed";
    return rows[0];
  }
};

TEST_F(ListEnvTest, JsonHasOneObjectPerVariableWithTheDocumentedKeys) {
  env["TRITON_WHEEL_NAME"] = "my_triton";
  const auto rows = listing();
  ASSERT_TRUE(rows.is_array());
  std::set<std::string> names;
  for (const auto& entry : rows) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : entry.items()) {
      keys.push_back(key);
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"name", "value", "default", "set_by", "read_by",
                                              "description"}));
    EXPECT_TRUE(names.insert(entry["name"].get<std::string>()).second) << entry["name"];
  }
  const auto& name = row(rows, "TRITON_WHEEL_NAME");
  EXPECT_EQ(name["value"], "my_triton");
  EXPECT_EQ(name["default"], "triton_ascend");
  EXPECT_EQ(name["set_by"], "user");
  // ascend-setup reads it for the kwargs, upstream's setup.py while it loads.
  EXPECT_EQ(name["read_by"], (nlohmann::ordered_json{"ascend-setup", "setup.py"}));
  const auto& td = row(rows, "TRITON_BUILD_TD");
  EXPECT_EQ(td["value"], "OFF");
  EXPECT_EQ(td["set_by"], "ascend-setup");
  const auto& tag = row(rows, "ASCENDNPU_IR_TAG");
  EXPECT_TRUE(tag["value"].is_null());
  EXPECT_TRUE(tag["default"].is_null());
  EXPECT_EQ(tag["set_by"], "unset");
  // Coverage variables with their defaults while coverage is off; the tool's own.
  EXPECT_EQ(row(rows, "LLTCOV_ROOTPATH")["default"], "/opt/covdata");
  EXPECT_EQ(row(rows, "lltcovRootpath")["default"], "/opt/covdata");
  EXPECT_EQ(row(rows, "ASCEND_SETUP_LOG_LEVEL")["default"], "info");
}

TEST_F(ListEnvTest, WhatSetupPyReadsWhileItLoadsIsFoundByWatchingIt) {
  // A variable no list anywhere knows, read by the tree's setup.py only.
  const fs::path setup_py = tree / "setup.py";
  write_file(setup_py, "import os\nASCEND_PROBE = os.getenv('ONLY_THIS_SETUP_PY_READS')\n" +
                           read_file(setup_py));
  env["ONLY_THIS_SETUP_PY_READS"] = "42";
  const auto rows = listing();
  const auto& probe = row(rows, "ONLY_THIS_SETUP_PY_READS");
  EXPECT_EQ(probe["read_by"], (nlohmann::ordered_json{"setup.py"}));
  EXPECT_EQ(probe["value"], "42");
  EXPECT_EQ(probe["set_by"], "user");
  EXPECT_EQ(row(rows, "TRITON_PLUGIN_DIRS")["read_by"], (nlohmann::ordered_json{"setup.py"}));
  // Reads of the libraries setup.py imports (setuptools, distutils) are not setup.py's.
  for (const auto& entry : rows) {
    EXPECT_NE(entry["name"], "SETUPTOOLS_USE_DISTUTILS");
  }
}

TEST_F(ListEnvTest, TableIsReadableAndNothingIsWritten) {
  const auto before = source_mtimes(tree);
  const auto result = run_host({"--list-env"}, tree, env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("TRITON_BUILD_TD"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("= OFF  [ascend-setup]"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find('{'), std::string::npos);
  EXPECT_EQ(source_mtimes(tree), before);
  EXPECT_FALSE(fs::exists(tree / "build/ascend-setup"));
  EXPECT_FALSE(fs::exists(tree / "dist"));
}

TEST_F(ListEnvTest, BadUtf8InARegistryVariableIsExitTwoNamingIt) {
  env["TRITON_APPEND_CMAKE_ARGS"] = "-DX=\xff";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--list-env"}, std::vector<std::string>{"--dump-kwargs"}}) {
    const auto result = run_host(args, tree, env);
    EXPECT_EQ(result.exit_code, ascend_setup::exit_code::usage) << result.err;
    EXPECT_NE(result.err.find("TRITON_APPEND_CMAKE_ARGS is not valid UTF-8"), std::string::npos)
        << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_TRUE(result.out.empty());
  }
  env["TRITON_APPEND_CMAKE_ARGS"] = std::nullopt;
  env["TRITON_WHEEL_NAME"] = "triton\xc3";
  const auto name = run_host({"--name"}, tree, env);
  EXPECT_EQ(name.exit_code, ascend_setup::exit_code::usage) << name.err;
  EXPECT_NE(name.err.find("TRITON_WHEEL_NAME is not valid UTF-8"), std::string::npos) << name.err;
}

// doc/environment.md's table is the registry's, for the built-in profile and the example
// tree; on a difference the expected table is printed for pasting.
TEST_F(ListEnvTest, EnvironmentDocTableEqualsTheRegistry) {
  // The in-tree layer's profile: every row of the setup_ascend.py profile's and its own (NPUIR,
  // BishengIR).
  write_file(tree / "third_party/ascend/build/setup_patch.py", "");
  // Given, so that their rows hold no figures of the machine the test runs on.
  env["MAX_JOBS"] = "2";
  env["TRITON_PARALLEL_LINK_JOBS"] = "1";
  std::string expected;
  for (const auto& entry : listing()) {
    std::string readers;
    for (const auto& reader : entry["read_by"]) {
      readers += (readers.empty() ? "" : ", ") + reader.get<std::string>();
    }
    const auto& fallback = entry["default"];
    expected += "| `" + entry["name"].get<std::string>() + "` | " +
                (fallback.is_null() ? std::string("-") : "`" + fallback.get<std::string>() + "`") +
                " | " + readers + " | " + entry["description"].get<std::string>() + " |\n";
  }
  expected = "| variable | default | read by | what for |\n|---|---|---|---|\n" + expected;
  const std::string doc = read_file(fs::path(EXAMPLE_TREE) / "../../doc/environment.md");
  const std::string begin = "<!-- env-table:begin -->\n";
  const auto from = doc.find(begin);
  const auto to = doc.find("<!-- env-table:end -->");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), expected)
      << "doc/environment.md's table should read:\n"
      << expected;
}

}  // namespace
