// The cgroup files (v2: cpu.max, memory.max; v1: cpu.cfs_quota_us,
// cpu.cfs_period_us, memory.limit_in_bytes), /proc/self/cgroup and
// /proc/meminfo, as compute_job_limits reads them from a machine view. The
// input is the files' texts separated by \x1f: the view's kind (an even
// first byte: v2), /proc/self/cgroup, /proc/meminfo, then the limit files,
// each written at the hierarchy's root and at the process's level `a/`.
// Invariants: only Error refuses a view; at least one compile job and one
// link job, never more link jobs than compile jobs, never more CPUs than the
// affinity mask's, a non-zero memory figure, reasons that say something.
#include "base/jobs/job_limits.hpp"
#include "fuzz_support.hpp"

#include <fmt/format.h>

using namespace ascend_setup;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::fields(fuzz::as_text(data, size), '\x1f', 8);
  const bool v2 = parts[0].empty() || parts[0][0] % 2 == 0;
  const unsigned online =
      parts[0].size() > 1 ? 1 + static_cast<unsigned char>(parts[0][1]) % 64 : 4;
  const fs::path dir = fuzz::fresh_directory("machine");
  MachineView view;
  view.cgroup_root = dir / "cgroup";
  view.meminfo = dir / "meminfo";
  view.self_cgroup = dir / "self_cgroup";
  view.online_cpus = online;
  fuzz::write_file(view.self_cgroup, parts[1]);
  fuzz::write_file(view.meminfo, parts[2]);
  std::vector<fs::path> levels;
  if (v2) {
    levels = {view.cgroup_root, view.cgroup_root / "a"};
    fs::create_directories(levels.back());
    fuzz::write_file(view.cgroup_root / "cgroup.controllers", "cpu memory");
    for (const fs::path& level : levels) {
      fuzz::write_file(level / "cpu.max", parts[3]);
      fuzz::write_file(level / "memory.max", parts[4]);
    }
  } else {
    for (const char* name : {"cpu,cpuacct", "memory"}) {
      levels = {view.cgroup_root / name, view.cgroup_root / name / "a"};
      fs::create_directories(levels.back());
      for (const fs::path& level : levels) {
        fuzz::write_file(level / "cpu.cfs_quota_us", parts[5]);
        fuzz::write_file(level / "cpu.cfs_period_us", parts[6]);
        fuzz::write_file(level / "memory.limit_in_bytes", parts[7]);
      }
    }
  }
  const auto computed = fuzz::parsed([&] { return compute_job_limits(view); });
  if (!computed) {
    return 0;
  }
  const JobLimits& limits = *computed;
  const std::string figures =
      fmt::format("cpus {} ({}), memory {} ({}), jobs {} / {}", limits.cpus, limits.cpu_source,
                  limits.memory, limits.memory_source, limits.compile_jobs, limits.link_jobs);
  FUZZ_CHECK(limits.compile_jobs >= 1 && limits.link_jobs >= 1, figures);
  FUZZ_CHECK(limits.link_jobs <= limits.compile_jobs, figures);
  FUZZ_CHECK(limits.cpus <= online && limits.cpus >= 0, figures);
  FUZZ_CHECK(limits.threads() >= 1 && limits.threads() <= online, figures);
  FUZZ_CHECK(limits.memory > 0, figures);
  FUZZ_CHECK(!limits.cpu_source.empty() && !limits.memory_source.empty(), figures);
  FUZZ_CHECK(!limits.compile_reason().empty() && !limits.link_reason().empty(), figures);
  return 0;
}
