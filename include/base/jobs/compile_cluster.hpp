// Compiles through a distcc cluster. The cluster is ASCEND_SETUP_DISTCC_HOSTS
// (this build's own; set but empty: no distcc), else DISTCC_HOSTS, in
// distcc's grammar: `host[:port][/limit][,options]` (TCP, port 3632, limit
// 4), `localhost[/limit]` (local, limit 2), `[user]@host[/limit]` (ssh), the
// global options `--randomize`, `--localslots=N`, `--localslots_cpp=N` and
// `+zeroconf`. Every TCP host is probed with one connect, all at once, the
// whole probe bounded by ASCEND_SETUP_DISTCC_PROBE_MS; localhost and ssh
// hosts are not probed (distcc falls back locally on its own).
//
// With distcc on PATH and at least one host up, the build compiles through
// distcc: DISTCC_HOSTS given to the build lists the up hosts only (hosts that
// are down are named on ONE warning line), CCACHE_PREFIX is the distcc
// found (what ccache runs when upstream's CMakeLists made ccache the
// launcher), and the configure call gets distcc as the C and C++ compiler
// launcher (a launcher the configure call already names wins; ccache's, set
// as a normal variable by upstream's CMakeLists, shadows ours). MAX_JOBS is
// the cluster's slots (the up hosts' limits summed); link jobs stay local
// (job_limits.hpp). Every host down, distcc missing or a list that does not
// parse: one warning, no distcc, the machine's own job counts.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ascend_setup {

inline constexpr int kDistccPort = 3632;
inline constexpr int kDistccRemoteLimit = 4;  // distcc's default slots of a remote host
inline constexpr int kDistccLocalLimit = 2;   // ... and of localhost

struct DistccHost {
  enum class Kind { local, tcp, ssh };
  std::string spec;  // as written, given to the build unchanged
  Kind kind = Kind::tcp;
  std::string host;  // name or address (without IPv6 brackets); empty for localhost
  int port = kDistccPort;
  int limit = kDistccRemoteLimit;
};

struct DistccHosts {
  std::vector<DistccHost> hosts;
  std::vector<std::string> options;  // --randomize, --localslots=N, ..., +zeroconf
};

// distcc's host list; a spec that does not parse throws Error naming it.
// Blanks separate specs; `#` starts a comment to the end of the line.
DistccHosts parse_distcc_hosts(const std::string& text);

// For each host, "" when it is up, else why it is not: a TCP host is up when
// a connect to it succeeded within `timeout` (all hosts at once, name lookups
// included); localhost and ssh hosts count as up.
std::vector<std::string> probe_distcc_hosts(const std::vector<DistccHost>& hosts,
                                            std::chrono::milliseconds timeout);

struct CompileCluster {
  bool active = false;           // the build compiles through distcc
  std::string source;            // the variable the list came from
  std::filesystem::path distcc;  // the distcc found on PATH
  DistccHosts up;                // the options and the hosts that are up
  std::vector<DistccHost> down;
  int slots = 0;                   // the up hosts' limits summed (0 with +zeroconf alone)
  std::string hosts_text() const;  // DISTCC_HOSTS for the build
  // "2 + 2 slots of the distcc cluster (DISTCC_HOSTS: a/2 b/2) = 4"
  std::string slots_reason() const;
};

// The cluster of this process's environment, probed; warns once when hosts
// are down or distcc cannot be used. Inactive when no list is set.
CompileCluster plan_compile_cluster();

// Plans the cluster and sets DISTCC_HOSTS (when hosts were dropped or the
// list is ours) and CCACHE_PREFIX for the build (a CCACHE_PREFIX the user
// set wins); kept for the configure call. Says which hosts compile on the
// info log when `announce` (a command that compiles), else at debug level.
const CompileCluster& apply_compile_cluster(bool announce = true);

// The cluster apply_compile_cluster() set up (inactive before it ran).
const CompileCluster& compile_cluster();

// The launcher arguments of the configure call: distcc for C and C++ when
// the cluster is active; when it is not, an empty launcher where the build
// directory's CMakeCache.txt still holds a distcc launcher from an earlier
// run (else every compile would still go through distcc).
std::vector<std::string> cluster_cmake_args(const CompileCluster& cluster,
                                            const std::filesystem::path& cmake_dir);

}  // namespace ascend_setup
