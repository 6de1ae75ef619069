#include "base/layer/profile.hpp"

#include "base/util/error.hpp"
#include "base/util/text_file.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <set>

namespace ascend_setup {

namespace {

// Reads one TOML table, remembering which keys were used so that unknown
// keys (typos) are reported instead of silently ignored.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, const std::string& source)
      : table_(table), path_(std::move(path)), source_(source) {}

  std::string string(const std::string& key) {
    const toml::node& node = require(key);
    if (const auto* value = node.as_string()) {
      return value->get();
    }
    fail(node, key, "expected a string");
  }

  // A string that must be one of `choices`.
  std::string choice(const std::string& key, const std::vector<std::string>& choices) {
    const toml::node& node = require(key);
    const auto* value = node.as_string();
    for (const std::string& allowed : choices) {
      if (value != nullptr && value->get() == allowed) {
        return allowed;
      }
    }
    std::string expected;
    for (const std::string& allowed : choices) {
      expected += (expected.empty() ? "\"" : " or \"") + allowed + "\"";
    }
    fail(node, key, "expected " + expected);
  }

  bool boolean(const std::string& key, bool fallback) {
    const toml::node* node = find(key);
    if (node == nullptr) {
      return fallback;
    }
    if (const auto* value = node->as_boolean()) {
      return value->get();
    }
    fail(*node, key, "expected true or false");
  }

  // An integer within [minimum, maximum]: a length or a version can be neither
  // negative nor huge.
  int integer(const std::string& key, int minimum, int maximum) {
    const toml::node& node = require(key);
    const auto* value = node.as_integer();
    if (value == nullptr || value->get() < minimum || value->get() > maximum) {
      fail(
          node, key,
          "expected an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum));
    }
    return static_cast<int>(value->get());
  }

  std::vector<std::string> strings(const std::string& key) {
    const toml::node& node = require(key);
    return string_array(node, key);
  }

  // An array of [name, value] string pairs.
  EnvList pairs(const std::string& key) {
    const toml::node& node = require(key);
    const auto* array = node.as_array();
    if (array == nullptr) {
      fail(node, key, "expected an array of [name, value] pairs");
    }
    EnvList result;
    for (const toml::node& item : *array) {
      std::vector<std::string> pair = string_array(item, key);
      if (pair.size() != 2) {
        fail(item, key, "expected a [name, value] pair of two strings");
      }
      result.emplace_back(pair[0], pair[1]);
    }
    return result;
  }

  // A table whose every value is an array of strings.
  std::map<std::string, std::vector<std::string>> string_lists(const std::string& key) {
    TableReader inner = table(key);
    std::map<std::string, std::vector<std::string>> result;
    for (const auto& [name, node] : inner.table_) {
      const std::string name_text(name.str());
      result[name_text] = inner.strings(name_text);
    }
    inner.finish();
    return result;
  }

  // Absent: empty.
  std::vector<std::string> optional_strings(const std::string& key) {
    const toml::node* node = find(key);
    return node == nullptr ? std::vector<std::string>() : string_array(*node, key);
  }

  // Every key of this table, each an array of inline tables (key "" = this table).
  std::vector<std::pair<std::string, std::vector<TableReader>>> tables(const std::string&) {
    std::vector<std::pair<std::string, std::vector<TableReader>>> result;
    for (const auto& [name, node] : table_) {
      const std::string name_text(name.str());
      used_.insert(name_text);
      const auto* array = node.as_array();
      if (array == nullptr) {
        fail(node, name_text, "expected an array of tables");
      }
      std::vector<TableReader> entries;
      for (const toml::node& item : *array) {
        const auto* inner = item.as_table();
        if (inner == nullptr) {
          fail(item, name_text, "expected an array of tables");
        }
        entries.emplace_back(*inner, qualified(name_text), source_);
      }
      result.emplace_back(name_text, std::move(entries));
    }
    return result;
  }

  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const {
    const toml::node* node = table_.get(key);
    fail(node != nullptr ? *node : static_cast<const toml::node&>(table_), key, what);
  }

  TableReader table(const std::string& key) {
    const toml::node& node = require(key);
    if (const auto* value = node.as_table()) {
      return TableReader(*value, qualified(key), source_);
    }
    fail(node, key, "expected a table");
  }

  void finish() const {
    for (const auto& [name, node] : table_) {
      if (used_.count(std::string(name.str())) == 0) {
        fail(node, std::string(name.str()), "unknown key");
      }
    }
  }

 private:
  const toml::node* find(const std::string& key) {
    used_.insert(key);
    return table_.get(key);
  }

  const toml::node& require(const std::string& key) {
    const toml::node* node = find(key);
    if (node == nullptr) {
      throw Error(source_ + ":" + std::to_string(table_.source().begin.line) + ": missing key '" +
                  qualified(key) + "'");
    }
    return *node;
  }

  std::vector<std::string> string_array(const toml::node& node, const std::string& key) {
    const auto* array = node.as_array();
    if (array == nullptr) {
      fail(node, key, "expected an array of strings");
    }
    std::vector<std::string> result;
    for (const toml::node& item : *array) {
      const auto* value = item.as_string();
      if (value == nullptr) {
        fail(item, key, "expected an array of strings");
      }
      result.push_back(value->get());
    }
    return result;
  }

  [[noreturn]] void fail(const toml::node& node, const std::string& key,
                         const std::string& what) const {
    throw Error(source_ + ":" + std::to_string(node.source().begin.line) + ": key '" +
                qualified(key) + "': " + what);
  }

  std::string qualified(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  const toml::table& table_;
  std::string path_;
  const std::string& source_;
  std::set<std::string> used_;
};

// [patch_points]: per override, an array of inline tables.
std::vector<PatchPoint> read_patch_points(TableReader table) {
  std::vector<PatchPoint> points;
  for (auto& [override_name, entries] : table.tables("")) {
    for (TableReader& entry : entries) {
      PatchPoint point;
      point.override_name = override_name;
      point.id = entry.string("id");
      point.kind = entry.string("kind");
      point.aliases = entry.optional_strings("aliases");
      point.params = entry.optional_strings("params");
      if (point.kind != "function" && point.kind != "class" && point.kind != "variable" &&
          point.kind != "method") {
        entry.fail_key("kind", "expected function, class, variable or method");
      }
      if ((point.kind == "method") != (point.id.find('.') != std::string::npos)) {
        entry.fail_key("id", "a method's id is Class.method; other ids have no dot");
      }
      entry.finish();
      points.push_back(std::move(point));
    }
  }
  for (const PatchPoint& point : points) {
    const std::string owner = point.class_id();
    if (!owner.empty() && std::none_of(points.begin(), points.end(), [&](const PatchPoint& p) {
          return p.id == owner && p.kind == "class";
        })) {
      table.fail_key(point.override_name,
                     "the method " + point.id + " needs its class " + owner + " as a patch point");
    }
  }
  return points;
}

PatchFile read_patch_file(TableReader table) {
  PatchFile patch;
  patch.file = table.string("file");
  patch.optional = table.boolean("optional", false);
  table.finish();
  return patch;
}

}  // namespace

Profile parse_profile(std::string_view text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    throw Error(source + ":" + std::to_string(error.source().begin.line) +
                ": malformed TOML: " + std::string(error.description()));
  }

  Profile profile;
  profile.source = source;
  TableReader top(root, "", source);

  TableReader header = top.table("profile");
  profile.name = header.string("name");
  header.finish();

  TableReader environment = top.table("environment");
  profile.env_defaults = environment.pairs("defaults");
  environment.finish();

  TableReader switches = top.table("switches");
  profile.switches = {switches.string("distributed"),  switches.string("manylinux"),
                      switches.string("coverage"),     switches.string("dev_mode"),
                      switches.string("release_mode"), switches.strings("distributed_aliases")};
  switches.finish();

  TableReader mode = top.table("mode");
  profile.mode_rule = mode.choice("rule", {"manylinux", "branch"}) == "manylinux"
                          ? Profile::ModeRule::manylinux
                          : Profile::ModeRule::branch;
  mode.finish();

  TableReader backend = top.table("backend");
  profile.backend_name = backend.string("name");
  backend.finish();

  TableReader version = top.table("version");
  profile.version = {version.string("file"), version.string("fallback"),
                     version.string("override_env"), version.string("suffix_env"),
                     version.integer("git_hash_length", 1, 40)};
  version.finish();

  TableReader metadata = top.table("metadata");
  profile.metadata.name_env = metadata.string("name_env");
  profile.metadata.default_name = metadata.string("default_name");
  profile.metadata.url = metadata.string("url");
  profile.metadata.readme = metadata.string("readme");
  profile.metadata.readme_content_type = metadata.string("readme_content_type");
  profile.metadata.install_requires = metadata.strings("install_requires");
  profile.metadata.install_requires_by_arch = metadata.string_lists("install_requires_by_arch");
  metadata.finish();

  profile.architectures = top.string_lists("architectures");

  TableReader llvm = top.table("llvm");
  Profile::Llvm& l = profile.llvm;
  l.hash_file = llvm.string("hash_file");
  l.rev_length = llvm.integer("rev_length", 1, 40);
  l.patch_dir = llvm.string("patch_dir");
  l.patch_prefix = llvm.string("patch_prefix");
  l.patch_suffix = llvm.string("patch_suffix");
  l.patch_hash_length = llvm.integer("patch_hash_length", 1, 64);
  l.no_patch_hash = llvm.string("no_patch_hash");
  l.name = llvm.string("name");
  l.sym_name = llvm.string("sym_name");
  l.url = llvm.string("url");
  l.suffix_env = llvm.string("suffix_env");
  l.include_flag = llvm.string("include_flag");
  l.lib_flag = llvm.string("lib_flag");
  l.syspath_var = llvm.string("syspath_var");
  l.user_configured_name = llvm.string("user_configured_name");
  l.ubuntu_min_glibc = llvm.integer("ubuntu_min_glibc", 100, 9999);
  llvm.finish();

  TableReader patches = top.table("patches");
  profile.patches.directory = patches.string("directory");
  profile.patches.main = read_patch_file(patches.table("main"));
  profile.patches.dev = read_patch_file(patches.table("dev"));
  patches.finish();

  TableReader build = top.table("build");
  profile.build.min_cmake = build.string("min_cmake");
  profile.build.ir_tag_env = build.string("ir_tag_env");
  profile.build.ir_tag_arg = build.string("ir_tag_arg");
  profile.build.cmake_args = build.strings("cmake_args");
  profile.build.distributed_arg = build.string("distributed_arg");
  profile.build.tools = build.strings("tools");
  build.finish();

  TableReader wheel = top.table("wheel");
  profile.wheel.manylinux_platforms = wheel.strings("manylinux_platforms");
  profile.wheel.linux_wheel_glob = wheel.string("linux_wheel_glob");
  wheel.finish();

  TableReader distributed = top.table("distributed");
  profile.distributed.directory = distributed.string("directory");
  profile.distributed.url = distributed.string("url");
  profile.distributed.branch = distributed.string("branch");
  profile.distributed.pin = distributed.string("pin");
  profile.distributed.package = distributed.string("package");
  profile.distributed.package_root = distributed.string("package_root");
  profile.distributed.package_data = distributed.strings("package_data");
  profile.distributed.link = distributed.string("link");
  distributed.finish();

  TableReader coverage = top.table("coverage");
  profile.coverage.cmake_arg = coverage.string("cmake_arg");
  profile.coverage.cmake_args_env = coverage.string("cmake_args_env");
  profile.coverage.inputs = coverage.pairs("inputs");
  profile.coverage.set = coverage.pairs("set");
  profile.coverage.prepend_paths = coverage.pairs("prepend_paths");
  profile.coverage.clean_prefixes = coverage.strings("clean_prefixes");
  profile.coverage.clean_names = coverage.strings("clean_names");
  coverage.finish();

  TableReader upstream = top.table("upstream");
  profile.upstream = {upstream.string("version"), upstream.string("version_variable"),
                      upstream.string("pin"), upstream.string("cmake_lists")};
  upstream.finish();

  profile.patch_points = read_patch_points(top.table("patch_points"));

  top.finish();

  if (profile.version.git_hash_length < 4 || profile.version.git_hash_length > 40) {
    throw Error(source + ": key 'version.git_hash_length': expected a number from 4 to 40");
  }
  if (profile.distributed.pin.size() != 40 ||
      profile.distributed.pin.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw Error(source + ": key 'distributed.pin': expected a full commit id (40 hex digits)");
  }
  for (const auto& [arch, names] : profile.architectures) {
    if (profile.metadata.install_requires_by_arch.count(arch) == 0) {
      throw Error(source +
                  ": key 'metadata.install_requires_by_arch': no entry for architecture '" + arch +
                  "' listed under [architectures]");
    }
  }
  return profile;
}

Profile load_profile_file(const std::filesystem::path& path) {
  auto text = read_text_file(path);
  if (!text) {
    throw Error("cannot read profile " + path.string());
  }
  return parse_profile(*text, path.string());
}

std::vector<std::string> PatchPoint::names() const {
  std::vector<std::string> result = {id.substr(id.rfind('.') + 1)};
  result.insert(result.end(), aliases.begin(), aliases.end());
  return result;
}

std::string PatchPoint::class_id() const {
  const auto dot = id.find('.');
  return dot == std::string::npos ? "" : id.substr(0, dot);
}

std::string architecture_key(const Profile& profile, const std::string& machine) {
  std::string known;
  for (const auto& [arch, names] : profile.architectures) {
    for (const std::string& name : names) {
      if (name == machine) {
        return arch;
      }
      known += (known.empty() ? "" : ", ") + name;
    }
  }
  throw Error("unsupported architecture '" + machine + "': the profile (" + profile.source +
              ") knows " + known);
}

}  // namespace ascend_setup
