// The version profile: every constant of one triton-ascend layer (defaults,
// pins, URLs, patch names, cmake flags, tool paths, hitest variables). The
// built-in ones are the version profiles under profiles/, compiled into the
// binary; layer/profile_choice.hpp picks the one a run uses.
// Loading validates every key; a malformed profile throws Error naming the
// file, the line and the key.
#pragma once

#include "base/layer/environment.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

struct PatchFile {
  std::string file;
  bool optional = false;
  // A nested patch's checkout (tree-relative): its paths are relative to it
  // (`git apply --directory`); empty for the main and dev patches.
  std::string checkout;
  // A nested patch: the CRLF line endings of the files it changes are made LF
  // in the content it is applied to (the patch is LF; some checkouts are CRLF
  // at HEAD). A restore still returns the committed bytes.
  bool crlf_to_lf = false;
  bool operator==(const PatchFile&) const = default;
};

// One upstream symbol an override hooks (profile [patch_points]).
struct PatchPoint {
  std::string override_name;         // the [patch_points] key
  std::string id;                    // "name" or "Class.method"
  std::string kind;                  // function, class, variable, method
  std::vector<std::string> aliases;  // further upstream names, tried in order
  std::vector<std::string> params;   // parameters the override passes

  // The names to look for: the id's own (after the class for a method), then the aliases.
  std::vector<std::string> names() const;
  // For a method: the id of its class; empty otherwise.
  std::string class_id() const;
  bool operator==(const PatchPoint&) const = default;
};

struct Profile {
  std::string source;  // where it came from: a path or "built-in <file>"
  std::string name;
  std::string chosen_because;  // why this run uses it (set by select_profile)

  EnvList env_defaults;

  // The form of the layer this profile is made for ([layer], optional).
  struct Layer {
    std::string form = "entry";        // "entry" (setup_ascend.py) or "in-tree" (hooks in setup.py)
    std::vector<std::string> markers;  // the tree must hold one of these paths (none: any tree)
    // Or one of these files holding this text ([path, text]): a layer package
    // that re-exports ascend_setup.hooks marks the in-tree form too.
    EnvList marker_texts;
    // The tree's own copy of the layer: these modules are replaced by inert
    // stand-ins whose `in_tree_hooks` do nothing while ascend-setup runs setup.py.
    std::vector<std::string> in_tree_modules, in_tree_hooks;
    // After a build that left a git checkout patched: one warning naming
    // `ascend-setup --restore-sources`.
    bool warn_left_patched = false;
    bool operator==(const Layer&) const = default;
  } layer;

  struct Switches {
    std::string distributed, manylinux, coverage, dev_mode, release_mode;
    std::vector<std::string> distributed_aliases;  // older names, deprecated
    bool operator==(const Switches&) const = default;
  } switches;

  // The rule that picks dev or release when no option or switch decides.
  enum class ModeRule { manylinux, branch };
  ModeRule mode_rule = ModeRule::manylinux;

  std::string backend_name;

  struct Version {
    std::string file, fallback, override_env, suffix_env;
    int git_hash_length = 8;
    bool operator==(const Version&) const = default;
  } version;

  struct Metadata {
    std::string name_env, default_name, url, readme, readme_content_type;
    std::vector<std::string> install_requires;
    std::map<std::string, std::vector<std::string>> install_requires_by_arch;
    bool operator==(const Metadata&) const = default;
  } metadata;

  // architecture key -> uname machine names
  std::map<std::string, std::vector<std::string>> architectures;

  struct Llvm {
    std::string hash_file;
    // "": hash_file is text, the revision its first rev_length characters;
    // else hash_file is a JSON object and the revision is this key's string
    // (upstream's cmake/llvm-info.json, "llvm_hash").
    std::string hash_key;
    int rev_length = 8;
    // Where the tree resolves its prebuilt packages: "setup.py" (its module's
    // get_llvm_package_info and get_thirdparty_packages, which ascend-setup
    // replaces), or the tree-relative file CMake runs for them as a separate
    // process (upstream's python/build_helpers.py), out of reach of a patch
    // of setup.py's module: ascend-setup then resolves and fetches the Ascend
    // LLVM package itself and hands CMake -D<syspath_var>=<its directory>.
    std::string resolved_in = "setup.py";
    bool resolved_by_setup_py() const { return resolved_in == "setup.py"; }
    std::string patch_dir, patch_prefix, patch_suffix;
    int patch_hash_length = 8;
    std::string no_patch_hash, name, sym_name, url, suffix_env;
    std::string include_flag, lib_flag, syspath_var, user_configured_name;
    int ubuntu_min_glibc = 229;
    EnvList x64_os_suffixes;  // [os-release ID, suffix] for Linux x64, before the glibc rule
    // package name -> the SHA-256 of its archive (64 lowercase hex digits),
    // checked whichever server sends it (upstream's llvm-info.json sha256sum)
    std::map<std::string, std::string> sha256;
    bool operator==(const Llvm&) const = default;
  } llvm;

  struct Patches {
    std::string directory;
    PatchFile main, dev;
    // Applied after main (and dev) in every build mode, each inside its
    // checkout (e.g. AscendNPU-IR's); none by default.
    std::vector<PatchFile> nested;
    bool operator==(const Patches&) const = default;
  } patches;

  struct Build {
    std::string min_cmake, ir_tag_env, ir_tag_arg, distributed_arg;
    std::vector<std::string> cmake_args, tools;
    // upstream's download_and_copy_dependencies() (NVIDIA's toolchain) runs
    // in build_ext; false makes it a no-op
    bool upstream_downloads = true;
    // Configure arguments computed from the build, each passed only when its
    // name is set: `clangxx_arg`=<the LLVM package's bin/<clangxx>, else
    // <clangxx> on PATH> unless upstream's extra-arguments variable already
    // names it; `version_arg`=<the wheel's version>.
    std::string clangxx_arg, clangxx = "clang++", version_arg;
    bool operator==(const Build&) const = default;
  } build;

  struct Wheel {
    std::vector<std::string> manylinux_platforms;
    std::string linux_wheel_glob;
    // With the switch `stable_abi_env` on, the wheel's python and ABI tags are
    // `stable_abi_tag` ("cp312-abi3"), the platform tag bdist_wheel's own;
    // empty: bdist_wheel's tag.
    std::string stable_abi_env, stable_abi_tag;
    bool operator==(const Wheel&) const = default;
  } wheel;

  struct Distributed {
    std::string directory, url, branch, pin;  // the clone of the distributed part
    std::string package, package_root, link;
    std::vector<std::string> package_data;
    int network_attempts = 1;  // clone and fetch, each
    int retry_seconds = 0;     // between two attempts
    bool operator==(const Distributed&) const = default;
  } distributed;

  struct Coverage {
    std::string cmake_arg, cmake_args_env;
    EnvList inputs, set, prepend_paths;
    std::vector<std::string> clean_prefixes, clean_names;
    bool operator==(const Coverage&) const = default;
  } coverage;

  struct Upstream {
    std::string version, version_variable, pin, cmake_lists;
    bool operator==(const Upstream&) const = default;
  } upstream;

  std::vector<PatchPoint> patch_points;  // in profile order, grouped by override

  // The BishengIR payload build_py copies into the wheel (doc/npuir.md).
  // [bishengir] and [npuir] are optional: a layer without them (the
  // setup_ascend.py form) has no payload and no NPUIR build (`present` false).
  struct Bishengir {
    bool present = false;
    std::string path_env;               // a payload directory given by the user
    std::string source;                 // the tree's payload (the NPUIR build's artifacts)
    std::string destination;            // under build_py's build_lib
    std::vector<std::string> required;  // relative paths; "dir/" must be a directory
    bool operator==(const Bishengir&) const = default;
  } bishengir;

  // The NPUIR build before setup.py's own work (doc/npuir.md).
  struct Npuir {
    bool present = false;
    std::string switch_name;       // the on/off variable
    std::string directory;         // the AscendNPU-IR submodule
    std::string nested_directory;  // where its HEAD tree records the nested repositories
    int fetch_attempts = 0;
    int fetch_retry_seconds = 0;
    int min_free_gib = 0;                // free space needed on the tree's disk
    std::string toolkit_env;             // the CANN toolkit's root
    std::string toolkit_setup;           // what sets toolkit_env, for the message
    std::string bisheng_compiler;        // under the toolkit's root
    std::string cxx_compiler;            // wrapped, looked up on PATH
    std::vector<std::string> cxx_flags;  // added by the wrapper
    int job_memory_mib = 0;
    int max_jobs = 0;
    std::string ccache_env, ccache_dir;  // the variable and its default under the tree
    // The build's argv, run in `directory`: {npuir}, {jobs}, {bisheng_compiler}, {cxx_compiler}.
    std::vector<std::string> command;
    std::string output;                  // under `directory`
    std::vector<std::string> artifacts;  // under `output`; a '*' in the file name is a pattern
    bool operator==(const Npuir&) const = default;
  } npuir;
  bool operator==(const Profile&) const = default;
};

// A profile compiled in from profiles/: its file name and TOML text.
struct BuiltinProfile {
  std::string_view file;
  std::string_view text;
};

// Every built-in profile, in file-name order.
std::span<const BuiltinProfile> builtin_profiles();

// The TOML text of the default built-in profile (CMake's
// ASCEND_SETUP_DEFAULT_PROFILE): the one for a tree whose version is unknown.
std::string_view builtin_profile_text();

// Parses and validates a profile. `source` names it in error messages.
Profile parse_profile(std::string_view text, const std::string& source);

// Reads a profile file. Throws Error when it cannot be read or is malformed.
Profile load_profile_file(const std::filesystem::path& path);

// Maps a uname machine name to an architecture key of the profile.
// Throws Error on an architecture the profile does not list.
std::string architecture_key(const Profile& profile, const std::string& machine);

}  // namespace ascend_setup
