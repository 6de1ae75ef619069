// The NPUIR build (the [npuir] switch on), before setup.py is loaded, for a
// command that compiles, in the steps of triton-ascend's build_npuir.py:
//   1. [npuir] min_free_gib free on the tree's disk, else Error saying how
//      much is free;
//   2. the toolkit's bisheng compiler directory (the toolkit variable unset:
//      Error asking to source its set_env.sh);
//   3. the AscendNPU-IR submodule checked out (libgit2), then every nested
//      repository its HEAD tree records under [npuir] nested_directory
//      fetched at exactly the recorded commit, [npuir] fetch_attempts
//      attempts fetch_retry_seconds apart; one already holding a
//      CMakeLists.txt is kept as it is;
//   4. the job count: MAX_JOBS as the user set it, else min(CPUs, memory /
//      job_memory_mib) of the cgroup (job_limits.hpp), at most max_jobs;
//   5. [npuir] command run in the submodule (its output streamed to stderr,
//      stop signals reaching it) with a compiler wrapper written into the
//      tree's state directory and the ccache directory defaulted;
//   6. the artifacts copied to [bishengir] source, replacing what was there.
// Each failure is one Error: bad input (exit 3) for the machine, the
// toolkit, the tree or a fetch, a failing build tool (exit 1) for the build.
#pragma once

#include "base/jobs/job_limits.hpp"
#include "base/layer/profile.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

// The job count of step 4 and why; Error(bad_input) when `user_max_jobs` is
// not a positive integer.
struct NpuirJobs {
  int jobs = 1;
  std::string reason;
};
NpuirJobs npuir_job_count(const std::optional<std::string>& user_max_jobs, const JobLimits& limits,
                          const Profile::Npuir& npuir);

// Step 1's check: Error(bad_input) saying the free and the needed space when
// `free_bytes` is below `min_gib` GiB.
void check_free_space(const std::filesystem::path& where, std::uint64_t free_bytes, int min_gib);

// [npuir] command with its placeholders filled.
std::vector<std::string> npuir_command(const Profile::Npuir& npuir,
                                       const std::filesystem::path& npuir_dir, int jobs,
                                       const std::filesystem::path& bisheng_compiler,
                                       const std::filesystem::path& cxx_wrapper);

// The shell script of the compiler wrapper: `compiler` with `flags` before
// the caller's arguments.
std::string cxx_wrapper_script(const std::filesystem::path& compiler,
                               const std::vector<std::string>& flags);

// Runs steps 1 to 6 when the [npuir] switch is on; nothing otherwise.
// `user_max_jobs`: MAX_JOBS as the user set it (before ascend-setup's own
// default).
void build_npuir(const std::filesystem::path& tree_root, const Profile& profile,
                 const std::optional<std::string>& user_max_jobs);

}  // namespace ascend_setup
