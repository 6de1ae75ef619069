// The build-time environment of the Ascend layer, in one registry: every
// variable the layer reads or sets is a row of one table (name, default,
// meaning, who reads it), and every read of the layer goes through it. Names
// come from the profile (they are version-specific), so the table holds the
// profile key a name is read from, not the name.
//
// A read of a variable that is not valid UTF-8 throws Error(ErrorKind::usage)
// naming the variable; prepare_environment() checks every row up front.
#pragma once

#include "base/util/github_actions.hpp"
#include "base/util/network_settings.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ascend_setup {

struct Profile;

using EnvList = std::vector<std::pair<std::string, std::string>>;

// The variables ascend-setup itself reads.
enum class EnvVar {
  log_level,           // ASCEND_SETUP_LOG_LEVEL
  virtual_env,         // VIRTUAL_ENV
  path,                // PATH
  wheel_name,          // [metadata] name_env
  version_override,    // [version] override_env
  version_suffix,      // [version] suffix_env
  manylinux,           // [switches] manylinux
  distributed,         // [switches] distributed
  coverage,            // [switches] coverage
  dev_mode,            // [switches] dev_mode
  release_mode,        // [switches] release_mode
  llvm_system_suffix,  // [llvm] suffix_env
  ir_tag,              // [build] ir_tag_env
  cmake_args,          // [coverage] cmake_args_env (upstream's extra cmake arguments)
  stable_abi,          // [wheel] stable_abi_env
  // The downloader (base/download/http_download.hpp).
  download_connections,    // ASCEND_SETUP_DOWNLOAD_CONNECTIONS
  download_attempts,       // ASCEND_SETUP_DOWNLOAD_ATTEMPTS
  download_stall_seconds,  // ASCEND_SETUP_DOWNLOAD_STALL_SECONDS
  download_backoff_ms,     // ASCEND_SETUP_DOWNLOAD_BACKOFF_MS
  package_mirror,          // ASCEND_SETUP_PACKAGE_MIRROR
  llvm_sha256,             // ASCEND_SETUP_LLVM_SHA256
  curl_ca_bundle,          // CURL_CA_BUNDLE
  ssl_cert_file,           // SSL_CERT_FILE
  requests_ca_bundle,      // REQUESTS_CA_BUNDLE
  ssl_cert_dir,            // SSL_CERT_DIR
  // The network of the downloads and the git fetches (network_settings_from_environment()).
  http_proxy,         // http_proxy
  http_proxy_upper,   // HTTP_PROXY
  https_proxy,        // https_proxy
  https_proxy_upper,  // HTTPS_PROXY
  all_proxy,          // all_proxy
  all_proxy_upper,    // ALL_PROXY
  no_proxy,           // no_proxy
  no_proxy_upper,     // NO_PROXY
  git_ssl_cainfo,     // GIT_SSL_CAINFO
  git_ssl_capath,     // GIT_SSL_CAPATH
  // The job counts (base/jobs/job_limits.hpp).
  cgroup_root,         // ASCEND_SETUP_CGROUP_ROOT
  meminfo,             // ASCEND_SETUP_MEMINFO
  max_jobs,            // MAX_JOBS (upstream's)
  parallel_link_jobs,  // TRITON_PARALLEL_LINK_JOBS (upstream's)
  source_date_epoch,   // SOURCE_DATE_EPOCH (the wheel's entry dates)
  native_wheel,        // ASCEND_SETUP_NATIVE_WHEEL (the native wheel writer on or off)
  // The distcc cluster (base/jobs/compile_cluster.hpp).
  distcc_hosts_ours,  // ASCEND_SETUP_DISTCC_HOSTS
  distcc_hosts,       // DISTCC_HOSTS (distcc's)
  distcc_probe_ms,    // ASCEND_SETUP_DISTCC_PROBE_MS
  ccache_prefix,      // CCACHE_PREFIX (ccache's)
  // The shared compile cache (base/jobs/compile_cache.hpp).
  compile_cache,          // ASCEND_SETUP_COMPILE_CACHE
  ccache_remote_storage,  // CCACHE_REMOTE_STORAGE (ccache's)
  ccache_basedir,         // CCACHE_BASEDIR (ccache's)
  ccache_statslog,        // CCACHE_STATSLOG (ccache's)
  home,                   // HOME
  triton_home,            // TRITON_HOME (upstream's)
  cflags,                 // CFLAGS (CMake's first configure)
  cxxflags,               // CXXFLAGS (CMake's first configure)
  // BishengIR and the NPUIR build (base/npuir/).
  npuir,             // [npuir] switch
  bishengir_path,    // [bishengir] path_env
  toolkit_home,      // [npuir] toolkit_env
  npuir_ccache_dir,  // [npuir] ccache_env
  // GitHub Actions' conventions (util/github_actions.hpp).
  github_actions,       // GITHUB_ACTIONS (the runner's)
  github_step_summary,  // GITHUB_STEP_SUMMARY (the runner's)
};

// The variable's name (from the profile; the tool's own need none).
std::string env_name(EnvVar var, const Profile* profile);

// Its value, nullopt when unset. Throws Error(usage) when not valid UTF-8.
std::optional<std::string> env_value(EnvVar var, const Profile* profile);

// A boolean variable read the way its readers read it: upstream's
// check_env_flag (ON, 1, YES, TRUE, Y in any case) for the build switches, the
// layer's own 1/on/true for the dev/release and coverage switches; unset
// means the row's default.
bool env_on(EnvVar var, const Profile& profile);

// Before anything else reads the environment: every variable of the registry
// that is set must be valid UTF-8 (Error(usage) naming the first that is not);
// a deprecated alias of the distributed switch is carried over to the new name
// with a warning (the new name wins when both are set); then the profile's
// defaults are set where the user set nothing. Returns the names it set.
std::vector<std::string> prepare_environment(const Profile& profile);

// setenv / unsetenv, remembered as set by ascend-setup for --list-env, with
// `why` (when not empty) added to the variable's description there as
// "; here: <why>".
void set_env(const std::string& name, const std::string& value, const std::string& why = {});
void unset_env(const std::string& name);

// One row of --list-env.
struct EnvEntry {
  std::string name;
  std::optional<std::string> value;  // nullopt: unset; as shown (its secrets masked)
  std::optional<std::string> default_value;
  std::string set_by;                // "user", "ascend-setup" or "unset"
  std::vector<std::string> read_by;  // "ascend-setup" and/or "setup.py"
  std::string description;
};

// Every variable of the registry for `profile` (the tool's own, the layer's,
// the profile's defaults, the coverage variables, with coverage off too),
// then those of `read_by_setup_py` (names upstream's setup.py read while it
// loaded) that are not rows already; rows read by setup.py say so. Values
// are as shown (util/shown_url.hpp): a URL's password and tokens masked, the
// whole value of a variable whose name says it is a secret (GITHUB_TOKEN).
std::vector<EnvEntry> list_environment(const Profile& profile,
                                       const std::set<std::string>& read_by_setup_py);

nlohmann::ordered_json to_json(const std::vector<EnvEntry>& entries);
std::string to_table(const std::vector<EnvEntry>& entries);

// The proxies and CA variables of the registry (lower case winning over
// upper case), for the downloads and the git fetches
// (util/network_settings.hpp). Throws Error(usage) for a value that is not
// valid UTF-8.
NetworkSettings network_settings_from_environment();

// GITHUB_ACTIONS ("true" on GitHub's runners) and GITHUB_STEP_SUMMARY (its
// step summary file, when set and not empty), through the registry.
GithubActions github_actions_from_environment();

// True when `text` is valid UTF-8 (no overlong forms, no surrogates).
bool is_valid_utf8(const std::string& text);

}  // namespace ascend_setup
