// How many compile and link jobs fit the machine the build really has: the
// CPUs are the affinity mask's, cut by the cgroup's CPU quota; the memory is
// MemTotal, cut by the cgroup's memory limit (v2: cpu.max, memory.max; v1:
// cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes, whose
// "unlimited" huge value is clamped to MemTotal). Every level from the
// process's cgroup up to the root counts (the smallest limit wins).
//   compile jobs = max(1, min(floor(CPUs), floor(memory / 2.5 GiB)))
//   link jobs    = max(1, min(compile jobs, floor(memory / 4 GiB)))
// 2.5 GiB is what a heavy MLIR/LLVM translation unit of Triton peaks at with
// headroom; 4 GiB is a link of libtriton.so against the static LLVM/MLIR
// libraries (lld; GNU ld takes more).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

struct CompileCluster;

inline constexpr std::uint64_t kCompileJobMemory = 5ULL << 29;  // 2.5 GiB
inline constexpr std::uint64_t kLinkJobMemory = 4ULL << 30;     // 4 GiB

struct MachineView {
  std::filesystem::path cgroup_root = "/sys/fs/cgroup";
  std::filesystem::path meminfo = "/proc/meminfo";
  std::filesystem::path self_cgroup = "/proc/self/cgroup";
  unsigned online_cpus = 1;  // the affinity mask's count
};

struct JobLimits {
  double cpus = 1;           // after the quota
  std::string cpu_source;    // why, e.g. "cgroup v2 cpu.max 32000000/100000 = 320 CPUs"
  std::uint64_t memory = 0;  // bytes, after the limit
  std::string memory_source;
  int compile_jobs = 1;
  int link_jobs = 1;
  // A pool of CPU-bound threads (the wheel's deflate): floor(CPUs), at least 1.
  unsigned threads() const;
  std::string compile_reason() const;  // "min(2 CPUs (...), 5.0 GiB (...) / 2.5 GiB) = 2"
  std::string link_reason() const;
};

JobLimits compute_job_limits(const MachineView& view);

// The parsers of the cgroup and /proc files, each on a file's whole text.
// None throws: text that is not what the kernel writes reads as "no limit"
// (nullopt), MemTotal as 0, the cgroup path as "/".

// A CPU quota: `quota` microseconds of CPU time every `period` (> 0).
struct CpuQuota {
  std::uint64_t quota = 0;
  std::uint64_t period = 1;
  double cpus() const { return double(quota) / double(period); }
};

// cgroup v2 cpu.max, "QUOTA [PERIOD]" (the period 100000 when absent);
// nullopt for "max ..." or bad text.
std::optional<CpuQuota> cpu_max_quota(std::string_view text);

// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us; nullopt for a quota of
// -1 (none), a period of 0 or bad text.
std::optional<CpuQuota> cfs_quota(std::string_view quota_text, std::string_view period_text);

// cgroup v2 memory.max or v1 memory.limit_in_bytes: the bytes; nullopt for
// "max" or bad text.
std::optional<std::uint64_t> memory_limit(std::string_view text);

// /proc/meminfo's MemTotal in bytes; 0 when absent, bad or too large.
std::uint64_t mem_total(std::string_view meminfo);

// /proc/self/cgroup: the process's path in the v2 hierarchy (`controller`
// empty: the "0::" line) or in the v1 hierarchy holding `controller`; "/"
// when no line names it.
std::string cgroup_of_self(std::string_view text, std::string_view controller);

// The view of this process: the registry's cgroup root and meminfo paths
// (ASCEND_SETUP_CGROUP_ROOT, ASCEND_SETUP_MEMINFO) when set, the affinity mask.
MachineView machine_view_from_environment();

// Sets MAX_JOBS and TRITON_PARALLEL_LINK_JOBS where the user set nothing,
// saying the figures and why on the info log when `announce` (a command that
// compiles), else at debug level; a value the user set wins (said at debug).
// With an active `cluster` (compile_cluster.hpp), MAX_JOBS is its slots; the
// link jobs are this machine's figure either way.
void apply_job_limits(bool announce = true, const CompileCluster* cluster = nullptr);

// True when one of setup.py's `args` is a command that compiles (build,
// build_ext, bdist_wheel, install, develop, editable_wheel, bdist_egg).
bool compiles(const std::vector<std::string>& args);

}  // namespace ascend_setup
