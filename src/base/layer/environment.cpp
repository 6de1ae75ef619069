#include "base/layer/environment.hpp"

#include "base/layer/profile.hpp"
#include "base/util/error.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>

namespace ascend_setup {

namespace {

// How a variable is read: text, a URL (which may hold a password or a
// token: --list-env shows it masked), upstream's check_env_flag, or the
// layer's own 1/on/true switch.
enum class Kind { text, url, flag, switch_ };

struct Row {
  EnvVar var;
  Kind kind;
  std::string (*name)(const Profile*);
  // Used when unset; for flags and switches also the listed default.
  std::optional<std::string> (*fallback)(const Profile*);
  const char* description;
};

std::optional<std::string> none(const Profile*) { return std::nullopt; }
std::optional<std::string> off(const Profile*) { return "OFF"; }

// The registry. Every name is a profile value except the tool's own.
const Row kRows[] = {
    {EnvVar::log_level, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_LOG_LEVEL"); },
     [](const Profile*) -> std::optional<std::string> { return "info"; },
     "ascend-setup's log level (trace, debug, info, warn, error); --log-level wins"},
    {EnvVar::virtual_env, Kind::text, [](const Profile*) { return std::string("VIRTUAL_ENV"); },
     none, "the active venv: its python is the interpreter to pose as unless --python is given"},
    {EnvVar::path, Kind::text, [](const Profile*) { return std::string("PATH"); }, none,
     "searched for --python NAME; the coverage tools' directory is put in front when coverage is "
     "on"},
    {EnvVar::wheel_name, Kind::text, [](const Profile* p) { return p->metadata.name_env; },
     [](const Profile* p) -> std::optional<std::string> { return p->metadata.default_name; },
     "the wheel's distribution name"},
    {EnvVar::version_override, Kind::text, [](const Profile* p) { return p->version.override_env; },
     none, "the version instead of the version file's"},
    {EnvVar::version_suffix, Kind::text, [](const Profile* p) { return p->version.suffix_env; },
     none, "appended to the version; a non-empty one makes the build a dev build"},
    {EnvVar::manylinux, Kind::flag, [](const Profile* p) { return p->switches.manylinux; }, off,
     "official manylinux build: no +git<hash> in the version, auditwheel repair, release patches "
     "unless the version is a dev one"},
    {EnvVar::distributed, Kind::flag, [](const Profile* p) { return p->switches.distributed; }, off,
     "build the distributed part (its clone, its package, its configure flag)"},
    {EnvVar::coverage, Kind::switch_, [](const Profile* p) { return p->switches.coverage; },
     [](const Profile*) -> std::optional<std::string> { return "0"; },
     "coverage tooling (hitest) for the build: 1, on or true"},
    {EnvVar::dev_mode, Kind::switch_, [](const Profile* p) { return p->switches.dev_mode; },
     [](const Profile*) -> std::optional<std::string> { return "0"; },
     "1, on or true: a dev build (the dev patch too); --dev/--release win"},
    {EnvVar::release_mode, Kind::switch_, [](const Profile* p) { return p->switches.release_mode; },
     [](const Profile*) -> std::optional<std::string> { return "0"; },
     "1, on or true: a release build (no dev patch); the dev switch wins"},
    {EnvVar::llvm_system_suffix, Kind::text, [](const Profile* p) { return p->llvm.suffix_env; },
     none, "the LLVM package's system suffix instead of the one detected"},
    {EnvVar::ir_tag, Kind::text, [](const Profile* p) { return p->build.ir_tag_env; }, none,
     "passed to CMake's configure call as the AscendNPU IR tag when set"},
    {EnvVar::cmake_args, Kind::text, [](const Profile* p) { return p->coverage.cmake_args_env; },
     none, "extra arguments of upstream's CMake configure call; coverage appends its flag"},
    {EnvVar::stable_abi, Kind::flag, [](const Profile* p) { return p->wheel.stable_abi_env; }, off,
     "a wheel for CPython's stable ABI: its tag is the profile's [wheel] stable_abi_tag"},
    // The downloader of the prebuilt packages (LLVM, ...): doc/downloads.md.
    {EnvVar::download_connections, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_DOWNLOAD_CONNECTIONS"); },
     [](const Profile*) -> std::optional<std::string> { return "8"; },
     "parallel range requests of a package download (1 to 64)"},
    {EnvVar::download_attempts, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_DOWNLOAD_ATTEMPTS"); },
     [](const Profile*) -> std::optional<std::string> { return "6"; },
     "failed requests in a row (with no byte between) before a download gives up"},
    {EnvVar::download_stall_seconds, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_DOWNLOAD_STALL_SECONDS"); },
     [](const Profile*) -> std::optional<std::string> { return "30"; },
     "a request below 1 KiB/s for this many seconds is a stall, retried"},
    {EnvVar::download_backoff_ms, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_DOWNLOAD_BACKOFF_MS"); },
     [](const Profile*) -> std::optional<std::string> { return "1000"; },
     "the first retry's delay in ms, doubled each time up to 30 s"},
    {EnvVar::package_mirror, Kind::url,
     [](const Profile*) { return std::string("ASCEND_SETUP_PACKAGE_MIRROR"); }, none,
     "a base URL tried first for every package, with the package URL's path under it "
     "(falls back to the package's own URL)"},
    {EnvVar::llvm_sha256, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_LLVM_SHA256"); }, none,
     "the LLVM package's SHA-256 (64 hex digits), checked whichever server sends it; wins over "
     "the profile's [llvm] sha256"},
    // The network of the downloads and the git fetches (doc/downloads.md).
    {EnvVar::curl_ca_bundle, Kind::text,
     [](const Profile*) { return std::string("CURL_CA_BUNDLE"); }, none,
     "CA bundle of the downloads and the git fetches (wins over SSL_CERT_FILE and "
     "REQUESTS_CA_BUNDLE)"},
    {EnvVar::ssl_cert_file, Kind::text, [](const Profile*) { return std::string("SSL_CERT_FILE"); },
     none, "CA bundle of the downloads and the git fetches when CURL_CA_BUNDLE is unset"},
    {EnvVar::requests_ca_bundle, Kind::text,
     [](const Profile*) { return std::string("REQUESTS_CA_BUNDLE"); }, none,
     "CA bundle of the downloads and the git fetches when CURL_CA_BUNDLE and SSL_CERT_FILE are "
     "unset"},
    {EnvVar::ssl_cert_dir, Kind::text, [](const Profile*) { return std::string("SSL_CERT_DIR"); },
     none, "CA directory of the downloads and the git fetches"},
    {EnvVar::git_ssl_cainfo, Kind::text,
     [](const Profile*) { return std::string("GIT_SSL_CAINFO"); }, none,
     "CA bundle of the git fetches (wins over git's http.sslCAInfo and the download's CA)"},
    {EnvVar::git_ssl_capath, Kind::text,
     [](const Profile*) { return std::string("GIT_SSL_CAPATH"); }, none,
     "CA directory of the git fetches (wins over git's http.sslCAPath and SSL_CERT_DIR)"},
    {EnvVar::http_proxy, Kind::url, [](const Profile*) { return std::string("http_proxy"); }, none,
     "proxy of http:// downloads and fetches (wins over HTTP_PROXY)"},
    {EnvVar::http_proxy_upper, Kind::url, [](const Profile*) { return std::string("HTTP_PROXY"); },
     none, "proxy of http:// downloads and fetches when http_proxy is unset"},
    {EnvVar::https_proxy, Kind::url, [](const Profile*) { return std::string("https_proxy"); },
     none, "proxy of https:// downloads and fetches, user:password@ in it (wins over HTTPS_PROXY)"},
    {EnvVar::https_proxy_upper, Kind::url,
     [](const Profile*) { return std::string("HTTPS_PROXY"); }, none,
     "proxy of https:// downloads and fetches when https_proxy is unset"},
    {EnvVar::all_proxy, Kind::url, [](const Profile*) { return std::string("all_proxy"); }, none,
     "proxy of a URL whose scheme has none set (wins over ALL_PROXY)"},
    {EnvVar::all_proxy_upper, Kind::url, [](const Profile*) { return std::string("ALL_PROXY"); },
     none, "proxy of a URL whose scheme has none set, when all_proxy is unset"},
    {EnvVar::no_proxy, Kind::text, [](const Profile*) { return std::string("no_proxy"); }, none,
     "hosts reached without a proxy: names (and their subdomains), IPs, networks, host:port, * "
     "(wins over NO_PROXY)"},
    {EnvVar::no_proxy_upper, Kind::text, [](const Profile*) { return std::string("NO_PROXY"); },
     none, "hosts reached without a proxy when no_proxy is unset"},
    // The job counts: doc/jobs.md.
    {EnvVar::cgroup_root, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_CGROUP_ROOT"); },
     [](const Profile*) -> std::optional<std::string> { return "/sys/fs/cgroup"; },
     "the cgroup file system the job counts read (a test points it at a fake one)"},
    {EnvVar::meminfo, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_MEMINFO"); },
     [](const Profile*) -> std::optional<std::string> { return "/proc/meminfo"; },
     "the file MemTotal is read from for the job counts"},
    {EnvVar::max_jobs, Kind::text, [](const Profile*) { return std::string("MAX_JOBS"); }, none,
     "upstream's compile job count; when unset, ascend-setup sets min(CPUs, memory / 2.5 GiB) "
     "of the cgroup's quota and limit"},
    {EnvVar::parallel_link_jobs, Kind::text,
     [](const Profile*) { return std::string("TRITON_PARALLEL_LINK_JOBS"); }, none,
     "upstream's link job count; when unset, ascend-setup sets min(compile jobs, memory / 4 GiB)"},
    {EnvVar::source_date_epoch, Kind::text,
     [](const Profile*) { return std::string("SOURCE_DATE_EPOCH"); }, none,
     "seconds since 1970: every wheel entry's date (the same input gives a byte-identical wheel)"},
    {EnvVar::native_wheel, Kind::switch_,
     [](const Profile*) { return std::string("ASCEND_SETUP_NATIVE_WHEEL"); },
     [](const Profile*) -> std::optional<std::string> { return "1"; },
     "1, on or true: bdist_wheel's archive is written by ascend-setup's parallel writer; 0: by the "
     "wheel package's WheelFile"},
    // The distcc cluster: doc/distcc.md.
    {EnvVar::distcc_hosts_ours, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_DISTCC_HOSTS"); }, none,
     "the distcc hosts of this build, in DISTCC_HOSTS' form (wins over DISTCC_HOSTS); set but "
     "empty: no distcc"},
    {EnvVar::distcc_hosts, Kind::text, [](const Profile*) { return std::string("DISTCC_HOSTS"); },
     none,
     "the distcc cluster: when set, compiles go through distcc; ascend-setup gives the build the "
     "hosts that answer"},
    {EnvVar::distcc_probe_ms, Kind::text,
     [](const Profile*) { return std::string("ASCEND_SETUP_DISTCC_PROBE_MS"); },
     [](const Profile*) -> std::optional<std::string> { return "1000"; },
     "how long the distcc hosts' probe waits for their connects, in ms (all hosts at once)"},
    {EnvVar::ccache_prefix, Kind::text, [](const Profile*) { return std::string("CCACHE_PREFIX"); },
     none,
     "what ccache runs the compiler through; ascend-setup sets distcc when compiling through "
     "distcc"},
    // The shared compile cache: doc/compile-cache.md.
    {EnvVar::compile_cache, Kind::url,
     [](const Profile*) { return std::string("ASCEND_SETUP_COMPILE_CACHE"); }, none,
     "a remote compile cache in ccache's syntax (redis://HOST:PORT or http://HOST:PORT/PATH, "
     "then ccache's attributes): every compile of the build reads and writes it, from any "
     "checkout directory and HOME"},
    {EnvVar::ccache_remote_storage, Kind::url,
     [](const Profile*) { return std::string("CCACHE_REMOTE_STORAGE"); }, none,
     "ccache's remote storage; ascend-setup sets ASCEND_SETUP_COMPILE_CACHE's URL (empty while "
     "its server does not answer)"},
    {EnvVar::ccache_basedir, Kind::text,
     [](const Profile*) { return std::string("CCACHE_BASEDIR"); }, none,
     "ccache's base directory; ascend-setup sets the tree's root with a compile cache"},
    {EnvVar::ccache_statslog, Kind::text,
     [](const Profile*) { return std::string("CCACHE_STATSLOG"); }, none,
     "ccache's per-compile log; ascend-setup sets build/ascend-setup/compile-cache.log with a "
     "compile cache"},
    {EnvVar::home, Kind::text, [](const Profile*) { return std::string("HOME"); }, none,
     "the user's home: with a compile cache, the configure call's paths under it are given "
     "through links in the CMake build directory"},
    {EnvVar::triton_home, Kind::text, [](const Profile*) { return std::string("TRITON_HOME"); },
     none,
     "upstream's cache root (.triton under it; HOME when unset): with a compile cache, the "
     "configure call's paths under it are given through links in the CMake build directory"},
    {EnvVar::cflags, Kind::text, [](const Profile*) { return std::string("CFLAGS"); }, none,
     "the C flags of a first configure; with a compile cache, the configure call's "
     "CMAKE_C_FLAGS (these, then the tree's prefix map)"},
    {EnvVar::cxxflags, Kind::text, [](const Profile*) { return std::string("CXXFLAGS"); }, none,
     "the C++ flags of a first configure; with a compile cache, the configure call's "
     "CMAKE_CXX_FLAGS (these, then the tree's prefix map)"},
    // BishengIR and the NPUIR build: doc/npuir.md.
    {EnvVar::npuir, Kind::flag, [](const Profile* p) { return p->npuir.switch_name; }, off,
     "build AscendNPU-IR (its submodule, nested repositories, build.sh) before setup.py, and "
     "put its BishengIR payload into the wheel"},
    {EnvVar::bishengir_path, Kind::text, [](const Profile* p) { return p->bishengir.path_env; },
     none,
     "a BishengIR payload directory (bin/, lib/) build_py copies into the wheel instead of the "
     "tree's"},
    {EnvVar::toolkit_home, Kind::text, [](const Profile* p) { return p->npuir.toolkit_env; }, none,
     "the Ascend toolkit's root (its set_env.sh sets it): the NPUIR build's bisheng compiler"},
    {EnvVar::npuir_ccache_dir, Kind::text, [](const Profile* p) { return p->npuir.ccache_env; },
     [](const Profile* p) -> std::optional<std::string> { return "<tree>/" + p->npuir.ccache_dir; },
     "ccache's directory for the NPUIR build (set for build.sh when unset)"},
    // GitHub Actions: doc/build-report.md.
    {EnvVar::github_actions, Kind::text,
     [](const Profile*) { return std::string("GITHUB_ACTIONS"); }, none,
     "true on GitHub's runners: long phases in collapsed groups, stale patch hunks and doctor "
     "findings as annotations"},
    {EnvVar::github_step_summary, Kind::text,
     [](const Profile*) { return std::string("GITHUB_STEP_SUMMARY"); }, none,
     "on GitHub Actions, the file the build summary is appended to as a Markdown table"},
};

const Row& row_of(EnvVar var) {
  for (const Row& row : kRows) {
    if (row.var == var) {
      return row;
    }
  }
  throw Error("internal error: environment variable without a registry row", ErrorKind::internal);
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// Names whose current value ascend-setup set (defaults, aliases, coverage,
// job counts, the cluster), each with why ("" when it has nothing to say).
std::map<std::string, std::string>& names_set_here() {
  static std::map<std::string, std::string> names;
  return names;
}

std::optional<std::string> read_raw(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) {
    return std::nullopt;
  }
  std::string text(value);
  if (!is_valid_utf8(text)) {
    throw Error(
        "the environment variable " + name + " is not valid UTF-8: set it to text (or unset it)",
        ErrorKind::usage);
  }
  return text;
}

std::optional<std::string> profile_default(const Profile& profile, const std::string& name) {
  for (const auto& [default_name, value] : profile.env_defaults) {
    if (default_name == name) {
      return value;
    }
  }
  return std::nullopt;
}

// `value` of the variable `name` as --list-env shows it (util/shown_url.hpp):
// a variable whose name says it is a secret masked whole, a URL's password
// and tokens masked, any URL inside other text too.
std::string shown_value(const Profile& profile, const std::string& name, const std::string& value) {
  if (names_a_secret(name)) {
    return value.empty() ? value : std::string(kMasked);
  }
  for (const Row& row : kRows) {
    if (row.kind == Kind::url && row.name(&profile) == name) {
      return shown_url(value);
    }
  }
  return shown_text(value);
}

// Every name of the registry for `profile`, with its row's data; the
// profile's lists (aliases, defaults, coverage) included.
std::vector<EnvEntry> registry_rows(const Profile& profile) {
  std::vector<EnvEntry> rows;
  auto add = [&rows](const std::string& name, std::optional<std::string> default_value,
                     std::vector<std::string> read_by, std::string description) {
    for (const EnvEntry& row : rows) {
      if (row.name == name) {
        return;
      }
    }
    rows.push_back({name, std::nullopt, std::move(default_value), "", std::move(read_by),
                    std::move(description)});
  };
  for (const Row& row : kRows) {
    const std::string name = row.name(&profile);
    if (name.empty()) {
      continue;  // from a table the profile does not have (e.g. [npuir])
    }
    std::optional<std::string> default_value = profile_default(profile, name);
    if (!default_value) {
      default_value = row.fallback(&profile);
    }
    add(name, default_value, {"ascend-setup"}, row.description);
  }
  // Read by others too: the job counts by setup.py, the cluster's variables
  // by distcc and ccache.
  const std::pair<EnvVar, const char*> also_read_by[] = {
      {EnvVar::max_jobs, "setup.py"},
      {EnvVar::parallel_link_jobs, "setup.py"},
      {EnvVar::distcc_hosts, "distcc"},
      {EnvVar::ccache_prefix, "ccache"},
      {EnvVar::ccache_remote_storage, "ccache"},
      {EnvVar::ccache_basedir, "ccache"},
      {EnvVar::ccache_statslog, "ccache"},
      {EnvVar::triton_home, "setup.py"},
  };
  for (EnvEntry& entry : rows) {
    for (const auto& [var, reader] : also_read_by) {
      if (entry.name == row_of(var).name(&profile)) {
        entry.read_by.push_back(reader);
      }
    }
  }
  for (const std::string& alias : profile.switches.distributed_aliases) {
    add(alias, std::nullopt, {"ascend-setup"},
        "deprecated name of " + profile.switches.distributed +
            " (that one wins when both are set)");
  }
  for (const auto& [name, value] : profile.env_defaults) {
    add(name, value, {"setup.py"}, "the Ascend default for upstream's setup.py (set when unset)");
  }
  for (const auto& [name, value] : profile.coverage.inputs) {
    add(name, value, {"ascend-setup"}, "coverage (hitest) input, read when coverage is on");
  }
  std::map<std::string, std::string> inputs(profile.coverage.inputs.begin(),
                                            profile.coverage.inputs.end());
  for (const auto& [name, value] : profile.coverage.set) {
    add(name, expand_placeholders(value, inputs), {"ascend-setup"},
        "set for the coverage tools when coverage is on, removed when it is off");
  }
  for (const auto& [name, value] : profile.coverage.prepend_paths) {
    add(name, std::nullopt, {"ascend-setup"},
        "the coverage tools' directory is put in front when coverage is on");
  }
  return rows;
}

}  // namespace

GithubActions github_actions_from_environment() {
  GithubActions github;
  github.on = env_value(EnvVar::github_actions, nullptr) == "true";
  if (auto file = env_value(EnvVar::github_step_summary, nullptr); file && !file->empty()) {
    github.step_summary = *file;
  }
  return github;
}

NetworkSettings network_settings_from_environment() {
  // The lower case name wins when both are set, as curl has it.
  const auto either = [](EnvVar lower, EnvVar upper) -> std::optional<NetworkVariable> {
    for (const EnvVar var : {lower, upper}) {
      if (auto value = env_value(var, nullptr)) {
        return NetworkVariable{env_name(var, nullptr), *value};
      }
    }
    return std::nullopt;
  };
  const auto one = [](EnvVar var) -> std::optional<NetworkVariable> {
    if (auto value = env_value(var, nullptr)) {
      return NetworkVariable{env_name(var, nullptr), *value};
    }
    return std::nullopt;
  };
  NetworkSettings settings;
  settings.http_proxy = either(EnvVar::http_proxy, EnvVar::http_proxy_upper);
  settings.https_proxy = either(EnvVar::https_proxy, EnvVar::https_proxy_upper);
  settings.all_proxy = either(EnvVar::all_proxy, EnvVar::all_proxy_upper);
  settings.no_proxy = either(EnvVar::no_proxy, EnvVar::no_proxy_upper);
  settings.curl_ca_bundle = one(EnvVar::curl_ca_bundle);
  settings.ssl_cert_file = one(EnvVar::ssl_cert_file);
  settings.requests_ca_bundle = one(EnvVar::requests_ca_bundle);
  settings.ssl_cert_dir = one(EnvVar::ssl_cert_dir);
  settings.git_ssl_cainfo = one(EnvVar::git_ssl_cainfo);
  settings.git_ssl_capath = one(EnvVar::git_ssl_capath);
  return settings;
}

bool is_valid_utf8(const std::string& text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  for (size_t i = 0; i < size;) {
    const unsigned char lead = bytes[i];
    if (lead == 0) {
      return false;
    }
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    unsigned code = 0;
    if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07;
    } else {
      return false;
    }
    if (i + length > size) {
      return false;
    }
    for (size_t k = 1; k < length; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) {
        return false;
      }
      code = (code << 6) | (bytes[i + k] & 0x3F);
    }
    const unsigned minimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < minimum[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

std::string env_name(EnvVar var, const Profile* profile) { return row_of(var).name(profile); }

std::optional<std::string> env_value(EnvVar var, const Profile* profile) {
  return read_raw(env_name(var, profile));
}

bool env_on(EnvVar var, const Profile& profile) {
  const Row& row = row_of(var);
  const std::string value =
      upper(env_value(var, &profile).value_or(row.fallback(&profile).value_or("")));
  if (row.kind == Kind::switch_) {
    return value == "1" || value == "ON" || value == "TRUE";
  }
  return value == "ON" || value == "1" || value == "YES" || value == "TRUE" || value == "Y";
}

void set_env(const std::string& name, const std::string& value, const std::string& why) {
  ::setenv(name.c_str(), value.c_str(), 1);
  names_set_here()[name] = why;
}

void unset_env(const std::string& name) {
  ::unsetenv(name.c_str());
  names_set_here().erase(name);
}

std::vector<std::string> prepare_environment(const Profile& profile) {
  for (const EnvEntry& row : registry_rows(profile)) {
    read_raw(row.name);
  }
  const std::string& name = profile.switches.distributed;
  for (const std::string& alias : profile.switches.distributed_aliases) {
    const auto old_value = read_raw(alias);
    if (!old_value) {
      continue;
    }
    if (read_raw(name)) {
      spdlog::warn("{} is deprecated and ignored: {} is set too and wins", alias, name);
    } else {
      spdlog::warn("{} is deprecated: use {} (taken as {}={})", alias, name, name, *old_value);
      set_env(name, *old_value);
    }
  }
  std::vector<std::string> set_names;
  for (const auto& [default_name, value] : profile.env_defaults) {
    if (!read_raw(default_name)) {
      set_env(default_name, value);
      set_names.push_back(default_name);
    }
  }
  return set_names;
}

std::vector<EnvEntry> list_environment(const Profile& profile,
                                       const std::set<std::string>& read_by_setup_py) {
  std::vector<EnvEntry> rows = registry_rows(profile);
  std::set<std::string> listed;
  for (EnvEntry& row : rows) {
    listed.insert(row.name);
    if (read_by_setup_py.count(row.name) != 0 &&
        std::find(row.read_by.begin(), row.read_by.end(), "setup.py") == row.read_by.end()) {
      row.read_by.push_back("setup.py");
    }
  }
  for (const std::string& name : read_by_setup_py) {
    if (listed.count(name) == 0) {
      rows.push_back({name,
                      std::nullopt,
                      std::nullopt,
                      "",
                      {"setup.py"},
                      "read by upstream's setup.py while it loads"});
    }
  }
  for (EnvEntry& row : rows) {
    const char* value = std::getenv(row.name.c_str());
    if (value != nullptr) {
      row.value = is_valid_utf8(value) ? shown_value(profile, row.name, value)
                                       : std::string("(not valid UTF-8)");
    }
    row.set_by = value == nullptr                        ? "unset"
                 : names_set_here().count(row.name) != 0 ? "ascend-setup"
                                                         : "user";
    if (row.set_by == "ascend-setup" && !names_set_here()[row.name].empty()) {
      row.description += "; here: " + names_set_here()[row.name];
    }
  }
  return rows;
}

nlohmann::ordered_json to_json(const std::vector<EnvEntry>& entries) {
  auto optional = [](const std::optional<std::string>& text) {
    return text ? nlohmann::ordered_json(*text) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const EnvEntry& entry : entries) {
    array.push_back({{"name", entry.name},
                     {"value", optional(entry.value)},
                     {"default", optional(entry.default_value)},
                     {"set_by", entry.set_by},
                     {"read_by", entry.read_by},
                     {"description", entry.description}});
  }
  return array;
}

std::string to_table(const std::vector<EnvEntry>& entries) {
  size_t width = 0;
  for (const EnvEntry& entry : entries) {
    width = std::max(width, entry.name.size());
  }
  std::ostringstream out;
  for (const EnvEntry& entry : entries) {
    std::string readers;
    for (const std::string& reader : entry.read_by) {
      readers += (readers.empty() ? "" : ", ") + reader;
    }
    out << entry.name << std::string(width + 2 - entry.name.size(), ' ')
        << (entry.value ? "= " + *entry.value : std::string("(unset)")) << "  [" << entry.set_by
        << "]\n";
    out << std::string(width + 2, ' ') << entry.description;
    if (entry.default_value) {
      out << "; default " << (entry.default_value->empty() ? "empty" : *entry.default_value);
    }
    out << "; read by " << readers << "\n";
  }
  return out.str();
}

}  // namespace ascend_setup
