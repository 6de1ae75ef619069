#include "base/jobs/compile_cluster.hpp"

#include "base/layer/environment.hpp"
#include "base/util/error.hpp"
#include "base/util/executable_search.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"
#include "base/util/tcp_probe.hpp"
#include "base/util/whole_file.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

// A whole number from `low` to `high`, else Error naming the spec.
int spec_number(const std::string& text, int low, int high, const std::string& spec,
                const char* what) {
  if (const auto number = parse_integer(text, low, high)) {
    return *number;
  }
  throw Error(fmt::format("distcc host `{}`: the {} `{}` is not a whole number from {} to {}", spec,
                          what, text, low, high),
              ErrorKind::usage);
}

DistccHost parse_host(const std::string& spec) {
  DistccHost host;
  host.spec = spec;
  const size_t comma = spec.find(',');
  const std::string main = spec.substr(0, comma);
  if (comma != std::string::npos) {
    std::istringstream options(spec.substr(comma + 1));
    for (std::string option; std::getline(options, option, ',');) {
      if (option != "lzo" && option != "cpp" && option != "auth" && option.rfind("auth=", 0) != 0) {
        throw Error(fmt::format("distcc host `{}`: unknown option `{}` (lzo, cpp, auth, auth=NAME)",
                                spec, option),
                    ErrorKind::usage);
      }
    }
  }
  if (main == "localhost" || main.rfind("localhost/", 0) == 0) {
    host.kind = DistccHost::Kind::local;
    host.limit = main == "localhost" ? kDistccLocalLimit
                                     : spec_number(main.substr(10), 1, 4096, spec, "limit");
    return host;
  }
  size_t at = 0;
  if (const size_t sign = main.find('@'); sign != std::string::npos) {
    // [user]@host[/limit][:command]: ssh, whose port is ssh's business.
    host.kind = DistccHost::Kind::ssh;
    at = sign + 1;
  }
  size_t end = 0;
  if (host.kind == DistccHost::Kind::tcp && main[at] == '[') {
    end = main.find(']', at);
    if (end == std::string::npos) {
      throw Error(fmt::format("distcc host `{}`: `[` without `]`", spec), ErrorKind::usage);
    }
    host.host = main.substr(at + 1, end - at - 1);
    ++end;
  } else {
    end = std::min(main.find_first_of(":/", at), main.size());
    host.host = main.substr(at, end - at);
  }
  if (host.host.empty()) {
    throw Error(fmt::format("distcc host `{}`: no host name", spec), ErrorKind::usage);
  }
  bool port_seen = false;
  bool limit_seen = false;
  while (end < main.size()) {
    const char mark = main[end];
    const size_t next = std::min(main.find_first_of(":/", end + 1), main.size());
    const std::string value = main.substr(end + 1, next - end - 1);
    if (mark == '/' && !limit_seen) {
      host.limit = spec_number(value, 1, 4096, spec, "limit");
      limit_seen = true;
    } else if (mark == ':' && host.kind == DistccHost::Kind::ssh) {
      break;  // the remote command: the rest
    } else if (mark == ':' && !port_seen) {
      host.port = spec_number(value, 1, 65535, spec, "port");
      port_seen = true;
    } else {
      throw Error(fmt::format("distcc host `{}`: unexpected `{}`", spec, main.substr(end)),
                  ErrorKind::usage);
    }
    end = next;
  }
  return host;
}

std::string join_specs(const std::vector<DistccHost>& hosts) {
  std::string text;
  for (const DistccHost& host : hosts) {
    text += (text.empty() ? "" : " ") + host.spec;
  }
  return text;
}

std::optional<fs::path> distcc_on_path() {
  return find_executable("distcc", env_value(EnvVar::path, nullptr));
}

int probe_milliseconds() {
  const auto text = env_value(EnvVar::distcc_probe_ms, nullptr);
  if (!text || text->empty()) {
    return 1000;
  }
  return parse_setting(env_name(EnvVar::distcc_probe_ms, nullptr), *text, 1, 60000);
}

CompileCluster& applied_cluster() {
  static CompileCluster cluster;
  return cluster;
}

}  // namespace

DistccHosts parse_distcc_hosts(const std::string& text) {
  DistccHosts hosts;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    for (std::string word; words >> word;) {
      if (word == "--randomize" || word == "+zeroconf" || word.rfind("--localslots=", 0) == 0 ||
          word.rfind("--localslots_cpp=", 0) == 0) {
        hosts.options.push_back(word);
      } else if (word.rfind("-", 0) == 0 || word.rfind("+", 0) == 0) {
        throw Error(fmt::format("unknown distcc option `{}` (--randomize, --localslots=N, "
                                "--localslots_cpp=N, +zeroconf)",
                                word),
                    ErrorKind::usage);
      } else {
        hosts.hosts.push_back(parse_host(word));
      }
    }
  }
  return hosts;
}

std::vector<std::string> probe_distcc_hosts(const std::vector<DistccHost>& hosts,
                                            std::chrono::milliseconds timeout) {
  std::vector<TcpEndpoint> endpoints;
  for (const DistccHost& host : hosts) {
    if (host.kind == DistccHost::Kind::tcp) {
      endpoints.push_back({host.host, host.port});
    }
  }
  const std::vector<std::string> tcp_why = probe_tcp_endpoints(endpoints, timeout);
  std::vector<std::string> why;
  size_t next = 0;
  for (const DistccHost& host : hosts) {
    why.push_back(host.kind == DistccHost::Kind::tcp ? tcp_why[next++] : "");
  }
  return why;
}

std::string CompileCluster::hosts_text() const {
  std::string text;
  for (const std::string& option : up.options) {
    text += (text.empty() ? "" : " ") + option;
  }
  const std::string specs = join_specs(up.hosts);
  return text.empty() ? specs : specs.empty() ? text : text + " " + specs;
}

std::string CompileCluster::slots_reason() const {
  std::string sum;
  for (const DistccHost& host : up.hosts) {
    sum += (sum.empty() ? "" : " + ") + std::to_string(host.limit);
  }
  return fmt::format("{} slot{} of the distcc cluster ({}: {}) = {}", sum, slots == 1 ? "" : "s",
                     source, hosts_text(), slots);
}

CompileCluster plan_compile_cluster() {
  CompileCluster cluster;
  std::optional<std::string> text = env_value(EnvVar::distcc_hosts_ours, nullptr);
  cluster.source = env_name(EnvVar::distcc_hosts_ours, nullptr);
  if (!text) {
    text = env_value(EnvVar::distcc_hosts, nullptr);
    cluster.source = env_name(EnvVar::distcc_hosts, nullptr);
  }
  if (!text || trim(*text).empty()) {
    return cluster;
  }
  DistccHosts hosts;
  try {
    hosts = parse_distcc_hosts(*text);
  } catch (const Error& error) {
    spdlog::warn("{}: {}: compiling locally", cluster.source, error.what());
    return cluster;
  }
  const bool zeroconf =
      std::find(hosts.options.begin(), hosts.options.end(), "+zeroconf") != hosts.options.end();
  if (hosts.hosts.empty() && !zeroconf) {
    return cluster;
  }
  const auto distcc = distcc_on_path();
  if (!distcc) {
    spdlog::warn("{} is set but there is no distcc on PATH: compiling locally", cluster.source);
    return cluster;
  }
  const int milliseconds = probe_milliseconds();
  const std::vector<std::string> why =
      probe_distcc_hosts(hosts.hosts, std::chrono::milliseconds(milliseconds));
  cluster.up.options = hosts.options;
  std::string down_text;
  for (size_t i = 0; i < hosts.hosts.size(); ++i) {
    if (why[i].empty()) {
      cluster.up.hosts.push_back(hosts.hosts[i]);
      cluster.slots += hosts.hosts[i].limit;
    } else {
      cluster.down.push_back(hosts.hosts[i]);
      down_text +=
          fmt::format("{}{} ({})", down_text.empty() ? "" : ", ", hosts.hosts[i].spec, why[i]);
    }
  }
  if (cluster.up.hosts.empty() && !zeroconf) {
    spdlog::warn("every distcc host of {} is down: {}: compiling locally", cluster.source,
                 down_text);
    return cluster;
  }
  if (!cluster.down.empty()) {
    spdlog::warn("distcc host{} down, left out of this build: {}",
                 cluster.down.size() == 1 ? "" : "s", down_text);
  }
  cluster.distcc = *distcc;
  cluster.active = true;
  return cluster;
}

const CompileCluster& apply_compile_cluster(bool announce) {
  CompileCluster& cluster = applied_cluster();
  cluster = plan_compile_cluster();
  if (!cluster.active) {
    return cluster;
  }
  const std::string hosts_name = env_name(EnvVar::distcc_hosts, nullptr);
  if (!cluster.down.empty() || cluster.source != hosts_name) {
    set_env(hosts_name, cluster.hosts_text(),
            cluster.down.empty() ? "the hosts of " + cluster.source
                                 : "the hosts of " + cluster.source +
                                       " that answered; left out: " + join_specs(cluster.down));
  }
  const std::string prefix_name = env_name(EnvVar::ccache_prefix, nullptr);
  if (const auto given = env_value(EnvVar::ccache_prefix, nullptr)) {
    spdlog::debug("{}={} (set by the user; not distcc's)", prefix_name, *given);
  } else {
    set_env(prefix_name, cluster.distcc.string(),
            "ccache (upstream's launcher when TRITON_BUILD_WITH_CCACHE is on and ccache found) "
            "compiles through distcc");
  }
  spdlog::log(announce ? spdlog::level::info : spdlog::level::debug,
              "compiling through distcc ({}) on {}", cluster.distcc.string(), cluster.hosts_text());
  return cluster;
}

const CompileCluster& compile_cluster() { return applied_cluster(); }

std::vector<std::string> cluster_cmake_args(const CompileCluster& cluster,
                                            const fs::path& cmake_dir) {
  std::vector<std::string> args;
  if (cluster.active) {
    for (const char* language : {"C", "CXX"}) {
      args.push_back(
          fmt::format("-DCMAKE_{}_COMPILER_LAUNCHER={}", language, cluster.distcc.string()));
    }
    return args;
  }
  // Without a cluster: a distcc launcher an earlier run left in the cache
  // is emptied.
  const std::string cache = read_whole_file(cmake_dir / "CMakeCache.txt").value_or("");
  std::istringstream lines(cache);
  for (std::string line; std::getline(lines, line);) {
    for (const char* language : {"C", "CXX"}) {
      const std::string key = fmt::format("CMAKE_{}_COMPILER_LAUNCHER:", language);
      if (line.rfind(key, 0) == 0 && line.size() >= 6 &&
          line.compare(line.size() - 6, 6, "distcc") == 0) {
        args.push_back(fmt::format("-DCMAKE_{}_COMPILER_LAUNCHER=", language));
      }
    }
  }
  return args;
}

}  // namespace ascend_setup
