#include "base/jobs/compile_cache.hpp"

#include "base/layer/environment.hpp"
#include "base/tree/build_lock.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/executable_search.hpp"
#include "base/util/numbers.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/staged_replacement.hpp"
#include "base/util/strings.hpp"
#include "base/util/system_error.hpp"
#include "base/util/tcp_probe.hpp"
#include "base/util/whole_file.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr std::chrono::milliseconds kProbeTimeout{1000};

// ccache 4's attributes of a remote storage.
const char* const kAttributes[] = {"bearer-token",      "connect-timeout", "keep-alive", "layout",
                                   "operation-timeout", "read-only",       "shards"};

Error bad_url(const std::string& text, const std::string& why) {
  return Error(fmt::format("{} `{}`: {} (a URL such as redis://HOST:PORT or "
                           "http://HOST:PORT/PATH, then |ATTRIBUTE=VALUE attributes)",
                           env_name(EnvVar::compile_cache, nullptr), shown_url(text), why),
               ErrorKind::usage);
}

CompileCache& applied_cache() {
  static CompileCache cache;
  return cache;
}

// The path under `root` (lexically), else nullopt.
std::optional<fs::path> under(const fs::path& path, const fs::path& root) {
  if (root.empty() || !root.is_absolute()) {
    return std::nullopt;
  }
  const fs::path relative = path.lexically_normal().lexically_relative(root.lexically_normal());
  if (relative.empty() || *relative.begin() == ".." || relative == ".") {
    return std::nullopt;
  }
  return relative;
}

// `value` given through a link in the build directory (where the configure
// call and every compile run) when it is a path under TRITON_HOME or HOME and
// not in the tree: `link_dir`/<first component under the root> points at
// <root>/<first component>. ccache makes a path under its base directory
// relative both as given and resolved, and keeps the shorter: from the
// build directory, the link's path is a strict suffix of the resolved one, so
// it always wins. One name for both roots, so that a machine with TRITON_HOME
// and one without give the same path; `made`: the links of this call, a name
// never made twice; a name the build directory holds otherwise is left alone.
std::string linked_value(const CompileCache& cache, const std::string& value,
                         const fs::path& link_dir, std::map<fs::path, fs::path>& made) {
  const fs::path path(value);
  if (!path.is_absolute() || under(path, cache.tree)) {
    return value;
  }
  for (const EnvVar var : {EnvVar::triton_home, EnvVar::home}) {
    const auto root = env_value(var, nullptr);
    if (!root) {
      continue;
    }
    const auto relative = under(path, *root);
    if (!relative) {
      continue;
    }
    const fs::path first = *relative->begin();
    const fs::path target = fs::path(*root).lexically_normal() / first;
    if (under(cache.tree, target) || target == cache.tree.lexically_normal()) {
      return value;  // the tree is inside: a link would hold the tree itself
    }
    if (const auto known = made.find(first); known != made.end() && known->second != target) {
      return value;  // the name links elsewhere already
    }
    const fs::path link = link_dir / first;
    std::error_code ec;
    const auto status = fs::symlink_status(link, ec);
    if (fs::exists(status) && !fs::is_symlink(status)) {
      return value;
    }
    // The build lock is held: no other run of this tree makes it at the same time.
    point_symlink_at(link, target);
    made[first] = target;
    return (link / relative->lexically_relative(first)).lexically_normal().string();
  }
  return value;
}

// The name a `-DNAME=value` or `-DNAME:TYPE=value` argument sets, else "".
std::string defined_name(const std::string& arg) {
  if (arg.rfind("-D", 0) != 0 || arg.find('=') == std::string::npos) {
    return "";
  }
  return arg.substr(2, arg.find_first_of(":=") - 2);
}

}  // namespace

CompileCacheUrl parse_compile_cache_url(const std::string& text) {
  CompileCacheUrl url;
  url.text = text;
  if (text.find_first_of(" \t\r\n") != std::string::npos) {
    throw bad_url(text, "one storage only, without blanks");
  }
  std::vector<std::string> parts;
  std::istringstream pieces(text);
  for (std::string part; std::getline(pieces, part, '|');) {
    parts.push_back(part);
  }
  if (parts.empty() || parts[0].empty()) {
    throw bad_url(text, "no URL");
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t equals = parts[i].find('=');
    const std::string name = parts[i].substr(0, equals);
    if (equals == std::string::npos || name.empty()) {
      throw bad_url(text, fmt::format("the attribute `{}` is not NAME=VALUE", parts[i]));
    }
    if (std::find(std::begin(kAttributes), std::end(kAttributes), name) == std::end(kAttributes)) {
      std::vector<std::string> known(std::begin(kAttributes), std::end(kAttributes));
      throw bad_url(text, fmt::format("unknown attribute `{}` ({})", name, join(known)));
    }
    url.attributes.emplace_back(name, parts[i].substr(equals + 1));
  }
  const std::string& main = parts[0];
  const size_t colon = main.find("://");
  if (colon == std::string::npos) {
    throw bad_url(text, "no scheme");
  }
  url.scheme = main.substr(0, colon);
  if (url.scheme == "https") {
    throw bad_url(text, "ccache's http storage has no TLS: use http:// (a proxy can add TLS)");
  }
  if (url.scheme != "redis" && url.scheme != "http") {
    throw bad_url(text, fmt::format("the scheme `{}` is not redis or http", url.scheme));
  }
  const size_t authority_start = colon + 3;
  const size_t path_start = std::min(main.find('/', authority_start), main.size());
  std::string authority = main.substr(authority_start, path_start - authority_start);
  const std::string path = main.substr(path_start);
  if (const size_t at = authority.rfind('@'); at != std::string::npos) {
    authority = authority.substr(at + 1);
  }
  size_t port_mark = std::string::npos;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) {
      throw bad_url(text, "`[` without `]`");
    }
    url.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        throw bad_url(text, "text after `]` that is not `:PORT`");
      }
      port_mark = close + 1;
    }
  } else {
    port_mark = authority.find(':');
    url.host = authority.substr(0, port_mark);
  }
  if (url.host.empty()) {
    throw bad_url(text, "no host");
  }
  url.port = url.scheme == "redis" ? 6379 : 80;
  if (port_mark != std::string::npos) {
    const std::string port = authority.substr(port_mark + 1);
    const auto number = parse_integer(port, 1, 65535);
    if (!number) {
      throw bad_url(text, fmt::format("the port `{}` is not a whole number from 1 to 65535", port));
    }
    url.port = *number;
  }
  if (url.scheme == "redis" && !path.empty() && path != "/" &&
      !parse_integer(std::string_view(path).substr(1), 0, 1 << 20)) {
    throw bad_url(text, fmt::format("redis's path `{}` is not /DATABASE-NUMBER", path));
  }
  url.shown = shown_url(main);
  return url;
}

CompileCache plan_compile_cache(const fs::path& tree) {
  CompileCache cache;
  cache.tree = tree;
  const auto text = env_value(EnvVar::compile_cache, nullptr);
  if (!text || trim(*text).empty()) {
    return cache;
  }
  cache.url = parse_compile_cache_url(trim(*text));
  const auto ccache = find_executable("ccache", env_value(EnvVar::path, nullptr));
  if (!ccache) {
    spdlog::warn("{} is set but there is no ccache on PATH: compiling without the compile cache",
                 env_name(EnvVar::compile_cache, nullptr));
    return cache;
  }
  cache.ccache = *ccache;
  cache.active = true;
  const std::string why = probe_tcp_endpoints({{cache.url.host, cache.url.port}}, kProbeTimeout)[0];
  if (!why.empty()) {
    spdlog::warn(
        "the compile cache {} does not answer ({}): this build compiles with the local "
        "cache only",
        cache.url.shown, why);
    return cache;
  }
  cache.remote = true;
  return cache;
}

const CompileCache& apply_compile_cache(const fs::path& tree, bool starting) {
  CompileCache& cache = applied_cache();
  cache = plan_compile_cache(tree);
  if (!cache.active) {
    std::error_code ignored;
    if (starting && fs::exists(compile_cache_log_path(tree), ignored)) {
      // An earlier build's log is not this build's: the report would mark
      // its hits on this build's jobs. Removed under the build lock: another
      // build of this tree may be writing it.
      take_build_lock(tree);
      fs::remove(compile_cache_log_path(tree), ignored);
    }
    return cache;
  }
  const std::string name = env_name(EnvVar::compile_cache, nullptr);
  set_env(env_name(EnvVar::ccache_remote_storage, nullptr), cache.remote ? cache.url.text : "",
          cache.remote ? "the storage of " + name : "the server of " + name + " does not answer");
  set_env(env_name(EnvVar::ccache_basedir, nullptr), tree.string(),
          "the tree's root: the paths of its compiles hashed relative to it");
  const fs::path log = compile_cache_log_path(tree);
  set_env(env_name(EnvVar::ccache_statslog, nullptr), log.string(),
          "this build's compiles, for the summary");
  if (starting) {
    // Emptied under the build lock, held from here until the build's report
    // is written: another build of this tree would empty this build's log.
    take_build_lock(tree);
    try {
      fs::create_directories(log.parent_path());
    } catch (const fs::filesystem_error& error) {
      throw system_error(error);
    }
    write_whole_file(log, "");
  }
  spdlog::log(starting ? spdlog::level::info : spdlog::level::debug,
              "compile cache: {} through ccache ({}), base directory {}",
              cache.remote ? cache.url.shown : "the local cache only", cache.ccache.string(),
              tree.string());
  return cache;
}

const CompileCache& compile_cache() { return applied_cache(); }

std::string compile_cache_prefix_map(const CompileCache& cache) {
  return "-ffile-prefix-map=" + cache.tree.string() + "=.";
}

std::vector<std::string> compile_cache_configure_call(const CompileCache& cache,
                                                      std::vector<std::string> call,
                                                      const fs::path& build_dir) {
  if (!cache.active) {
    return call;
  }
  const std::string map = compile_cache_prefix_map(cache);
  const std::pair<const char*, EnvVar> flags[] = {{"CMAKE_C_FLAGS", EnvVar::cflags},
                                                  {"CMAKE_CXX_FLAGS", EnvVar::cxxflags}};
  std::vector<std::string> names;
  std::map<fs::path, fs::path> made;
  for (std::string& arg : call) {
    const std::string name = defined_name(arg);
    if (name.empty()) {
      continue;
    }
    names.push_back(name);
    const size_t equals = arg.find('=');
    std::string value = arg.substr(equals + 1);
    const bool is_flags = std::any_of(std::begin(flags), std::end(flags),
                                      [&](const auto& flag) { return name == flag.first; });
    if (is_flags) {
      if (value.find(map) == std::string::npos) {
        value += (value.empty() ? "" : " ") + map;
      }
    } else {
      value = linked_value(cache, value, build_dir, made);
    }
    arg = arg.substr(0, equals + 1) + value;
  }
  const auto named = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const auto& [variable, environment] : flags) {
    if (!named(variable)) {
      // As CMake's first configure takes them.
      const std::string value = trim(env_value(environment, nullptr).value_or(""));
      call.push_back(fmt::format("-D{}={}{}", variable, value.empty() ? "" : value + " ", map));
    }
  }
  for (const char* language : {"C", "CXX"}) {
    const std::string variable = fmt::format("CMAKE_{}_COMPILER_LAUNCHER", language);
    if (!named(variable)) {
      call.push_back("-D" + variable + "=" + cache.ccache.string());
    }
  }
  return call;
}

}  // namespace ascend_setup
