// The shared compile cache: ASCEND_SETUP_COMPILE_CACHE names a remote storage
// in ccache's syntax (`redis://[[USER:]PASSWORD@]HOST[:PORT][/DB]`,
// `http://[USER:PASSWORD@]HOST[:PORT][/PATH]`, then `|ATTRIBUTE=VALUE`
// attributes), and every compile of the build reads and writes it: Triton's
// through ccache as the compiler launcher (upstream's when
// TRITON_BUILD_WITH_CCACHE is on and ccache is found; the configure call's
// otherwise) and the NPUIR build's (its environment and its compiler wrapper).
//
// What lets an object cached by one checkout be found by another (another
// directory, HOME and machine, with debug info or without):
//   - CCACHE_BASEDIR at the tree's root: ccache hashes the paths under it
//     relative to the compile's directory;
//   - `-ffile-prefix-map=<tree>=.` in the C and C++ flags of the configure
//     call: with -g the compile's directory is in the object, and ccache
//     hashes it (hash_dir) as mapped by this flag, so the debug paths become
//     relative to the tree's root instead of dropped from the hash;
//   - the configure call's values that are paths under TRITON_HOME or HOME
//     (and not in the tree: upstream's LLVM package under .triton, a pyenv's
//     include directory) are given through links in the build directory
//     (<build dir>/<first component under the root>): an absolute -I path
//     outside the base directory is hashed as it is, and differs with each
//     HOME. ccache makes a path under the base directory relative both as
//     given and with its links resolved, and keeps the shorter one; from the
//     build directory, where the compiles run, the link's path is always the
//     shorter.
// CCACHE_REMOTE_STORAGE is the URL (ccache writes every new object to it as
// well as to the local cache), CCACHE_STATSLOG the build's own per-compile
// log (compile_cache_log_path(), emptied when the build starts).
//
// The server is probed once before the build (one connect, bounded): a
// server that does not answer is one warning line, and the build compiles
// with the local cache only (CCACHE_REMOTE_STORAGE empty) instead of paying a
// timeout per compile. A URL that does not parse is one usage error (exit 2).
// ccache is the only launcher (doc/compile-cache.md says why not sccache).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ascend_setup {

struct CompileCacheUrl {
  std::string text;    // as given (what CCACHE_REMOTE_STORAGE gets)
  std::string scheme;  // redis, http
  std::string host;    // without brackets
  int port = 0;        // the scheme's default when the URL names none
  std::string shown;   // the URL as shown (its password masked), without attributes
  std::vector<std::pair<std::string, std::string>> attributes;
};

// Parses ccache's remote storage syntax for one storage. Throws
// Error(usage) naming the variable and what is wrong.
CompileCacheUrl parse_compile_cache_url(const std::string& text);

struct CompileCache {
  bool active = false;  // the build compiles through ccache with these settings
  bool remote = false;  // the server answered: CCACHE_REMOTE_STORAGE is the URL
  CompileCacheUrl url;
  std::filesystem::path tree;
  std::filesystem::path ccache;  // found on PATH
};

// Reads ASCEND_SETUP_COMPILE_CACHE and its tool; inactive when unset or
// empty. Throws Error(usage) for a bad URL or tool. Probes the server; warns
// once when it does not answer or ccache is missing.
CompileCache plan_compile_cache(const std::filesystem::path& tree);

// Plans the cache and sets ccache's variables for the build (above); the
// stats log is emptied when `starting` (a build that compiles), not for
// --list-env, and removed when `starting` without the cache (an earlier
// build's is not this one's), each under the tree's build lock, which it
// takes (tree/build_lock.hpp) and the build releases. Says so on the info log
// when `starting`.
const CompileCache& apply_compile_cache(const std::filesystem::path& tree, bool starting);

// The cache apply_compile_cache() set up (inactive before it ran).
const CompileCache& compile_cache();

// `-ffile-prefix-map=<tree>=.`: for every compile of the tree (the configure
// call's flags, the NPUIR build's compiler wrapper).
std::string compile_cache_prefix_map(const CompileCache& cache);

// The configure call rewritten for the cache (unchanged when inactive): the
// prefix map appended to CMAKE_C_FLAGS and CMAKE_CXX_FLAGS (the call's own
// value, else CFLAGS / CXXFLAGS as a first configure would take them),
// ccache as the C and C++ launcher unless the call names one, and the values
// under TRITON_HOME or HOME given through links in `build_dir`, the call's
// build directory (made here).
std::vector<std::string> compile_cache_configure_call(const CompileCache& cache,
                                                      std::vector<std::string> call,
                                                      const std::filesystem::path& build_dir);

}  // namespace ascend_setup
