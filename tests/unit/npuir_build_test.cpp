// The Python-free pieces of the NPUIR build: the job count, the disk check,
// the build command, the compiler wrapper (run for real).
#include "base/npuir/npuir_build.hpp"

#include "base/layer/profile.hpp"
#include "base/process/process.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
using namespace test_support;

namespace {

Profile::Npuir builtin_npuir() {
  return parse_profile(test_support::in_tree_profile_text(), "built-in").npuir;
}

JobLimits machine(double cpus, std::uint64_t memory) {
  JobLimits limits;
  limits.cpus = cpus;
  limits.cpu_source = "test";
  limits.memory = memory;
  limits.memory_source = "test";
  return limits;
}



}  // namespace

TEST(NpuirBuild, JobsAreTheSmallerOfCpusAndMemoryPerJob) {
  const Profile::Npuir npuir = builtin_npuir();
  EXPECT_EQ(npuir_job_count(std::nullopt, machine(320, 32 * GiB), npuir).jobs, 12);  // 32/2.5
  EXPECT_EQ(npuir_job_count(std::nullopt, machine(4, 64 * GiB), npuir).jobs, 4);
  EXPECT_EQ(npuir_job_count(std::nullopt, machine(2.5, 64 * GiB), npuir).jobs, 2);
  EXPECT_EQ(npuir_job_count(std::nullopt, machine(8, 1 * GiB), npuir).jobs, 1);  // at least one
  const NpuirJobs capped = npuir_job_count(std::nullopt, machine(320, 2048 * GiB), npuir);
  EXPECT_EQ(capped.jobs, 32);
  EXPECT_NE(capped.reason.find("at most 32) = 32"), std::string::npos) << capped.reason;
}

TEST(NpuirBuild, MaxJobsSetByTheUserWins) {
  const Profile::Npuir npuir = builtin_npuir();
  EXPECT_EQ(npuir_job_count("48", machine(2, 4 * GiB), npuir).jobs, 48);
  EXPECT_EQ(npuir_job_count(" 48\n", machine(2, 4 * GiB), npuir).jobs, 48);
  // A 20-digit count was a std::out_of_range from std::stoi; "+4" and " 4 2"
  // are not whole numbers either.
  for (const char* bad :
       {"", "0", "-3", "four", "2x", "+4", "4 2", "99999999999", "99999999999999999999", "60001"}) {
    try {
      npuir_job_count(std::string(bad), machine(2, 4 * GiB), npuir);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.exit_code(), exit_code::usage);
      EXPECT_NE(std::string(error.what()).find("MAX_JOBS=" + std::string(bad)), std::string::npos);
    }
  }
}

TEST(NpuirBuild, FreeSpaceBelowTheThresholdSaysWhatIsFree) {
  EXPECT_NO_THROW(check_free_space("/t", 30 * GiB, 30));
  EXPECT_NO_THROW(check_free_space("/t", 0, 0));
  try {
    check_free_space("/t", 3 * GiB, 30);
    ADD_FAILURE() << "accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::bad_input);
    EXPECT_EQ(std::string(error.what()),
              "the NPUIR build needs 30 GiB free on the disk of /t, and 3.0 GiB is free: make "
              "room, or build without it");
  }
}

TEST(NpuirBuild, CommandHasThePlaceholdersFilled) {
  const auto argv = npuir_command(builtin_npuir(), "/t/npuir", 7,
                                  "/cann/tools/bisheng_compiler/bin", "/w/clang++");
  EXPECT_EQ(argv,
            (std::vector<std::string>{
                "bash", "build-tools/build.sh", "--build-type=Release", "-o", "/t/npuir/build",
                "-t", "-j", "7", "--bisheng-compiler=/cann/tools/bisheng_compiler/bin",
                "--cxx-compiler=/w/clang++", "--add-cmake-options", "-DLLVM_ENABLE_LLD=ON",
                "--build-triton", "--build-torch-mlir", "--build-shmem-template",
                "--bishengir-publish", "ON", "--collect-binary", "-r"}));
}

TEST(NpuirBuild, CompilerWrapperAddsItsFlagsBeforeTheCallersArguments) {
  TempDir dir;
  const fs::path wrapper = dir.path() / "clang++";
  write_file(wrapper, cxx_wrapper_script("/bin/echo", {"-include", "cstdint", "it's quoted"}));
  fs::permissions(wrapper, fs::perms::owner_all);
  const ProcessResult result = run_process({{wrapper.string(), "-c", "a b.cpp"}, {}, {}, {}});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "-include cstdint it's quoted -c a b.cpp\n");
}
