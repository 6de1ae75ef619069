// The profile's [patch_points]: validation, and the check against a symbol
// table (the same check runs on setup.py's source and on the loaded module).
#include "host/layer/patch_points.hpp"

#include "base/layer/profile.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

Profile profile_with(const std::string& from, const std::string& to) {
  return parse_profile(replace_once(std::string(builtin_profile_text()), from, to), "p.toml");
}

std::string parse_error(const std::string& from, const std::string& to) {
  try {
    profile_with(from, to);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// The example tree's names, as setup.py defines them.
std::map<std::string, SymbolInfo> upstream_names() {
  return {{"BackendInstaller", {"class", std::nullopt}},
          {"backends", {"variable", std::nullopt}},
          {"get_llvm_package_info", {"function", std::vector<std::string>{}}},
          {"Package",
           {"class", std::vector<std::string>{"package", "name", "url", "include_flag", "lib_flag",
                                              "syspath_var_name", "sym_name"}}},
          {"get_package_dirs", {"function", std::vector<std::string>{}}},
          {"get_packages", {"function", std::vector<std::string>{}}},
          {"add_links", {"function", std::vector<std::string>{"external_only"}}},
          {"update_symlink", {"function", std::vector<std::string>{"link_path", "source_path"}}},
          {"CMakeBuild", {"class", std::nullopt}},
          {"download_and_copy_dependencies", {"function", std::vector<std::string>{}}},
          {"get_cmake_dir", {"imported", std::nullopt}},
          {"get_entry_points", {"function", std::vector<std::string>{}}}};
}

SymbolLookup lookup(const std::map<std::string, SymbolInfo>& names) {
  return [names](const std::string& owner, const std::string& name) -> std::optional<SymbolInfo> {
    if (owner == "BackendInstaller" && name == "prepare") {
      return SymbolInfo{"method", std::vector<std::string>{"backend_name", "backend_src_dir"}};
    }
    if (owner == "CMakeBuild" && name == "build_extension") {
      return SymbolInfo{"method", std::vector<std::string>{"self", "ext"}};
    }
    const auto found = owner.empty() ? names.find(name) : names.end();
    return found == names.end() ? std::nullopt : std::optional(found->second);
  };
}

}  // namespace

TEST(PatchPoints, BuiltInProfileNamesEveryOverridesSymbols) {
  const Profile profile = parse_profile(builtin_profile_text(), "built-in");
  std::set<std::string> overrides;
  for (const auto& point : profile.patch_points) {
    overrides.insert(point.override_name);
  }
  EXPECT_EQ(overrides,
            (std::set<std::string>{"BuildWheel", "CMakeBuild", "backends", "distributed_package",
                                   "get_llvm_package_info", "kwargs"}));
  const PatchPointCheck check = check_patch_points(profile, lookup(upstream_names()));
  EXPECT_TRUE(check.findings.empty()) << check.findings.front().message;
  EXPECT_EQ(check.resolved.at("BackendInstaller.prepare"), "prepare");
}

TEST(PatchPoints, MalformedEntriesNameTheKey) {
  EXPECT_NE(parse_error("{ id = \"backends\", kind = \"variable\" }",
                        "{ id = \"backends\", kind = \"list\" }")
                .find("key 'patch_points.backends.kind': expected function, class, variable or "
                      "method"),
            std::string::npos);
  EXPECT_NE(parse_error("{ id = \"backends\", kind = \"variable\" }",
                        "{ id = \"backends\", kind = \"variable\", typo = 1 }")
                .find("'patch_points.backends.typo': unknown key"),
            std::string::npos);
  EXPECT_NE(parse_error("{ id = \"BackendInstaller\", kind = \"class\" },", "")
                .find("the method BackendInstaller.prepare needs its class BackendInstaller"),
            std::string::npos);
}

TEST(PatchPoints, EveryDriftReportedOnceWithItsOverrides) {
  auto names = upstream_names();
  names.erase("get_llvm_package_info");
  names["Package"].kind = "function";
  names["add_links"].params = std::vector<std::string>{"only_external"};
  const PatchPointCheck check =
      check_patch_points(parse_profile(builtin_profile_text(), "b"), lookup(names));
  ASSERT_EQ(check.findings.size(), 3u);
  EXPECT_EQ(check.findings[0].kind, "missing-parameter");
  EXPECT_EQ(check.findings[0].subject, "add_links.external_only");
  EXPECT_EQ(check.findings[0].overrides, "BuildWheel, distributed_package");
  EXPECT_EQ(check.findings[1].kind, "missing");
  EXPECT_EQ(check.findings[1].subject, "get_llvm_package_info");
  EXPECT_EQ(check.findings[2].message,
            "Package is a function in setup.py; the get_llvm_package_info override needs a class");
}

TEST(PatchPoints, AliasResolvesARename) {
  auto names = upstream_names();
  names["get_entry_points_v2"] = names.at("get_entry_points");
  names.erase("get_entry_points");
  const Profile profile = profile_with(
      "{ id = \"get_entry_points\", kind = \"function\" }",
      "{ id = \"get_entry_points\", kind = \"function\", aliases = [\"get_entry_points_v2\"] }");
  const PatchPointCheck check = check_patch_points(profile, lookup(names));
  EXPECT_TRUE(check.findings.empty());
  EXPECT_EQ(check.resolved.at("get_entry_points"), "get_entry_points_v2");
}
