#include "base/jobs/job_limits.hpp"

#include "base/util/strings.hpp"

#include "base/download/download_progress.hpp"
#include "base/jobs/compile_cluster.hpp"
#include "base/layer/environment.hpp"
#include "base/util/numbers.hpp"
#include "base/util/whole_file.hpp"

#include <sched.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

// The first line of `text`, without its blanks.
std::string first_line(std::string_view text) { return trim(text.substr(0, text.find('\n'))); }

std::optional<std::uint64_t> number(std::string_view text) {
  return parse_integer<std::uint64_t>(text, 0, std::numeric_limits<std::uint64_t>::max());
}

std::string self_path(const fs::path& self_cgroup, std::string_view controller) {
  return cgroup_of_self(read_whole_file(self_cgroup).value_or(""), controller);
}

// The directories from the process's cgroup up to the hierarchy's root (the
// root alone when the process's path is not under it, as with a fake root).
std::vector<fs::path> levels(const fs::path& hierarchy, const std::string& path) {
  fs::path dir = hierarchy / fs::path(path).relative_path();
  std::error_code ignored;
  if (!fs::is_directory(dir, ignored)) {
    return {hierarchy};
  }
  std::vector<fs::path> out;
  const fs::path root = hierarchy.lexically_normal();
  for (fs::path at = dir.lexically_normal();; at = at.parent_path()) {
    out.push_back(at);
    if (at == root || at == at.parent_path() || out.size() > 64) {
      break;
    }
  }
  return out;
}

struct Limit {
  double value;
  std::string source;
};

std::optional<Limit> v2_cpu(const MachineView& view) {
  std::optional<Limit> best;
  for (const fs::path& dir : levels(view.cgroup_root, self_path(view.self_cgroup, ""))) {
    const auto text = read_whole_file(dir / "cpu.max");
    const auto quota = text ? cpu_max_quota(*text) : std::nullopt;  // "max": none at this level
    if (!quota) {
      continue;
    }
    const double cpus = quota->cpus();
    if (!best || cpus < best->value) {
      best = Limit{cpus, fmt::format("cgroup v2 cpu.max {}/{} = {:g} CPUs", quota->quota,
                                     quota->period, cpus)};
    }
  }
  return best;
}

std::optional<Limit> v1_cpu(const MachineView& view) {
  std::optional<Limit> best;
  for (const char* name : {"cpu,cpuacct", "cpu", "cpuacct,cpu"}) {
    const fs::path hierarchy = view.cgroup_root / name;
    std::error_code ignored;
    if (!fs::is_directory(hierarchy, ignored)) {
      continue;
    }
    for (const fs::path& dir : levels(hierarchy, self_path(view.self_cgroup, "cpu"))) {
      const auto quota_text = read_whole_file(dir / "cpu.cfs_quota_us");
      const auto period_text = read_whole_file(dir / "cpu.cfs_period_us");
      const auto quota =
          quota_text && period_text ? cfs_quota(*quota_text, *period_text) : std::nullopt;
      if (!quota) {
        continue;  // -1: none
      }
      const double cpus = quota->cpus();
      if (!best || cpus < best->value) {
        best = Limit{cpus, fmt::format("cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us {}/{} = {:g} "
                                       "CPUs",
                                       quota->quota, quota->period, cpus)};
      }
    }
    break;
  }
  return best;
}

// A memory limit in bytes: kept whole (a double cannot hold every limit, and
// "unlimited" in v1 is near 2^63).
struct MemoryLimit {
  std::uint64_t bytes;
  std::string source;
};

std::optional<MemoryLimit> v2_memory(const MachineView& view) {
  std::optional<MemoryLimit> best;
  for (const fs::path& dir : levels(view.cgroup_root, self_path(view.self_cgroup, ""))) {
    const auto text = read_whole_file(dir / "memory.max");
    const auto bytes = text ? memory_limit(*text) : std::nullopt;  // "max": none
    if (bytes && (!best || *bytes < best->bytes)) {
      best = MemoryLimit{*bytes, "cgroup v2 memory.max"};
    }
  }
  return best;
}

std::optional<MemoryLimit> v1_memory(const MachineView& view) {
  std::optional<MemoryLimit> best;
  const fs::path hierarchy = view.cgroup_root / "memory";
  std::error_code ignored;
  if (!fs::is_directory(hierarchy, ignored)) {
    return best;
  }
  for (const fs::path& dir : levels(hierarchy, self_path(view.self_cgroup, "memory"))) {
    const auto text = read_whole_file(dir / "memory.limit_in_bytes");
    const auto bytes = text ? memory_limit(*text) : std::nullopt;
    if (bytes && (!best || *bytes < best->bytes)) {
      best = MemoryLimit{*bytes, "cgroup v1 memory.limit_in_bytes"};
    }
  }
  return best;
}

std::string cpus_text(double cpus) { return fmt::format("{:g} CPU{}", cpus, cpus == 1 ? "" : "s"); }

}  // namespace

std::optional<CpuQuota> cpu_max_quota(std::string_view text) {
  const std::string line = first_line(text);
  const size_t blank = line.find_first_of(" \t");
  const std::string_view words(line);
  const auto quota = number(words.substr(0, blank));
  const std::string period_text =
      blank == std::string::npos ? std::string() : trim(line.substr(blank));
  const auto period = period_text.empty()
                          ? std::optional<std::uint64_t>(100000)
                          : number(period_text.substr(0, period_text.find_first_of(" \t")));
  if (!quota || !period || *period == 0) {
    return std::nullopt;
  }
  return CpuQuota{*quota, *period};
}

std::optional<CpuQuota> cfs_quota(std::string_view quota_text, std::string_view period_text) {
  const auto quota = number(first_line(quota_text));
  const auto period = number(first_line(period_text));
  if (!quota || !period || *period == 0) {
    return std::nullopt;
  }
  return CpuQuota{*quota, *period};
}

std::optional<std::uint64_t> memory_limit(std::string_view text) {
  return number(first_line(text));
}

std::uint64_t mem_total(std::string_view meminfo) {
  for (size_t at = 0; at < meminfo.size();) {
    const size_t end = std::min(meminfo.find('\n', at), meminfo.size());
    const std::string_view line = meminfo.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with("MemTotal:")) {
      continue;
    }
    const std::string rest = trim(line.substr(9));
    const auto kib = number(std::string_view(rest).substr(0, rest.find_first_of(" \t")));
    if (!kib || *kib > std::numeric_limits<std::uint64_t>::max() / 1024) {
      return 0;
    }
    return *kib * 1024;
  }
  return 0;
}

std::string cgroup_of_self(std::string_view text, std::string_view controller) {
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) {
      continue;
    }
    const std::string controllers(line.substr(first + 1, second - first - 1));
    if (controller.empty() ? controllers.empty()
                           : ("," + controllers + ",").find("," + std::string(controller) + ",") !=
                                 std::string::npos) {
      return std::string(line.substr(second + 1));
    }
  }
  return "/";
}

JobLimits compute_job_limits(const MachineView& view) {
  JobLimits limits;
  const bool v2 = fs::exists(view.cgroup_root / "cgroup.controllers");
  const unsigned online = std::max(1u, view.online_cpus);
  limits.cpus = online;
  limits.cpu_source = fmt::format("{} online", online);
  if (auto quota = v2 ? v2_cpu(view) : v1_cpu(view)) {
    if (quota->value < limits.cpus) {
      limits.cpus = quota->value;
      limits.cpu_source = quota->source;
    } else {
      limits.cpu_source += "; " + quota->source;
    }
  } else {
    limits.cpu_source += "; no cgroup CPU quota";
  }
  const std::uint64_t total = mem_total(read_whole_file(view.meminfo).value_or(""));
  limits.memory = total;
  limits.memory_source = "MemTotal";
  if (auto limit = v2 ? v2_memory(view) : v1_memory(view)) {
    if (total == 0 || limit->bytes < total) {
      limits.memory = limit->bytes;
      limits.memory_source = limit->source;
    } else {
      limits.memory_source = "MemTotal; " + limit->source + " is above it (unlimited)";
    }
  } else {
    limits.memory_source = "MemTotal; no cgroup memory limit";
  }
  if (limits.memory == 0) {
    limits.memory = kCompileJobMemory;  // unreadable: one job
    limits.memory_source = "unknown (no MemTotal in " + view.meminfo.string() + ")";
  }
  const auto by_cpu = static_cast<std::uint64_t>(std::floor(limits.cpus));
  const std::uint64_t by_memory = limits.memory / kCompileJobMemory;
  limits.compile_jobs =
      static_cast<int>(std::clamp<std::uint64_t>(std::min(by_cpu, by_memory), 1, 4096));
  limits.link_jobs = static_cast<int>(std::clamp<std::uint64_t>(
      std::min<std::uint64_t>(limits.compile_jobs, limits.memory / kLinkJobMemory), 1, 4096));
  return limits;
}

unsigned JobLimits::threads() const {
  return static_cast<unsigned>(std::clamp(std::floor(cpus), 1.0, 4096.0));
}

std::string JobLimits::compile_reason() const {
  return fmt::format("min({} ({}), {} ({}) / 2.5 GiB a job) = {}", cpus_text(cpus), cpu_source,
                     human_bytes(double(memory)), memory_source, compile_jobs);
}

std::string JobLimits::link_reason() const {
  return fmt::format("min({} compile jobs, {} / 4 GiB a link) = {}", compile_jobs,
                     human_bytes(double(memory)), link_jobs);
}

MachineView machine_view_from_environment() {
  MachineView view;
  if (auto root = env_value(EnvVar::cgroup_root, nullptr); root && !root->empty()) {
    view.cgroup_root = *root;
  }
  if (auto meminfo = env_value(EnvVar::meminfo, nullptr); meminfo && !meminfo->empty()) {
    view.meminfo = *meminfo;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    view.online_cpus = static_cast<unsigned>(CPU_COUNT(&set));
  } else {
    view.online_cpus = std::max(1u, std::thread::hardware_concurrency());
  }
  return view;
}

bool compiles(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    for (const char* command : {"build", "build_ext", "bdist_wheel", "install", "develop",
                                "editable_wheel", "bdist_egg"}) {
      if (arg == command) {
        return true;
      }
    }
  }
  return false;
}

namespace {

// One job count: the user's value wins (the machine's figure at debug level),
// else the machine's figure is set and said at `level`.
void apply_job_count(EnvVar var, int jobs, const std::string& reason,
                     spdlog::level::level_enum level) {
  const std::string name = env_name(var, nullptr);
  if (const auto given = env_value(var, nullptr)) {
    spdlog::debug("{}={} (set by the user; the machine's figure: {})", name, *given, reason);
    return;
  }
  set_env(name, std::to_string(jobs), reason);
  spdlog::log(level, "{}={}: {}", name, jobs, reason);
}

}  // namespace

void apply_job_limits(bool announce, const CompileCluster* cluster) {
  const auto level = announce ? spdlog::level::info : spdlog::level::debug;
  const JobLimits limits = compute_job_limits(machine_view_from_environment());
  if (cluster != nullptr && cluster->active && cluster->slots > 0) {
    // The compiles run on the cluster's slots; the links stay here, sized by
    // this machine's memory as without a cluster.
    apply_job_count(EnvVar::max_jobs, cluster->slots,
                    fmt::format("{} (this machine alone: {})", cluster->slots_reason(),
                                limits.compile_reason()),
                    level);
  } else {
    apply_job_count(EnvVar::max_jobs, limits.compile_jobs, limits.compile_reason(), level);
  }
  apply_job_count(EnvVar::parallel_link_jobs, limits.link_jobs, limits.link_reason(), level);
}

}  // namespace ascend_setup
