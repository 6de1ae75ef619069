#include "base/npuir/npuir_build.hpp"

#include "base/download/download_progress.hpp"
#include "base/git/network_retry.hpp"
#include "base/git/source_repo.hpp"
#include "base/jobs/compile_cache.hpp"
#include "base/layer/environment.hpp"
#include "base/npuir/bishengir_payload.hpp"
#include "base/process/process.hpp"
#include "base/tree/file_lock.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/executable_search.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

namespace ascend_setup {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;
constexpr int kMaxUserJobs = 60000;  // MAX_JOBS above this is a typo, not a machine

// fmt, not "'" + std::string: GCC 12 at -O3 warns falsely on that operator+
// (GCC bug 105651).
std::string wrapper_quoted(const std::string& text) {
  return fmt::format("'{}'", replace_all(text, "'", "'\\''"));
}

// Step 3: the submodule, then its nested repositories (under the NPUIR lock).
void provide_sources(const fs::path& tree_root, const Profile::Npuir& npuir, const HeldLock& held) {
  const NetworkSettings network = network_settings_from_environment();
  const fs::path npuir_dir = tree_root / npuir.directory;
  const auto tree_repo = SourceRepo::open(tree_root);
  if (tree_repo && tree_repo->has_submodule(npuir.directory)) {
    // libgit2 checks a submodule out only into its placeholder directory,
    // which a clone of the tree has; a tree that lost it gets it back.
    std::error_code ec;
    fs::create_directories(npuir_dir, ec);
    tree_repo->ensure_submodule(npuir.directory, network);
  } else if (!holds_content(npuir_dir)) {
    throw Error(
        npuir_dir.string() + " is missing and " +
            (tree_repo ? "no submodule is registered there" : "the tree is no git checkout") +
            ": the NPUIR build needs the AscendNPU-IR sources there",
        ErrorKind::bad_input);
  }
  const auto repo = SourceRepo::open(npuir_dir);
  if (!repo) {
    spdlog::debug("NPUIR build: {} is no git checkout, used as it is", npuir.directory);
    return;
  }
  for (const Gitlink& link : repo->gitlinks_under(npuir.nested_directory)) {
    const fs::path directory = npuir_dir / link.path;
    std::error_code ec;
    if (fs::exists(directory / "CMakeLists.txt", ec)) {
      spdlog::info("NPUIR build: {} already holds a CMakeLists.txt, kept as it is", link.path);
      continue;
    }
    if (link.url.empty()) {
      throw Error(npuir_dir.string() + " records " + link.path + " at " + link.id +
                      " but its .gitmodules gives it no URL",
                  ErrorKind::bad_input);
    }
    int attempt = 0;
    try {
      with_retries({npuir.fetch_attempts, std::chrono::seconds(npuir.fetch_retry_seconds)},
                   "NPUIR build: fetching " + link.path, [&] {
                     spdlog::info("NPUIR build: fetching {} at {} from {} (attempt {} of {})",
                                  link.path, link.id, link.url, ++attempt, npuir.fetch_attempts);
                     SourceRepo::fetch_commit(link.url, link.id, directory, network, held);
                   });
    } catch (const Error& error) {
      if (!error.retryable()) {
        throw;  // a stop, a local failure
      }
      throw Error("cannot fetch " + link.path + " of the NPUIR sources at " + link.id + " from " +
                      link.url + " (" + std::to_string(attempt) + " attempts; last: " +
                      error.what() + "); provide it by hand: git -C " + directory.string() +
                      " init && git -C " + directory.string() + " fetch " + link.url + " " +
                      link.id + " && git -C " + directory.string() + " checkout FETCH_HEAD",
                  ErrorKind::network);
    }
  }
}

}  // namespace

NpuirJobs npuir_job_count(const std::optional<std::string>& user_max_jobs, const JobLimits& limits,
                          const Profile::Npuir& npuir) {
  if (user_max_jobs) {
    return {parse_setting("MAX_JOBS", trim(*user_max_jobs), 1, kMaxUserJobs), "MAX_JOBS as set"};
  }
  const std::uint64_t job_memory = std::uint64_t(npuir.job_memory_mib) << 20;
  const auto by_cpu = static_cast<std::uint64_t>(std::max(1.0, limits.cpus));
  const std::uint64_t by_memory = std::max<std::uint64_t>(1, limits.memory / job_memory);
  const int jobs =
      static_cast<int>(std::min<std::uint64_t>({by_cpu, by_memory, std::uint64_t(npuir.max_jobs)}));
  return {jobs,
          fmt::format("min({:g} CPUs ({}), {} ({}) / {} a job, at most {}) = {}", limits.cpus,
                      limits.cpu_source, human_bytes(double(limits.memory)), limits.memory_source,
                      human_bytes(double(job_memory)), npuir.max_jobs, jobs)};
}

void check_free_space(const fs::path& where, std::uint64_t free_bytes, int min_gib) {
  if (free_bytes < std::uint64_t(min_gib) * kGiB) {
    throw Error("the NPUIR build needs " + std::to_string(min_gib) + " GiB free on the disk of " +
                    where.string() + ", and " + human_bytes(double(free_bytes)) +
                    " is free: make room, or build without it",
                ErrorKind::local_io);
  }
}

std::vector<std::string> npuir_command(const Profile::Npuir& npuir, const fs::path& npuir_dir,
                                       int jobs, const fs::path& bisheng_compiler,
                                       const fs::path& cxx_wrapper) {
  const std::map<std::string, std::string> values = {
      {"npuir", npuir_dir.string()},
      {"jobs", std::to_string(jobs)},
      {"bisheng_compiler", bisheng_compiler.string()},
      {"cxx_compiler", cxx_wrapper.string()}};
  std::vector<std::string> argv;
  for (const std::string& arg : npuir.command) {
    argv.push_back(expand_placeholders(arg, values));
  }
  return argv;
}

std::string cxx_wrapper_script(const fs::path& compiler, const std::vector<std::string>& flags) {
  std::string script =
      fmt::format("#!/bin/sh\n# Written by ascend-setup for the NPUIR build.\nexec {}",
                  wrapper_quoted(compiler.string()));
  for (const std::string& flag : flags) {
    script += ' ';
    script += wrapper_quoted(flag);
  }
  return script + " \"$@\"\n";
}

void build_npuir(const fs::path& tree_root, const Profile& profile,
                 const std::optional<std::string>& user_max_jobs) {
  if (!profile.npuir.present || !env_on(EnvVar::npuir, profile)) {
    return;
  }
  const Profile::Npuir& npuir = profile.npuir;
  const std::string switch_on = npuir.switch_name + " is on";

  struct statvfs disk {};
  if (::statvfs(tree_root.c_str(), &disk) != 0) {
    throw Error("cannot read the free space of " + tree_root.string() + ": " + std::strerror(errno),
                ErrorKind::local_io);
  }
  check_free_space(tree_root, std::uint64_t(disk.f_bavail) * disk.f_frsize, npuir.min_free_gib);

  const auto toolkit = env_value(EnvVar::toolkit_home, &profile);
  if (!toolkit || toolkit->empty()) {
    throw Error(switch_on + " but " + npuir.toolkit_env + " is not set: source " +
                    npuir.toolkit_setup + " first",
                ErrorKind::bad_input);
  }
  const fs::path bisheng = fs::path(*toolkit) / npuir.bisheng_compiler;
  if (std::error_code ec; !fs::is_directory(bisheng, ec)) {
    throw Error(switch_on + " but the bisheng compiler directory " + bisheng.string() +
                    " does not exist (" + npuir.toolkit_env + "=" + *toolkit + "): source " +
                    npuir.toolkit_setup + " of a toolkit that has it",
                ErrorKind::bad_input);
  }
  const auto compiler = find_executable(npuir.cxx_compiler, env_value(EnvVar::path, nullptr));
  if (!compiler) {
    throw Error(
        switch_on + " but " + npuir.cxx_compiler + " (the NPUIR build's compiler) is not on PATH",
        ErrorKind::bad_input);
  }

  // One run fetches and builds in a tree's NPUIR sources at a time.
  const FileLock lock(state_dir(tree_root) / "npuir.lock",
                      "building NPUIR in " + (tree_root / npuir.directory).string());
  provide_sources(tree_root, npuir, lock);

  const NpuirJobs jobs =
      npuir_job_count(user_max_jobs, compute_job_limits(machine_view_from_environment()), npuir);
  spdlog::info("NPUIR build: {} jobs: {}", jobs.jobs, jobs.reason);

  const fs::path wrapper = state_dir(tree_root) / "npuir" / fs::path(npuir.cxx_compiler).filename();
  // With the compile cache, the tree's prefix map too (its environment has
  // ccache's settings already).
  std::vector<std::string> flags = npuir.cxx_flags;
  if (compile_cache().active) {
    flags.push_back(compile_cache_prefix_map(compile_cache()));
  }
  write_whole_file(wrapper, cxx_wrapper_script(*compiler, flags));
  fs::permissions(wrapper, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);

  const fs::path npuir_dir = tree_root / npuir.directory;
  ProcessSpec spec;
  spec.argv = npuir_command(npuir, npuir_dir, jobs.jobs, bisheng, wrapper);
  spec.cwd = npuir_dir;
  spec.stream_to_stderr = true;
  if (const auto ccache = env_value(EnvVar::npuir_ccache_dir, &profile); !ccache) {
    spec.env_changes[npuir.ccache_env] = (tree_root / npuir.ccache_dir).string();
  }
  spdlog::info("NPUIR build: {} (in {})", join(spec.argv, " "), npuir_dir.string());
  const ProcessResult result = run_process(spec);
  if (result.exit_code != 0) {
    throw Error("the NPUIR build failed: `" + join(spec.argv, " ") + "` in " + npuir_dir.string() +
                    " exited with " + std::to_string(result.exit_code),
                ErrorKind::python);
  }

  collect_artifacts(npuir_dir / npuir.output, npuir.artifacts, tree_root / profile.bishengir.source,
                    lock);
}

}  // namespace ascend_setup
