// Shared by the test suites: temporary directories, copies of the example
// tree, real git repositories and runs of the built ascend-setup binary.
#pragma once

#include "base/process/process.hpp"
#include "base/util/held_lock.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace test_support {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::optional<std::string>>;

// A fresh directory, removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A lock of this test process's own, held for its life: what a test shows
// where the product asks for the lock of the path it writes
// (util/held_lock.hpp) and the test is that path's only writer.
const ascend_setup::HeldLock& test_writer_lock();

// An exclusive flock on `path` (created, with its directories), held as a
// run in another process or container holds it; the file then says
// `holder` (a pid, "pid host"). Released by release() or when the object dies.
class HeldFileLock {
 public:
  explicit HeldFileLock(const fs::path& path, const std::string& holder = "");
  ~HeldFileLock() { release(); }
  HeldFileLock(const HeldFileLock&) = delete;
  HeldFileLock& operator=(const HeldFileLock&) = delete;
  bool held() const { return fd_ >= 0; }
  void release();

 private:
  int fd_ = -1;
};

void write_file(const fs::path& path, const std::string& text);
std::string read_file(const fs::path& path);

// Copies examples/<example> (triton-3.6 unless named: "triton-3.7" for the
// 3.7 line's tree, already of the in-tree form that adopted ascend_setup.hooks;
// "triton-3.8" for the 3.8 line's, upstream's build_helpers.py shape, of the
// entry form: writing its third_party/ascend/build/__init__.py as the one line
// `from ascend_setup.hooks import prepare, activate` makes it the in-tree form)
// to `dir`/tree and returns that path.
fs::path copy_example_tree(const fs::path& dir, const std::string& example = "triton-3.6");

// Runs a command; fails the test when it exits non-zero. Returns stdout.
std::string must_run(const std::vector<std::string>& argv, const fs::path& cwd,
                     const Env& env = {});

// The environment every git call of the tests uses: no global or system
// configuration, a fixed identity.
Env git_env(const fs::path& home);

// `git init`, add everything, commit. Returns HEAD's full id.
std::string make_git_repo(const fs::path& tree, const fs::path& home);

// The 3.7 or 3.8 tree's AscendNPU-IR stand-in
// (`tree`/third_party/ascend/AscendNPU-IR, plain files in the example) made a
// git repository of its own: init, add, commit with git_env(`home`), every
// file's bytes as they are (the 3.8 stand-in's CMakeLists.txt keeps its CRLF;
// checked: a test failure otherwise); and `tree`'s .gitmodules entry for it
// pointed at that repository's local path, so that a clone's `git submodule
// update --init` (upstream's BackendInstaller runs one) never reaches the
// network.
// Call it before make_git_repo(`tree`, `home`): the outer `git add -A` then
// records the nested repository as a gitlink (git warns "adding embedded git
// repository" on stderr), which the .gitmodules entry makes a submodule, and
// the outer `git status` stays clean. Returns the nested HEAD's full id.
std::string make_nested_npuir_repo(const fs::path& tree, const fs::path& home);

// The compile cache every test's build of the example tree shares
// (BUILD_DIR/test-ccache): paths under the temporary directory are taken
// relative to the compile's directory (base_dir) and the directory is not
// hashed, so the same example compiled in another test's directory is a hit.
// The suite's builds compile each source once; a test of compiling itself
// (distcc, the compile cache, the build report, a stop mid-compile) sets its
// own cold CCACHE_DIR or turns ccache off.
fs::path shared_compile_cache();

// The environment of an offline build of the example tree: stub LLVM and JSON
// (LLVM_SYSPATH, JSON_SYSPATH; the 3.8 tree's build_helpers.py needs both),
// TRITON_OFFLINE_BUILD, TRITON_HOME under `home`, the suite's shared compile
// cache (CCACHE_DIR), no venv, no host log level, no mode switches.
Env offline_env(const fs::path& home);

// offline_env() for the Python front ends (pip, build, python3 setup.py):
// ascend_setup importable from the checkout (PYTHONPATH) with the built
// launcher ($ASCEND_SETUP_BINARY), pip kept off any index, two jobs.
Env front_end_env(const fs::path& home);

// Runs the built ascend-setup with `args` in `cwd`.
ascend_setup::ProcessResult run_host(const std::vector<std::string>& args, const fs::path& cwd,
                                     const Env& env);

// The command line that runs `argv` in `cwd` with `env` as a process of its
// own (for BackgroundProcess): /usr/bin/env sets the environment and execs
// the program, so the process's pid is the program's.
std::vector<std::string> command_in(const fs::path& cwd, const Env& env,
                                    const std::vector<std::string>& argv);

// command_in() of the built binary with `args`.
std::vector<std::string> host_command(const fs::path& cwd, const Env& env,
                                      const std::vector<std::string>& args);

nlohmann::ordered_json parse_json(const std::string& text);

// `text` with the first `from` replaced by `to`; a test failure when absent.
std::string replace_once(std::string text, const std::string& from, const std::string& to);

// Writes the built-in profile to `path` with each `from` text replaced by
// its `to` (each must occur), for tests that point a profile value elsewhere.
// `base`: another profile's text instead of the default built-in one.
fs::path write_profile(const fs::path& path,
                       const std::vector<std::pair<std::string, std::string>>& replacements,
                       std::string_view base = {});

// The text of the built-in profile in `file` ("triton-ascend-3.8.0.toml").
std::string_view builtin_profile_text_of(const std::string& file);

// The built-in profile of the 3.6.0 in-tree layer (its [layer] form is
// "in-tree"): the default one's values plus the newer layer's (NPUIR,
// BishengIR, ...).
std::string_view in_tree_profile_text();

// An example-tree copy made a tree of the in-tree form that adopted
// ascend_setup.hooks: its layer package (third_party/ascend/build/__init__.py)
// is the one line, setup.py calls prepare() after its imports and activate()
// before setup(), and pyproject.toml names setuptools.build_meta, as upstream's.
void adopt_ascend_setup_hooks(const fs::path& tree);

// The set-up most e2e suites share: a copy of the example tree in a fresh
// directory, the offline environment, and runs of the binary in the tree.
class ExampleTreeTest : public ::testing::Test {
 protected:
  ExampleTreeTest();
  ascend_setup::ProcessResult host(const std::vector<std::string>& args) const {
    return run_host(args, tree, env);
  }
  // The first `from` in the tree's `file` replaced by `to` (a test failure when absent).
  void edit(const fs::path& file, const std::string& from, const std::string& to) const;

  TempDir dir;
  fs::path tree;
  Env env;
};

constexpr std::uint64_t GiB = 1ULL << 30;

// The nested repositories AscendNPU-IR records under third-party/ (the
// stand-in's, as the real one's).
inline const std::vector<std::string> kNpuirNested = {"llvm-project", "shmem", "torch-mlir"};

// The NPUIR tests' stand-in AscendNPU-IR, registered as the submodule
// third_party/ascend/AscendNPU-IR of `tree` (made a git checkout here, its
// .gitmodules pointed at the stand-in's local remote `remotes`/AscendNPU-IR):
// build-tools/build.sh is tests/stand_ins/npuir_build.sh, and it records each
// of `nested` under third-party/ at a commit that is not its remote's tip (a
// later commit adds later.txt). Each nested remote is `remotes`/<name>;
// `nested_url(name)` is the URL the stand-in's .gitmodules gives it, and
// `fill(name, remote)` may add files before the recorded commit. Returns each
// nested repository's recorded commit.
std::map<std::string, std::string> make_npuir_stand_in(
    const fs::path& tree, const fs::path& remotes, const fs::path& home,
    const std::vector<std::string>& nested,
    const std::function<std::string(const std::string&)>& nested_url,
    const std::function<void(const std::string&, const fs::path&)>& fill = nullptr);

// A git repository at `dir` holding a triton_dist package (nested
// subpackages, .pyi files): the distributed part's stand-in remote. Returns
// HEAD's full id.
std::string make_distributed_remote(const fs::path& dir, const fs::path& home);

// The tests' PATH: the default interpreter's directory, then this process's
// PATH, so that `python3` on PATH is the default one (as on a plain Debian
// machine, whatever pyenv shims the developer has).
std::string base_path();

// base_path() with `first` in front.
std::string path_with(const fs::path& first);

// Every interpreter the build serves (FOUND_PYTHONS), and those too old to be served.
std::vector<fs::path> found_pythons();
std::vector<fs::path> too_old_pythons();

// A venv of `python` with setuptools, wheel and pybind11 (tests/support/make_venv),
// made once in the build directory and shared by the tests. Returns its directory.
fs::path cached_venv(const fs::path& python);

// "X.Y" of an interpreter (asks it).
std::string python_version(const fs::path& python);

// A static CPython with no shared libpython beside it: Debian's python3
// binary (which links libpython statically) copied to <dir>/static/bin/
// python3.X. Its stdlib and site-packages stay Debian's (found through its
// built-in prefix); only the location of the binary is staged. Fails the
// test when SYSTEM_PYTHON links a shared libpython.
fs::path static_python_stand_in(const fs::path& dir);

// An interpreter whose executable runs on a shared libpython, which the
// launcher embeds: CPython's main linked against the default interpreter's
// libpython3.X (tests/stand_ins/python_on_libpython.cpp) at
// <dir>/shared/bin/python3.X, <dir>/shared/lib/libpython3.X.so.1.0 a link to
// that library. Its stdlib and site-packages are the default interpreter's
// (found through the library's built-in prefix).
fs::path embedded_python_stand_in(const fs::path& dir);

// PATH with the test stand-ins (tests/stand_ins: a recording cmake in front of
// the real one, an auditwheel) first.
std::string path_with_stand_ins();

// A `git` in `bin` that appends each call's arguments to `log`, then runs
// /usr/bin/git. Returns path_with(bin).
std::string path_with_recording_git(const fs::path& bin, const fs::path& log);

bool contains(const std::vector<std::string>& items, const std::string& item);
bool contains(const std::string& text, const std::string& part);

// The lines of `text` that hold `part`, in order.
std::vector<std::string> lines_with(const std::string& text, const std::string& part);

// The one error line of a run: from the first "ascend-setup: error: " in
// `err` to the end of its line; empty when there is none.
std::string error_line(const std::string& err);

// Polls `ready` every 20 ms until it holds, `seconds` at most (a guard
// against a hang, not a timing check); true when it holds.
bool wait_until(const std::function<bool()>& ready, double seconds = 120);

// The prefix of ascend-setup's own warnings (not the compilers' or CMake's).
inline constexpr const char* kAscendSetupWarning = "ascend-setup: warning: ";

// Modification time in nanoseconds (of a symlink itself), -1 when absent.
long long mtime_ns(const fs::path& path);

// One call the recording cmake stand-in saw.
struct CmakeCall {
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  bool is_configure() const;  // not --build, not --version
};
std::vector<CmakeCall> read_cmake_calls(const fs::path& log);

// A small tmpfs mounted at `dir` (created) for a full disk, unmounted (lazily
// when busy) and removed when the object dies, on every path. Needs root;
// available() says why not otherwise.
class SmallDisk {
 public:
  SmallDisk(const fs::path& dir, const std::string& size);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  const fs::path& path() const { return dir_; }
  // Fills the disk but for `leave` bytes (a file of its own, kept).
  void fill(std::uint64_t leave) const;

 private:
  fs::path dir_;
  bool mounted_ = false;
};

// What a run killed while it staged `target` (StagedReplacement under `what`)
// leaves beside it: the staged copy as StagedReplacement names it, with the
// pid of a process that has ended: a directory holding `file` (a relative
// path), or without `file` a file itself, with "half\n" in it. Returns the
// staged copy's path.
fs::path leave_staged_copy(const fs::path& target, const std::string& what,
                           const fs::path& file = {});

// Every regular file under `root` by relative path (nested .git directories
// and build outputs aside), with its SHA-256.
std::map<std::string, std::string> files_under(const fs::path& root);

// Files directly in `dir` whose names end with `suffix`, sorted.
std::vector<fs::path> files_in(const fs::path& dir, const std::string& suffix);

// "<mode in octal> <name>" for every member of a wheel (zip), in zip order.
std::vector<std::string> wheel_members(const fs::path& wheel);

// What two builds of one tree must agree on: the wheel's name, its sorted
// members (mode and name; RECORD left out), METADATA and entry_points.txt.
std::string wheel_summary(const fs::path& wheel);

// Modification times (ns) of every file under `tree` except build outputs
// (build/, dist/, *.egg-info, .git).
std::map<fs::path, long long> source_mtimes(const fs::path& tree);

// Every file and directory under `tree` (.git included) with its mtime and
// content ("dir", "link" for those), to show that a run wrote nothing.
std::map<fs::path, std::pair<long long, std::string>> snapshot(const fs::path& tree);

// The `triton.backends` entry points of setup() kwargs as --dump-kwargs prints them.
std::vector<std::string> backend_entry_points(const nlohmann::ordered_json& kwargs);

}  // namespace test_support
