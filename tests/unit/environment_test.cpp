// The environment registry: reads through the table, flag semantics,
// defaults, the deprecated alias, UTF-8 checks and the listing.
#include "base/layer/environment.hpp"

#include "base/layer/profile.hpp"
#include "base/util/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

using namespace ascend_setup;

namespace {

class EnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  void clear() {
    for (const auto& entry : list_environment(profile, {})) {
      if (entry.name != "PATH") {
        unset_env(entry.name);
      }
    }
  }
  const EnvEntry& row(const std::vector<EnvEntry>& rows, const std::string& name) {
    auto found = std::find_if(rows.begin(), rows.end(),
                              [&](const EnvEntry& entry) { return entry.name == name; });
    if (found == rows.end()) {
      ADD_FAILURE() << name << " is not listed";
      return rows.front();
    }
    return *found;
  }
  Profile profile = parse_profile(builtin_profile_text(), "built-in profile");
};

TEST_F(EnvironmentTest, NamesComeFromTheProfile) {
  EXPECT_EQ(env_name(EnvVar::distributed, &profile), "TRITON_BUILD_TD");
  profile.switches.distributed = "RENAMED_TD";
  EXPECT_EQ(env_name(EnvVar::distributed, &profile), "RENAMED_TD");
  EXPECT_EQ(env_name(EnvVar::log_level, nullptr), "ASCEND_SETUP_LOG_LEVEL");
}

TEST_F(EnvironmentTest, DefaultsNeverOverrideWhatTheUserSet) {
  ::setenv("TRITON_WHEEL_NAME", "mine", 1);  // as a user would
  ::setenv("TRITON_BUILD_PROTON", "", 1);
  const auto set = prepare_environment(profile);
  EXPECT_EQ(env_value(EnvVar::wheel_name, &profile), "mine");
  EXPECT_EQ(std::string(std::getenv("TRITON_BUILD_PROTON")), "");
  EXPECT_EQ(std::string(std::getenv("TRITON_BUILD_TD")), "OFF");
  EXPECT_EQ(set,
            (std::vector<std::string>{"TRITON_BUILD_WITH_CCACHE", "TRITON_BUILD_WITH_CLANG_LLD",
                                      "TRITON_BUILD_TD", "TRITON_APPEND_CMAKE_ARGS"}));
}

TEST_F(EnvironmentTest, FlagsFollowUpstreamCheckEnvFlag) {
  for (const char* yes : {"ON", "on", "1", "yes", "TRUE", "y", "Y"}) {
    set_env("TRITON_BUILD_TD", yes);
    EXPECT_TRUE(env_on(EnvVar::distributed, profile)) << yes;
  }
  for (const char* no : {"OFF", "0", "", "no", "2", "enabled"}) {
    set_env("TRITON_BUILD_TD", no);
    EXPECT_FALSE(env_on(EnvVar::distributed, profile)) << no;
  }
  unset_env("TRITON_BUILD_TD");
  EXPECT_FALSE(env_on(EnvVar::distributed, profile));  // default OFF
}

TEST_F(EnvironmentTest, SwitchesAcceptOneOnTrueOnly) {
  for (const char* yes : {"1", "on", "ON", "true", "True"}) {
    set_env("TRITON_DEV_MODE", yes);
    EXPECT_TRUE(env_on(EnvVar::dev_mode, profile)) << yes;
  }
  for (const char* no : {"yes", "y", "0", "", "off"}) {
    set_env("TRITON_DEV_MODE", no);
    EXPECT_FALSE(env_on(EnvVar::dev_mode, profile)) << no;
  }
}

TEST_F(EnvironmentTest, DeprecatedAliasIsCarriedOverUnlessTheNewNameIsSet) {
  set_env("TRITON_BUILD_DISTRIBUTED", "ON");
  prepare_environment(profile);
  EXPECT_TRUE(env_on(EnvVar::distributed, profile));
  unset_env("TRITON_BUILD_TD");
  set_env("TRITON_BUILD_TD", "OFF");
  prepare_environment(profile);
  EXPECT_FALSE(env_on(EnvVar::distributed, profile));  // the new name wins
}

TEST_F(EnvironmentTest, InvalidUtf8IsAUsageErrorNamingTheVariable) {
  set_env("TRITON_APPEND_CMAKE_ARGS", "-DX=\xff\xfe");
  try {
    prepare_environment(profile);
    FAIL() << "accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(error.what()).find("TRITON_APPEND_CMAKE_ARGS is not valid UTF-8"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(EnvironmentTest, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8("plain -DX=1"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));              // truncated
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8(std::string("a\0b", 3)));
}

TEST_F(EnvironmentTest, ListingSaysWhoSetAndWhoReadsEachVariable) {
  ::setenv("TRITON_WHEEL_NAME", "mine", 1);  // as a user would
  prepare_environment(profile);
  ::setenv("MAX_JOBS", "3", 1);  // as a user would, outside the registry
  const auto rows = list_environment(profile, {"MAX_JOBS", "TRITON_WHEEL_NAME"});
  const EnvEntry& name = row(rows, "TRITON_WHEEL_NAME");
  EXPECT_EQ(name.value, "mine");
  EXPECT_EQ(name.default_value, "triton_ascend");
  EXPECT_EQ(name.set_by, "user");
  EXPECT_EQ(name.read_by, (std::vector<std::string>{"ascend-setup", "setup.py"}));
  const EnvEntry& ccache = row(rows, "TRITON_BUILD_WITH_CCACHE");
  EXPECT_EQ(ccache.set_by, "ascend-setup");
  EXPECT_EQ(ccache.value, "true");
  const EnvEntry& jobs = row(rows, "MAX_JOBS");
  // A registry row now: ascend-setup sets it from the machine when unset.
  EXPECT_EQ(jobs.read_by, (std::vector<std::string>{"ascend-setup", "setup.py"}));
  EXPECT_EQ(jobs.set_by, "user");
  EXPECT_FALSE(jobs.default_value.has_value());
  EXPECT_NE(jobs.description.find("memory / 2.5 GiB"), std::string::npos) << jobs.description;
  const EnvEntry& tag = row(rows, "ASCENDNPU_IR_TAG");
  EXPECT_EQ(tag.set_by, "unset");
  EXPECT_FALSE(tag.value.has_value());
  // Coverage variables are listed, with their defaults, while coverage is off.
  EXPECT_EQ(row(rows, "HITEST_HOME").default_value, "/opt/hitest/linux_avatar_x86_64");
  EXPECT_EQ(row(rows, "HitestHome").default_value, "/opt/hitest/linux_avatar_x86_64");
  EXPECT_EQ(row(rows, "HITEST_COVSTUB_ROOT_DIR").default_value,
            "/opt/hitest/linux_avatar_x86_64/apache-tomcat-8.0.39/webapps/datasource/"
            "Container_Default/base");
  EXPECT_EQ(row(rows, "ASCEND_SETUP_LOG_LEVEL").default_value, "info");
  EXPECT_EQ(row(rows, "TRITON_BUILD_DISTRIBUTED").read_by,
            std::vector<std::string>{"ascend-setup"});
  ::unsetenv("MAX_JOBS");
}

// What --list-env shows of a secret is masked (util/shown_url.hpp); the
// environment a tool is given keeps the real value.
TEST_F(EnvironmentTest, ListingShowsSecretsMaskedAndTheEnvironmentKeepsThem) {
  ::setenv("https_proxy", "alice:pw-1@proxy.corp:3128", 1);  // curl's way: no scheme
  ::setenv("HTTPS_PROXY", "http://tok-2@proxy.corp:3128", 1);
  ::setenv("ASCEND_SETUP_COMPILE_CACHE", "redis://:pw-3@cache.ci|bearer-token=tok-4", 1);
  set_env("CCACHE_REMOTE_STORAGE", "redis://:pw-3@cache.ci|bearer-token=tok-4");
  ::setenv("GITHUB_TOKEN", "tok-5", 1);
  ::setenv("PIP_INDEX_URL", "https://bob:pw-6@index.corp/simple", 1);
  const auto rows = list_environment(profile, {"GITHUB_TOKEN", "PIP_INDEX_URL"});
  EXPECT_EQ(row(rows, "https_proxy").value, "alice:****@proxy.corp:3128");
  EXPECT_EQ(row(rows, "HTTPS_PROXY").value, "http://****@proxy.corp:3128");
  EXPECT_EQ(row(rows, "ASCEND_SETUP_COMPILE_CACHE").value,
            "redis://:****@cache.ci|bearer-token=****");
  EXPECT_EQ(row(rows, "CCACHE_REMOTE_STORAGE").value, "redis://:****@cache.ci|bearer-token=****");
  EXPECT_EQ(row(rows, "GITHUB_TOKEN").value, "****");
  EXPECT_EQ(row(rows, "PIP_INDEX_URL").value, "https://bob:****@index.corp/simple");
  const std::string shown = to_table(rows) + to_json(rows).dump();
  for (const char* secret : {"pw-1", "tok-2", "pw-3", "tok-4", "tok-5", "pw-6"}) {
    EXPECT_EQ(shown.find(secret), std::string::npos) << secret << " shows";
  }
  EXPECT_STREQ(std::getenv("https_proxy"), "alice:pw-1@proxy.corp:3128");
  EXPECT_STREQ(std::getenv("CCACHE_REMOTE_STORAGE"), "redis://:pw-3@cache.ci|bearer-token=tok-4");
  ::unsetenv("GITHUB_TOKEN");
  ::unsetenv("PIP_INDEX_URL");
}

}  // namespace
