#include "base/jobs/job_limits.hpp"

#include "base/util/strings.hpp"

#include "base/download/download_progress.hpp"
#include "base/jobs/compile_cluster.hpp"
#include "base/layer/environment.hpp"
#include "base/util/text_file.hpp"

#include <sched.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

std::optional<std::string> first_line(const fs::path& path) {
  auto text = read_text_file(path);
  if (!text) {
    return std::nullopt;
  }
  std::string line = text->substr(0, text->find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
    line.pop_back();
  }
  return line;
}

std::optional<std::uint64_t> number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::strtoull(text.c_str(), nullptr, 10);
}

std::uint64_t mem_total(const fs::path& meminfo) {
  std::istringstream in(read_text_file(meminfo).value_or(""));
  std::string key;
  std::uint64_t value = 0;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemTotal:") {
      // kB; a figure past 2^64 bytes is no figure
      return value <= UINT64_MAX / 1024 ? value * 1024 : 0;
    }
  }
  return 0;
}

// The process's cgroup path for the v2 hierarchy ("0::") or a v1 controller.
std::string self_path(const fs::path& self_cgroup, const std::string& controller) {
  std::istringstream in(read_text_file(self_cgroup).value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) {
      continue;
    }
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controller.empty()
            ? controllers.empty()
            : ("," + controllers + ",").find("," + controller + ",") != std::string::npos) {
      return path;
    }
  }
  return "/";
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
    const auto line = first_line(dir / "cpu.max");
    if (!line) {
      continue;
    }
    std::istringstream in(*line);
    std::string quota;
    std::string period;
    in >> quota >> period;
    const auto q = number(quota);
    const auto p = number(period.empty() ? "100000" : period);
    if (!q || !p || *p == 0) {
      continue;  // "max": no quota at this level
    }
    const double cpus = double(*q) / double(*p);
    if (!best || cpus < best->value) {
      best = Limit{cpus, fmt::format("cgroup v2 cpu.max {}/{} = {:g} CPUs", *q, *p, cpus)};
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
      const auto quota_text = first_line(dir / "cpu.cfs_quota_us");
      const auto period_text = first_line(dir / "cpu.cfs_period_us");
      if (!quota_text || !period_text) {
        continue;
      }
      const auto quota = number(*quota_text);  // -1: none
      const auto period = number(*period_text);
      if (!quota || !period || *period == 0) {
        continue;
      }
      const double cpus = double(*quota) / double(*period);
      if (!best || cpus < best->value) {
        best = Limit{cpus, fmt::format("cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us {}/{} = {:g} "
                                       "CPUs",
                                       *quota, *period, cpus)};
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
    const auto line = first_line(dir / "memory.max");
    const auto bytes = line ? number(*line) : std::nullopt;  // "max": none
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
    const auto line = first_line(dir / "memory.limit_in_bytes");
    const auto bytes = line ? number(*line) : std::nullopt;
    if (bytes && (!best || *bytes < best->bytes)) {
      best = MemoryLimit{*bytes, "cgroup v1 memory.limit_in_bytes"};
    }
  }
  return best;
}

std::string cpus_text(double cpus) { return fmt::format("{:g} CPU{}", cpus, cpus == 1 ? "" : "s"); }

}  // namespace

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
  const std::uint64_t total = mem_total(view.meminfo);
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
