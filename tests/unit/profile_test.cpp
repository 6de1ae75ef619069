#include "base/layer/profile.hpp"

#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <tuple>

using namespace ascend_setup;

namespace {
std::string builtin() { return std::string(builtin_profile_text()); }

std::string error_of(const std::string& text) {
  try {
    parse_profile(text, "p.toml");
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::bad_input);
    return error.what();
  }
  ADD_FAILURE() << "profile was accepted";
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}
}  // namespace

TEST(Profile, BuiltInHoldsTheLayerConstants) {
  const Profile p = parse_profile(builtin_profile_text(), "built-in profile");
  EXPECT_EQ(p.backend_name, "ascend");
  ASSERT_EQ(p.env_defaults.size(), 6u);
  EXPECT_EQ(p.env_defaults[3],
            (std::pair<std::string, std::string>{"TRITON_WHEEL_NAME", "triton_ascend"}));
  EXPECT_EQ(p.env_defaults[4], (std::pair<std::string, std::string>{"TRITON_BUILD_TD", "OFF"}));
  EXPECT_EQ(p.switches.distributed, "TRITON_BUILD_TD");
  EXPECT_EQ(p.switches.distributed_aliases, std::vector<std::string>{"TRITON_BUILD_DISTRIBUTED"});
  EXPECT_EQ(p.build.distributed_arg, "-DTRITON_BUILD_TD");
  EXPECT_EQ(p.metadata.default_name, "triton_ascend");
  EXPECT_EQ(p.mode_rule, Profile::ModeRule::manylinux);
  EXPECT_EQ(p.distributed.directory, "third_party/ascend/Triton-distributed-ascend");
  EXPECT_EQ(p.distributed.url, "https://gitcode.com/Ascend/Triton-distributed-ascend.git");
  EXPECT_EQ(p.distributed.branch, "master");
  EXPECT_EQ(p.distributed.pin, "d2ac268c7ab4dc09865ed51638104ee1b97dc460");
  EXPECT_EQ(p.metadata.install_requires.size(), 11u);
  EXPECT_EQ(p.metadata.install_requires_by_arch.at("arm").size(), 1u);
  EXPECT_EQ(p.llvm.no_patch_hash, "00000000");
  EXPECT_EQ(p.coverage.set.size(), 27u);
  EXPECT_EQ(p.build.tools.size(), 2u);
  EXPECT_EQ(p.distributed.package, "triton_dist");
}

// NPUIR and BishengIR are the in-tree layer's; the setup_ascend.py profile
// (`triton-ascend-3.6.0.toml`) has neither.
TEST(Profile, BuiltInHoldsTheNpuirAndBishengirValues) {
  const Profile entry = parse_profile(builtin_profile_text(), "built-in profile");
  EXPECT_FALSE(entry.npuir.present);
  EXPECT_FALSE(entry.bishengir.present);
  const Profile p = parse_profile(test_support::in_tree_profile_text(), "built-in profile");
  EXPECT_TRUE(p.npuir.present);
  EXPECT_EQ(p.env_defaults[5], (std::pair<std::string, std::string>{"TRITON_BUILD_NPUIR", "OFF"}));
  EXPECT_EQ(p.npuir.switch_name, "TRITON_BUILD_NPUIR");
  EXPECT_EQ(p.npuir.directory, "third_party/ascend/AscendNPU-IR");
  EXPECT_EQ(p.npuir.nested_directory, "third-party");
  EXPECT_EQ(p.npuir.fetch_attempts, 5);
  EXPECT_EQ(p.npuir.fetch_retry_seconds, 10);
  EXPECT_EQ(p.npuir.min_free_gib, 30);
  EXPECT_EQ(p.npuir.job_memory_mib, 2560);
  EXPECT_EQ(p.npuir.max_jobs, 32);
  EXPECT_EQ(p.npuir.cxx_flags, (std::vector<std::string>{"-include", "cstdint", "-Wno-error"}));
  EXPECT_EQ(p.npuir.command.size(), 19u);
  EXPECT_EQ(p.npuir.artifacts.back(), "lib/*.bc");
  EXPECT_EQ(p.bishengir.path_env, "TRITON_ASCEND_BISHENGIR_PATH");
  EXPECT_EQ(p.bishengir.destination, "triton/backends/ascend/backend/bishengir");
  EXPECT_EQ(p.bishengir.required,
            (std::vector<std::string>{"bin/bishengir-compile", "bin/bishengir-opt", "lib/"}));
}

TEST(Profile, NpuirLimitsAreChecked) {
  for (const auto& [from, to, key] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"fetch_attempts = 5", "fetch_attempts = 0", "npuir.fetch_attempts"},
           {"fetch_retry_seconds = 10", "fetch_retry_seconds = -1", "npuir.fetch_retry_seconds"},
           {"min_free_gib = 30", "min_free_gib = -30", "npuir.min_free_gib"},
           {"max_jobs = 32", "max_jobs = 0", "npuir.max_jobs"},
           {"job_memory_mib = 2560", "job_memory_mib = 0", "npuir.job_memory_mib"}}) {
    const std::string message =
        error_of(replace(std::string(test_support::in_tree_profile_text()), from, to));
    EXPECT_NE(message.find("key '" + key + "': expected an integer from "), std::string::npos)
        << message;
  }
  const std::string text(test_support::in_tree_profile_text());
  const auto command = text.find("command = [");
  ASSERT_NE(command, std::string::npos);
  const std::string empty =
      text.substr(0, command) + "command = []" + text.substr(text.find(']', command) + 1);
  EXPECT_NE(error_of(empty).find("key 'npuir.command': expected the build's program"),
            std::string::npos);
}

TEST(Profile, MalformedTomlNamesFileAndLine) {
  const std::string message = error_of("[profile]\nname = \"x\"\n[environment\n");
  EXPECT_TRUE(std::regex_search(message, std::regex(R"(^p\.toml:3: malformed TOML)"))) << message;
}

TEST(Profile, WrongTypeNamesFileLineAndKey) {
  const std::string text = replace(builtin(), "rev_length = 8", "rev_length = \"eight\"");
  const std::string message = error_of(text);
  EXPECT_NE(message.find("key 'llvm.rev_length': expected an integer"), std::string::npos)
      << message;
  EXPECT_TRUE(std::regex_search(message, std::regex(R"(^p\.toml:\d+: )"))) << message;
}

TEST(Profile, NumbersOutOfRangeNameTheKey) {
  for (const auto& [from, to, key] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"rev_length = 8", "rev_length = -1", "llvm.rev_length"},
           {"rev_length = 8", "rev_length = 99999999999", "llvm.rev_length"},
           {"git_hash_length = 8", "git_hash_length = 0", "version.git_hash_length"},
           {"patch_hash_length = 8", "patch_hash_length = 65", "llvm.patch_hash_length"},
           {"ubuntu_min_glibc = 229", "ubuntu_min_glibc = -229", "llvm.ubuntu_min_glibc"}}) {
    const std::string message = error_of(replace(builtin(), from, to));
    EXPECT_NE(message.find("key '" + key + "': expected an integer from "), std::string::npos)
        << message;
  }
}

// [llvm] sha256: package name -> the archive's SHA-256, optional; each
// value 64 lowercase hex digits, else the line and key of the bad one.
TEST(Profile, LlvmSha256PinsArePackageNamesToDigests) {
  EXPECT_TRUE(parse_profile(builtin(), "p.toml").llvm.sha256.empty());
  const std::string digest(64, 'a');
  const std::string pinned =
      replace(builtin(), "ubuntu_min_glibc = 229",
              "ubuntu_min_glibc = 229\nsha256 = { \"llvm-x-ubuntu-x64\" = \"" + digest + "\" }");
  EXPECT_EQ(parse_profile(pinned, "p.toml").llvm.sha256,
            (std::map<std::string, std::string>{{"llvm-x-ubuntu-x64", digest}}));
  for (const std::string& bad :
       {std::string(63, 'a'), std::string(64, 'A'), std::string(64, 'g')}) {
    const std::string message = error_of(replace(
        builtin(), "ubuntu_min_glibc = 229",
        "ubuntu_min_glibc = 229\n[llvm.sha256]\nfine = \"" + digest + "\"\nbad = \"" + bad + "\""));
    EXPECT_TRUE(std::regex_search(
        message, std::regex(R"(^p\.toml:\d+: key 'llvm\.sha256\.bad': expected a SHA-256: 64 )"
                            R"(lowercase hex digits$)")))
        << bad << ": " << message;
  }
}

// One limit per key, said the same way with the line wherever the value is
// out of it (git_hash_length once had two limits and two messages).
TEST(Profile, EveryOutOfRangeValueGetsTheKeysOneLimitAndLine) {
  for (const char* value : {"0", "2", "3", "41"}) {
    const std::string message = error_of(
        replace(builtin(), "git_hash_length = 8", std::string("git_hash_length = ") + value));
    EXPECT_TRUE(std::regex_search(
        message,
        std::regex(
            R"(^p\.toml:\d+: key 'version\.git_hash_length': expected an integer from 4 to 40$)")))
        << value << ": " << message;
  }
  EXPECT_EQ(
      parse_profile(replace(builtin(), "git_hash_length = 8", "git_hash_length = 4"), "p.toml")
          .version.git_hash_length,
      4);
  const std::string pin = error_of(replace(builtin(), "pin = \"d2ac268c", "pin = \"master"));
  EXPECT_TRUE(std::regex_search(pin, std::regex(R"(^p\.toml:\d+: key 'distributed\.pin')"))) << pin;
}

TEST(Profile, MissingAndUnknownKeysAreErrors) {
  EXPECT_NE(error_of(replace(builtin(), "url = \"https://gitcode", "urll = \"https://gitcode"))
                .find("'metadata.url'"),
            std::string::npos);
  EXPECT_NE(
      error_of(replace(builtin(), "[backend]\n", "[backend]\nnmae = \"x\"\n")).find("unknown key"),
      std::string::npos);
  EXPECT_NE(error_of(replace(builtin(), "arm = [\"triton", "armv9 = [\"triton"))
                .find("no entry for architecture 'arm'"),
            std::string::npos);
}

TEST(Profile, ModeRuleAndPinAreChecked) {
  const std::string rule = error_of(replace(builtin(), "rule = \"manylinux\"", "rule = \"tag\""));
  EXPECT_NE(rule.find("key 'mode.rule': expected \"manylinux\" or \"branch\""), std::string::npos)
      << rule;
  EXPECT_TRUE(std::regex_search(rule, std::regex(R"(^p\.toml:\d+: )"))) << rule;
  const Profile branch =
      parse_profile(replace(builtin(), "rule = \"manylinux\"", "rule = \"branch\""), "p.toml");
  EXPECT_EQ(branch.mode_rule, Profile::ModeRule::branch);
  EXPECT_NE(
      error_of(replace(builtin(), "pin = \"d2ac268c", "pin = \"master")).find("'distributed.pin'"),
      std::string::npos);
}

// The 3.8.0 line's fields: each keeps today's results when absent, and a
// value that cannot work is an error at its key.
TEST(Profile, TheLine380FieldsDefaultToTodayAndAreChecked) {
  const Profile today = parse_profile(builtin_profile_text(), "built-in profile");
  EXPECT_TRUE(today.llvm.resolved_by_setup_py());
  EXPECT_EQ(today.llvm.hash_key, "");
  EXPECT_EQ(today.build.clangxx_arg, "");
  EXPECT_EQ(today.build.version_arg, "");
  EXPECT_EQ(today.wheel.stable_abi_env, "");
  for (const char* file : {"triton-ascend-3.8.0.toml", "triton-ascend-3.8.0-in-tree.toml"}) {
    const Profile line = parse_profile(builtin_profile_text_of(file), file);
    EXPECT_EQ(line.upstream.version, "3.8.0") << file;
    EXPECT_EQ(line.llvm.hash_file, "cmake/llvm-info.json") << file;
    EXPECT_EQ(line.wheel.stable_abi_tag, "cp312-abi3") << file;
    ASSERT_EQ(line.patches.nested.size(), 1u) << file;
    EXPECT_EQ(line.patches.nested[0].file, "npuir_adapter_to_llvm_24.patch") << file;
    EXPECT_TRUE(line.patches.nested[0].crlf_to_lf) << file;
    EXPECT_EQ(line.distributed.pin, "7786ae06d5cf16fc232d3ccfeb4a18f5d6a9e26e") << file;
  }
  const std::string outside = error_of(
      replace(builtin(), "hash_file = \"cmake/llvm-hash.txt\"",
              "hash_file = \"cmake/llvm-hash.txt\"\nresolved_in = \"../build_helpers.py\""));
  EXPECT_NE(outside.find("'llvm.resolved_in'"), std::string::npos) << outside;
  const std::string half = error_of(
      replace(builtin(), "linux_wheel_glob = \"*-linux_*.whl\"",
              "linux_wheel_glob = \"*-linux_*.whl\"\nstable_abi_env = \"TRITON_STABLE_ABI\""));
  EXPECT_NE(half.find("'wheel.stable_abi_tag'"), std::string::npos) << half;
  const std::string no_dash =
      error_of(replace(builtin(), "linux_wheel_glob = \"*-linux_*.whl\"",
                       "linux_wheel_glob = \"*-linux_*.whl\"\nstable_abi_env = \"S\"\n"
                       "stable_abi_tag = \"cp312abi3\""));
  EXPECT_NE(no_dash.find("\"<python tag>-<abi tag>\""), std::string::npos) << no_dash;
}

TEST(Profile, ArchitectureAliases) {
  const Profile p = parse_profile(builtin_profile_text(), "built-in profile");
  for (const char* machine : {"x86_64", "amd64", "i386", "i686"}) {
    EXPECT_EQ(architecture_key(p, machine), "x86_64");
  }
  for (const char* machine : {"arm64", "aarch64", "armv7l", "armv8l", "arm"}) {
    EXPECT_EQ(architecture_key(p, machine), "arm");
  }
  try {
    architecture_key(p, "riscv64");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("unsupported architecture 'riscv64'"),
              std::string::npos);
  }
}
