#include "base/layer/profile.hpp"

#include "base/layer/profile_table_reader.hpp"
#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "base/util/whole_file.hpp"

#include <toml++/toml.h>

#include <algorithm>

namespace ascend_setup {

namespace {

// One reader per TOML table of the profile; each validates its own keys (one
// limit per key) and ends with finish(), so an unknown key is reported.

void read_header(TableReader table, Profile& profile) {
  profile.name = table.string("name");
  table.finish();
}

void read_environment(TableReader table, Profile& profile) {
  profile.env_defaults = table.pairs("defaults");
  table.finish();
}

void read_layer(std::optional<TableReader> table, Profile& profile) {
  if (!table) {
    return;
  }
  Profile::Layer& l = profile.layer;
  l.form = table->choice("form", {"entry", "in-tree"});
  l.markers = table->optional_strings("markers");
  l.marker_texts = table->optional_pairs("marker_texts");
  l.in_tree_modules = table->optional_strings("in_tree_modules");
  l.in_tree_hooks = table->optional_strings("in_tree_hooks");
  l.warn_left_patched = table->boolean("warn_left_patched", false);
  if (l.in_tree_modules.empty() != l.in_tree_hooks.empty()) {
    table->fail_key("in_tree_hooks", "in_tree_modules and in_tree_hooks go together");
  }
  table->finish();
}

void read_switches(TableReader table, Profile& profile) {
  profile.switches = {table.string("distributed"),  table.string("manylinux"),
                      table.string("coverage"),     table.string("dev_mode"),
                      table.string("release_mode"), table.strings("distributed_aliases")};
  table.finish();
}

void read_mode(TableReader table, Profile& profile) {
  profile.mode_rule = table.choice("rule", {"manylinux", "branch"}) == "manylinux"
                          ? Profile::ModeRule::manylinux
                          : Profile::ModeRule::branch;
  table.finish();
}

void read_backend(TableReader table, Profile& profile) {
  profile.backend_name = table.string("name");
  table.finish();
}

void read_version(TableReader table, Profile& profile) {
  // git's shortest abbreviation is 4 digits, a full id 40.
  profile.version = {table.string("file"), table.string("fallback"), table.string("override_env"),
                     table.string("suffix_env"), table.integer("git_hash_length", 4, 40)};
  table.finish();
}

// After [architectures]: every architecture needs its requirements.
void read_metadata(TableReader table, Profile& profile) {
  Profile::Metadata& m = profile.metadata;
  m.name_env = table.string("name_env");
  m.default_name = table.string("default_name");
  m.url = table.string("url");
  m.readme = table.string("readme");
  m.readme_content_type = table.string("readme_content_type");
  m.install_requires = table.strings("install_requires");
  m.install_requires_by_arch = table.string_lists("install_requires_by_arch");
  for (const auto& [arch, names] : profile.architectures) {
    if (m.install_requires_by_arch.count(arch) == 0) {
      table.fail_key("install_requires_by_arch",
                     "no entry for architecture '" + arch + "' listed under [architectures]");
    }
  }
  table.finish();
}

// A nested checkout or a helper file is a path under the tree: relative, no `..` part.
bool inside_the_tree(const std::string& path) {
  const std::filesystem::path relative(path);
  return !path.empty() && relative.is_relative() &&
         std::none_of(relative.begin(), relative.end(),
                      [](const std::filesystem::path& part) { return part == ".."; });
}

void read_llvm(TableReader table, Profile& profile) {
  Profile::Llvm& l = profile.llvm;
  l.hash_file = table.string("hash_file");
  l.hash_key = table.optional_string("hash_key");
  l.resolved_in = table.optional_string("resolved_in", "setup.py");
  if (l.resolved_in != "setup.py" && !inside_the_tree(l.resolved_in)) {
    table.fail_key("resolved_in",
                   "expected \"setup.py\" or a file under the tree (relative, no '..')");
  }
  l.rev_length = table.integer("rev_length", 1, 40);
  l.patch_dir = table.string("patch_dir");
  l.patch_prefix = table.string("patch_prefix");
  l.patch_suffix = table.string("patch_suffix");
  l.patch_hash_length = table.integer("patch_hash_length", 1, 64);
  l.no_patch_hash = table.string("no_patch_hash");
  l.name = table.string("name");
  l.sym_name = table.string("sym_name");
  l.url = table.string("url");
  l.suffix_env = table.string("suffix_env");
  l.include_flag = table.string("include_flag");
  l.lib_flag = table.string("lib_flag");
  l.syspath_var = table.string("syspath_var");
  l.user_configured_name = table.string("user_configured_name");
  l.ubuntu_min_glibc = table.integer("ubuntu_min_glibc", 100, 9999);
  l.x64_os_suffixes = table.optional_pairs("x64_os_suffixes");
  l.sha256 =
      table.optional_strings_by_key("sha256", is_sha256_hex, "a SHA-256: 64 lowercase hex digits");
  table.finish();
}

PatchFile read_patch_file(TableReader table) {
  PatchFile patch;
  patch.file = table.string("file");
  patch.optional = table.boolean("optional", false);
  table.finish();
  return patch;
}

void read_patches(TableReader table, Profile& profile) {
  profile.patches.directory = table.string("directory");
  profile.patches.main = read_patch_file(table.table("main"));
  profile.patches.dev = read_patch_file(table.table("dev"));
  for (TableReader entry : table.optional_table_array("nested")) {
    PatchFile patch;
    patch.file = entry.string("file");
    patch.optional = entry.boolean("optional", false);
    patch.checkout = entry.string("checkout");
    patch.crlf_to_lf = entry.boolean("crlf_to_lf", false);
    if (!inside_the_tree(patch.checkout)) {
      entry.fail_key("checkout", "expected a directory under the tree (relative, no '..')");
    }
    entry.finish();
    profile.patches.nested.push_back(std::move(patch));
  }
  table.finish();
}

void read_build(TableReader table, Profile& profile) {
  Profile::Build& b = profile.build;
  b.min_cmake = table.string("min_cmake");
  b.ir_tag_env = table.string("ir_tag_env");
  b.ir_tag_arg = table.string("ir_tag_arg");
  b.cmake_args = table.strings("cmake_args");
  b.distributed_arg = table.string("distributed_arg");
  b.tools = table.strings("tools");
  b.upstream_downloads = table.boolean("upstream_downloads", true);
  b.clangxx_arg = table.optional_string("clangxx_arg");
  b.clangxx = table.optional_string("clangxx", "clang++");
  b.version_arg = table.optional_string("version_arg");
  table.finish();
}

void read_wheel(TableReader table, Profile& profile) {
  profile.wheel.manylinux_platforms = table.strings("manylinux_platforms");
  profile.wheel.linux_wheel_glob = table.string("linux_wheel_glob");
  profile.wheel.stable_abi_env = table.optional_string("stable_abi_env");
  profile.wheel.stable_abi_tag = table.optional_string("stable_abi_tag");
  if (profile.wheel.stable_abi_env.empty() != profile.wheel.stable_abi_tag.empty() ||
      (!profile.wheel.stable_abi_tag.empty() &&
       std::count(profile.wheel.stable_abi_tag.begin(), profile.wheel.stable_abi_tag.end(), '-') !=
           1)) {
    table.fail_key("stable_abi_tag",
                   "expected stable_abi_env and stable_abi_tag together, the tag as "
                   "\"<python tag>-<abi tag>\" (e.g. \"cp312-abi3\")");
  }
  table.finish();
}

void read_distributed(TableReader table, Profile& profile) {
  Profile::Distributed& d = profile.distributed;
  d.directory = table.string("directory");
  d.url = table.string("url");
  d.branch = table.string("branch");
  d.pin = table.string("pin");
  if (d.pin.size() != 40 || d.pin.find_first_not_of("0123456789abcdef") != std::string::npos) {
    table.fail_key("pin", "expected a full commit id (40 hex digits)");
  }
  d.package = table.string("package");
  d.package_root = table.string("package_root");
  d.package_data = table.strings("package_data");
  d.link = table.string("link");
  d.network_attempts = table.optional_integer("network_attempts", 1, 10, 1);
  d.retry_seconds = table.optional_integer("retry_seconds", 0, 600, 0);
  table.finish();
}

void read_coverage(TableReader table, Profile& profile) {
  Profile::Coverage& c = profile.coverage;
  c.cmake_arg = table.string("cmake_arg");
  c.cmake_args_env = table.string("cmake_args_env");
  c.inputs = table.pairs("inputs");
  c.set = table.pairs("set");
  c.prepend_paths = table.pairs("prepend_paths");
  c.clean_prefixes = table.strings("clean_prefixes");
  c.clean_names = table.strings("clean_names");
  table.finish();
}

void read_upstream(TableReader table, Profile& profile) {
  profile.upstream = {table.string("version"), table.string("version_variable"),
                      table.string("pin"), table.string("cmake_lists")};
  table.finish();
}

// [patch_points]: per override, an array of inline tables.
void read_patch_points(TableReader table, Profile& profile) {
  std::vector<PatchPoint>& points = profile.patch_points;
  for (auto& [override_name, entries] : table.array_tables()) {
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
}

void read_bishengir(TableReader table, Profile& profile) {
  Profile::Bishengir& b = profile.bishengir;
  b.present = true;
  b.path_env = table.string("path_env");
  b.source = table.string("source");
  b.destination = table.string("destination");
  b.required = table.strings("required");
  table.finish();
}

void read_npuir(TableReader table, Profile& profile) {
  Profile::Npuir& n = profile.npuir;
  n.present = true;
  n.switch_name = table.string("switch");
  n.directory = table.string("directory");
  n.nested_directory = table.string("nested_directory");
  n.fetch_attempts = table.integer("fetch_attempts", 1, 100);
  n.fetch_retry_seconds = table.integer("fetch_retry_seconds", 0, 3600);
  n.min_free_gib = table.integer("min_free_gib", 0, 1000000);
  n.toolkit_env = table.string("toolkit_env");
  n.toolkit_setup = table.string("toolkit_setup");
  n.bisheng_compiler = table.string("bisheng_compiler");
  n.cxx_compiler = table.string("cxx_compiler");
  n.cxx_flags = table.strings("cxx_flags");
  n.job_memory_mib = table.integer("job_memory_mib", 1, 1 << 20);
  n.max_jobs = table.integer("max_jobs", 1, 4096);
  n.ccache_env = table.string("ccache_env");
  n.ccache_dir = table.string("ccache_dir");
  n.command = table.strings("command");
  if (n.command.empty()) {
    table.fail_key("command", "expected the build's program and its arguments");
  }
  n.output = table.string("output");
  n.artifacts = table.strings("artifacts");
  table.finish();
}

}  // namespace

Profile parse_profile(std::string_view text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    throw Error(source + ":" + std::to_string(error.source().begin.line) +
                    ": malformed TOML: " + std::string(error.description()),
                ErrorKind::bad_input);
  }

  Profile profile;
  profile.source = source;
  TableReader top(root, "", source);
  read_header(top.table("profile"), profile);
  read_environment(top.table("environment"), profile);
  read_layer(top.optional_table("layer"), profile);
  read_switches(top.table("switches"), profile);
  read_mode(top.table("mode"), profile);
  read_backend(top.table("backend"), profile);
  read_version(top.table("version"), profile);
  profile.architectures = top.string_lists("architectures");
  read_metadata(top.table("metadata"), profile);
  read_llvm(top.table("llvm"), profile);
  read_patches(top.table("patches"), profile);
  read_build(top.table("build"), profile);
  read_wheel(top.table("wheel"), profile);
  read_distributed(top.table("distributed"), profile);
  read_coverage(top.table("coverage"), profile);
  read_upstream(top.table("upstream"), profile);
  read_patch_points(top.table("patch_points"), profile);
  if (auto table = top.optional_table("bishengir")) {
    read_bishengir(*table, profile);
  }
  if (auto table = top.optional_table("npuir")) {
    read_npuir(*table, profile);
  }
  top.finish();
  return profile;
}

Profile load_profile_file(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  if (!text) {
    throw Error("cannot read profile " + path.string(), ErrorKind::bad_input);
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
                  ") knows " + known,
              ErrorKind::bad_input);
}

}  // namespace ascend_setup
