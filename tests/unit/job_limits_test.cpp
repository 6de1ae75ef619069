// The job counts on fake cgroup trees (v2 and v1, unlimited, quotas, nested
// levels) and a fake /proc/meminfo.
#include "base/jobs/job_limits.hpp"
#include "base/layer/environment.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ascend_setup;
using namespace test_support;

namespace {



class JobLimitsTest : public ::testing::Test {
 protected:
  JobLimitsTest() {
    view.cgroup_root = dir.path() / "cgroup";
    view.meminfo = dir.path() / "meminfo";
    view.self_cgroup = dir.path() / "self-cgroup";
    view.online_cpus = 320;
    fs::create_directories(view.cgroup_root);
    write_file(view.meminfo, "MemTotal:       25165824 kB\nMemFree:  1000 kB\n");  // 24 GiB
    write_file(view.self_cgroup, "0::/\n");
  }
  void v2(const std::string& cpu_max, const std::string& memory_max,
          const fs::path& level = "") const {
    write_file(view.cgroup_root / "cgroup.controllers", "cpu memory\n");
    if (!cpu_max.empty()) {
      write_file(view.cgroup_root / level / "cpu.max", cpu_max + "\n");
    }
    if (!memory_max.empty()) {
      write_file(view.cgroup_root / level / "memory.max", memory_max + "\n");
    }
  }
  TempDir dir;
  MachineView view;
};

TEST_F(JobLimitsTest, V2MemoryLimitOn320CpusGivesTwoJobs) {
  v2("32000000 100000", std::to_string(5 * GiB));
  const JobLimits limits = compute_job_limits(view);
  EXPECT_EQ(limits.compile_jobs, 2);
  EXPECT_EQ(limits.link_jobs, 1);
  EXPECT_EQ(limits.memory, 5 * GiB);
  EXPECT_EQ(limits.memory_source, "cgroup v2 memory.max");
  EXPECT_DOUBLE_EQ(limits.cpus, 320);
  EXPECT_NE(limits.compile_reason().find("5.0 GiB (cgroup v2 memory.max) / 2.5 GiB a job) = 2"),
            std::string::npos)
      << limits.compile_reason();
}

TEST_F(JobLimitsTest, V2UnlimitedIsMemTotalAndTheCpus) {
  v2("max 100000", "max");
  const JobLimits limits = compute_job_limits(view);
  EXPECT_EQ(limits.memory, 24 * GiB);
  EXPECT_EQ(limits.compile_jobs, 9);  // 24 / 2.5
  EXPECT_EQ(limits.link_jobs, 6);     // 24 / 4
  EXPECT_NE(limits.memory_source.find("MemTotal"), std::string::npos);
}

TEST_F(JobLimitsTest, V2CpuQuotaIsFlooredAndAtLeastOne) {
  v2("150000 100000", "max");
  EXPECT_EQ(compute_job_limits(view).compile_jobs, 1);
  v2("50000 100000", "max");
  EXPECT_EQ(compute_job_limits(view).compile_jobs, 1);
  v2("400000 100000", "max");
  const JobLimits limits = compute_job_limits(view);
  EXPECT_EQ(limits.compile_jobs, 4);
  EXPECT_EQ(limits.cpu_source, "cgroup v2 cpu.max 400000/100000 = 4 CPUs");
}

TEST_F(JobLimitsTest, V2TheSmallestLimitOfTheLevelsWins) {
  write_file(view.self_cgroup, "0::/kubepods/pod1/container\n");
  fs::create_directories(view.cgroup_root / "kubepods/pod1/container");
  v2("max 100000", "max", "kubepods/pod1/container");
  v2("800000 100000", std::to_string(8 * GiB), "kubepods/pod1");
  v2("", std::to_string(64 * GiB), "kubepods");
  const JobLimits limits = compute_job_limits(view);
  EXPECT_EQ(limits.compile_jobs, 3);  // 8 GiB / 2.5
  EXPECT_DOUBLE_EQ(limits.cpus, 8);
}

TEST_F(JobLimitsTest, V1UnlimitedHugeValueIsClampedToMemTotal) {
  write_file(view.cgroup_root / "memory/memory.limit_in_bytes", "9223372036854771712\n");
  write_file(view.cgroup_root / "cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write_file(view.cgroup_root / "cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const JobLimits limits = compute_job_limits(view);
  EXPECT_EQ(limits.memory, 24 * GiB);
  EXPECT_EQ(limits.compile_jobs, 9);
  EXPECT_DOUBLE_EQ(limits.cpus, 320);
}

TEST_F(JobLimitsTest, V1QuotaAndLimit) {
  write_file(view.self_cgroup, "5:memory:/ci/job\n4:cpu,cpuacct:/ci/job\n");
  write_file(view.cgroup_root / "memory/ci/job/memory.limit_in_bytes",
             std::to_string(16 * GiB) + "\n");
  write_file(view.cgroup_root / "cpu,cpuacct/ci/job/cpu.cfs_quota_us", "300000\n");
  write_file(view.cgroup_root / "cpu,cpuacct/ci/job/cpu.cfs_period_us", "100000\n");
  const JobLimits limits = compute_job_limits(view);
  EXPECT_EQ(limits.compile_jobs, 3);  // 3 CPUs; 16 GiB would allow 6
  EXPECT_EQ(limits.link_jobs, 3);
  EXPECT_EQ(limits.memory_source, "cgroup v1 memory.limit_in_bytes");
  EXPECT_NE(limits.cpu_source.find("cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us 300000/100000"),
            std::string::npos);
}

TEST_F(JobLimitsTest, NoCgroupAtAllIsMemTotalAndOnlineCpus) {
  view.online_cpus = 2;
  const JobLimits limits = compute_job_limits(view);
  EXPECT_EQ(limits.compile_jobs, 2);
  EXPECT_EQ(limits.memory, 24 * GiB);
}

TEST_F(JobLimitsTest, AUserValueWinsAndTheMachineFigureIsSetOtherwise) {
  v2("32000000 100000", std::to_string(5 * GiB));
  ::setenv("ASCEND_SETUP_CGROUP_ROOT", view.cgroup_root.c_str(), 1);
  ::setenv("ASCEND_SETUP_MEMINFO", view.meminfo.c_str(), 1);
  ::setenv("MAX_JOBS", "7", 1);
  ::unsetenv("TRITON_PARALLEL_LINK_JOBS");
  apply_job_limits();
  EXPECT_STREQ(std::getenv("MAX_JOBS"), "7");
  EXPECT_STREQ(std::getenv("TRITON_PARALLEL_LINK_JOBS"), "1");
  ::unsetenv("MAX_JOBS");
  apply_job_limits();
  EXPECT_STREQ(std::getenv("MAX_JOBS"), "2");
  for (const char* name : {"MAX_JOBS", "TRITON_PARALLEL_LINK_JOBS", "ASCEND_SETUP_CGROUP_ROOT",
                           "ASCEND_SETUP_MEMINFO"}) {
    unset_env(name);
  }
}

}  // namespace

// The cgroup and /proc parsers on text.
TEST(CgroupFiles, QuotasAndLimitsAsTheKernelWritesThem) {
  const auto quota = cpu_max_quota("150000 100000\n");
  ASSERT_TRUE(quota);
  EXPECT_EQ(quota->quota, 150000u);
  EXPECT_EQ(quota->period, 100000u);
  EXPECT_DOUBLE_EQ(quota->cpus(), 1.5);
  EXPECT_EQ(cpu_max_quota("200000\n")->period, 100000u);
  EXPECT_EQ(cpu_max_quota("max 100000\n"), std::nullopt);
  EXPECT_EQ(cpu_max_quota("100000 0\n"), std::nullopt);
  EXPECT_EQ(cfs_quota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(cfs_quota("50000\n", "100000\n")->cpus(), 0.5);
  EXPECT_EQ(memory_limit("1073741824\n"), 1073741824u);
  EXPECT_EQ(memory_limit("max\n"), std::nullopt);
  EXPECT_EQ(mem_total("MemTotal:       16384 kB\nMemFree: 1 kB\n"), 16384u * 1024);
  EXPECT_EQ(mem_total("MemFree: 1 kB\n"), 0u);
  EXPECT_EQ(cgroup_of_self("12:memory:/a\n3:cpu,cpuacct:/b\n0::/c\n", ""), "/c");
  EXPECT_EQ(cgroup_of_self("12:memory:/a\n3:cpu,cpuacct:/b\n0::/c\n", "cpu"), "/b");
  EXPECT_EQ(cgroup_of_self("garbage\n", "memory"), "/");
}

TEST(CgroupFiles, ANumberTooLargeIsNoLimitNotAWrappedOne) {
  // strtoull saturated at 2^64-1; MemTotal's kB times 1024 wrapped around.
  EXPECT_EQ(memory_limit("99999999999999999999999\n"), std::nullopt);
  EXPECT_EQ(cpu_max_quota("99999999999999999999999 100000\n"), std::nullopt);
  EXPECT_EQ(mem_total("MemTotal: 18446744073709551615 kB\n"), 0u);
  EXPECT_EQ(mem_total("MemTotal: 99999999999999999999999 kB\n"), 0u);
  EXPECT_EQ(memory_limit("12abc\n"), std::nullopt);
}
