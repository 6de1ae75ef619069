#include "test_support.hpp"

#include "base/util/digest.hpp"

#include "base/layer/profile.hpp"
#include "base/tree/file_lock.hpp"
#include "base/util/staged_replacement.hpp"
#include "base/util/whole_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

namespace test_support {

namespace {

// A failed test's reasons again, as the last lines of its output. A failure's
// message often carries a run's whole log after its first lines, and ctest
// prints a failed test's output whole (--output-on-failure): without this, a
// CI log capped at its tail ends in build output instead of the reason.
// scripts/quickstart.sh collects these lines at the end of a failed run.
class ReasonsLast : public testing::EmptyTestEventListener {
  void OnTestEnd(const testing::TestInfo& test) override {
    const testing::TestResult* result = test.result();
    if (result == nullptr || !result->Failed()) {
      return;
    }
    constexpr int kLines = 6;
    constexpr std::size_t kWidth = 300;
    std::ostringstream out;
    out << "\n";
    for (int i = 0; i < result->total_part_count(); ++i) {
      const testing::TestPartResult& part = result->GetTestPartResult(i);
      if (!part.failed()) {
        continue;
      }
      out << "[ REASON   ] " << test.test_suite_name() << "." << test.name() << " at "
          << (part.file_name() != nullptr ? part.file_name() : "?") << ":" << part.line_number()
          << "\n";
      std::istringstream message(part.message());
      int shown = 0;
      int more = 0;
      for (std::string line; std::getline(message, line);) {
        if (shown < kLines) {
          out << "[ REASON   ]   " << (line.size() > kWidth ? line.substr(0, kWidth) + "..." : line)
              << "\n";
          ++shown;
        } else {
          ++more;
        }
      }
      if (more > 0) {
        out << "[ REASON   ]   (" << more << " more lines in the message above)\n";
      }
    }
    std::cout << out.str() << std::flush;
  }
};

[[maybe_unused]] const bool reasons_last_registered = [] {
  testing::UnitTest::GetInstance()->listeners().Append(new ReasonsLast);
  return true;
}();

}  // namespace

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "ascend-setup-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

const ascend_setup::HeldLock& test_writer_lock() {
  static const TempDir dir;
  static const ascend_setup::FileLock lock(dir.path() / "writer.lock", "the test's writes");
  return lock;
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_file(const fs::path& path) {
  return ascend_setup::read_whole_file(path).value_or("");
}

fs::path copy_example_tree(const fs::path& dir, const std::string& example) {
  const fs::path tree = dir / "tree";
  fs::copy(fs::path(EXAMPLE_TREE).parent_path() / example, tree, fs::copy_options::recursive);
  return tree;
}

std::string must_run(const std::vector<std::string>& argv, const fs::path& cwd, const Env& env) {
  // An empty cwd would run in the test's own directory (a checkout of this
  // project, where a stray `git commit` does real harm).
  if (cwd.empty() || !cwd.is_absolute()) {
    ADD_FAILURE() << "must_run needs an absolute working directory, not '" << cwd.string() << "'";
    return "";
  }
  const ascend_setup::ProcessResult result = ascend_setup::run_process({argv, cwd, env, {}});
  std::string command;
  for (const auto& arg : argv) {
    command += arg + " ";
  }
  EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.out << result.err;
  return result.out;
}

Env git_env(const fs::path& home) {
  return {{"HOME", home.string()},
          {"GIT_CONFIG_NOSYSTEM", "1"},
          {"GIT_CONFIG_GLOBAL", "/dev/null"},
          {"GIT_AUTHOR_NAME", "Test"},
          {"GIT_AUTHOR_EMAIL", "test@example.com"},
          {"GIT_COMMITTER_NAME", "Test"},
          {"GIT_COMMITTER_EMAIL", "test@example.com"}};
}

std::string make_git_repo(const fs::path& tree, const fs::path& home) {
  const Env env = git_env(home);
  must_run({"git", "init", "-q", "-b", "main"}, tree, env);
  must_run({"git", "add", "-A"}, tree, env);
  must_run({"git", "commit", "-q", "-m", "initial"}, tree, env);
  std::string head = must_run({"git", "rev-parse", "HEAD"}, tree, env);
  return head.substr(0, head.find('\n'));
}

std::string make_nested_npuir_repo(const fs::path& tree, const fs::path& home) {
  const std::string path = "third_party/ascend/AscendNPU-IR";
  const std::string head = make_git_repo(tree / path, home);
  // Each file committed byte for byte (`git ls-files --eol`: the index's line
  // endings, i/, as the work tree's, w/): the 3.8 stand-in's NPU-IR patch is
  // measured against the CRLF its CMakeLists.txt keeps at HEAD.
  std::istringstream eols(must_run({"git", "ls-files", "--eol"}, tree / path, git_env(home)));
  for (std::string line; std::getline(eols, line);) {
    std::istringstream fields(line);
    std::string index_eol;
    std::string tree_eol;
    fields >> index_eol >> tree_eol;
    EXPECT_EQ(index_eol.substr(2), tree_eol.substr(2))
        << "committed with other line endings: " << line;
  }
  const std::string section = "submodule." + path;
  must_run({"git", "config", "-f", ".gitmodules", section + ".path", path}, tree, git_env(home));
  must_run({"git", "config", "-f", ".gitmodules", section + ".url", (tree / path).string()}, tree,
           git_env(home));
  return head;
}

fs::path shared_compile_cache() {
  const fs::path cache = fs::path(BUILD_DIR) / "test-ccache";
  const fs::path config = cache / "ccache.conf";
  const std::string text =
      "base_dir = " + fs::temp_directory_path().string() + "\nhash_dir = false\nmax_size = 2G\n";
  if (read_file(config) != text) {
    const fs::path staged = cache / ("ccache.conf." + std::to_string(::getpid()));
    write_file(staged, text);
    fs::rename(staged, config);
  }
  return cache;
}

Env offline_env(const fs::path& home) {
  Env env = git_env(home);
  env["CCACHE_DIR"] = shared_compile_cache().string();
  env["LLVM_SYSPATH"] = STUB_LLVM;
  env["JSON_SYSPATH"] = STUB_JSON;
  env["TRITON_OFFLINE_BUILD"] = "1";
  env["TRITON_HOME"] = home.string();
  env["VIRTUAL_ENV"] = std::nullopt;
  env["PATH"] = base_path();
  env["ASCEND_SETUP_LOG_LEVEL"] = std::nullopt;
  for (const char* name :
       {"TRITON_WHEEL_NAME", "TRITON_VERSION", "TRITON_WHEEL_VERSION_SUFFIX", "IS_MANYLINUX",
        "TRITON_BUILD_DISTRIBUTED", "TRITON_BUILD_PROTON", "TRITON_APPEND_CMAKE_ARGS",
        "TRITON_DEV_MODE", "TRITON_RELEASE_MODE", "PYTHONPATH", "PYTHONHOME", "TRITON_BUILD_NPUIR",
        "TRITON_ASCEND_BISHENGIR_PATH", "ASCEND_HOME_PATH"}) {
    env[name] = std::nullopt;
  }
  return env;
}

Env front_end_env(const fs::path& home) {
  Env env = offline_env(home);
  env["MAX_JOBS"] = "2";
  env["PYTHONPATH"] = PYTHON_SHIMS;
  env["ASCEND_SETUP_BINARY"] = ASCEND_SETUP_BINARY;
  env["PIP_NO_INDEX"] = "1";
  env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  return env;
}

ExampleTreeTest::ExampleTreeTest()
    : tree(copy_example_tree(dir.path())), env(offline_env(dir.path())) {}

void ExampleTreeTest::edit(const fs::path& file, const std::string& from,
                           const std::string& to) const {
  write_file(tree / file, replace_once(read_file(tree / file), from, to));
}

ascend_setup::ProcessResult run_host(const std::vector<std::string>& args, const fs::path& cwd,
                                     const Env& env) {
  std::vector<std::string> argv{ASCEND_SETUP_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return ascend_setup::run_process({argv, cwd, env, {}});
}

std::vector<std::string> command_in(const fs::path& cwd, const Env& env,
                                    const std::vector<std::string>& argv) {
  std::vector<std::string> command{"/usr/bin/env", "-C", cwd.string()};
  for (const auto& [name, value] : env) {
    if (value) {
      command.push_back(name + "=" + *value);
    } else {
      command.insert(command.begin() + 1, {"-u", name});
    }
  }
  command.insert(command.end(), argv.begin(), argv.end());
  return command;
}

std::vector<std::string> host_command(const fs::path& cwd, const Env& env,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> argv{ASCEND_SETUP_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return command_in(cwd, env, argv);
}

std::map<std::string, std::string> make_npuir_stand_in(
    const fs::path& tree, const fs::path& remotes, const fs::path& home,
    const std::vector<std::string>& nested,
    const std::function<std::string(const std::string&)>& nested_url,
    const std::function<void(const std::string&, const fs::path&)>& fill) {
  const Env git = git_env(home);
  std::map<std::string, std::string> recorded;
  std::string modules;
  for (const std::string& name : nested) {
    const fs::path remote = remotes / name;
    write_file(remote / "CMakeLists.txt", "project(" + name + ")\n");
    if (fill) {
      fill(name, remote);
    }
    recorded[name] = make_git_repo(remote, home);
    // A later commit: a fetch must end at the recorded one, not the tip.
    write_file(remote / "later.txt", "later\n");
    must_run({"git", "add", "-A"}, remote, git);
    must_run({"git", "commit", "-q", "-m", "later"}, remote, git);
    modules += "[submodule \"third-party/" + name + "\"]\n\tpath = third-party/" + name +
               "\n\turl = " + nested_url(name) + "\n";
  }
  const fs::path npuir_remote = remotes / "AscendNPU-IR";
  write_file(npuir_remote / "build-tools/build.sh",
             read_file(fs::path(STAND_INS) / "npuir_build.sh"));
  fs::permissions(npuir_remote / "build-tools/build.sh", fs::perms::owner_exec,
                  fs::perm_options::add);
  write_file(npuir_remote / ".gitmodules", modules);
  make_git_repo(npuir_remote, home);
  for (const std::string& name : nested) {
    must_run({"git", "update-index", "--add", "--cacheinfo",
              "160000," + recorded[name] + ",third-party/" + name},
             npuir_remote, git);
  }
  must_run({"git", "commit", "-q", "-m", "nested repositories"}, npuir_remote, git);
  const std::string npuir_head =
      must_run({"git", "rev-parse", "HEAD"}, npuir_remote, git).substr(0, 40);

  // The tree: its .gitmodules points the submodule at the local remote.
  write_file(tree / ".gitmodules",
             replace_once(read_file(tree / ".gitmodules"),
                          "https://gitcode.com/Ascend/AscendNPU-IR.git", npuir_remote.string()));
  make_git_repo(tree, home);
  must_run({"git", "update-index", "--add", "--cacheinfo",
            "160000," + npuir_head + ",third_party/ascend/AscendNPU-IR"},
           tree, git);
  must_run({"git", "commit", "-q", "-m", "AscendNPU-IR submodule"}, tree, git);
  fs::create_directories(tree / "third_party/ascend/AscendNPU-IR");  // a clone's empty placeholder
  return recorded;
}

nlohmann::ordered_json parse_json(const std::string& text) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const std::exception& error) {
    ADD_FAILURE() << "not JSON: " << error.what() << "\n" << text;
    return {};
  }
}

std::string base_path() {
  const char* path = std::getenv("PATH");
  return fs::path(SYSTEM_PYTHON).parent_path().string() + ":" + (path ? path : "/usr/bin:/bin");
}

std::string path_with(const fs::path& first) { return first.string() + ":" + base_path(); }

namespace {
std::vector<fs::path> split_list(const std::string& text) {
  std::vector<fs::path> items;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ':');) {
    if (!item.empty()) {
      items.emplace_back(item);
    }
  }
  return items;
}
}  // namespace

std::vector<fs::path> found_pythons() { return split_list(FOUND_PYTHONS); }
std::vector<fs::path> too_old_pythons() { return split_list(TOO_OLD_PYTHONS); }

fs::path cached_venv(const fs::path& python) {
  std::string name = python.string();
  std::replace(name.begin(), name.end(), '/', '_');
  const fs::path venv = fs::path(VENV_CACHE) / name;
  must_run({MAKE_VENV, python.string(), venv.string()}, fs::path(VENV_CACHE).parent_path());
  return venv;
}

std::string python_version(const fs::path& python) {
  const std::string out =
      must_run({python.string(), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"}, "/");
  return out.substr(0, out.find('\n'));
}

fs::path static_python_stand_in(const fs::path& dir) {
  const fs::path python = dir / "static" / "bin" / ("python" + python_version(SYSTEM_PYTHON));
  fs::create_directories(python.parent_path());
  fs::copy_file(fs::canonical(SYSTEM_PYTHON), python, fs::copy_options::overwrite_existing);
  EXPECT_FALSE(contains(must_run({"ldd", python.string()}, dir), "libpython"))
      << SYSTEM_PYTHON << " links a shared libpython: no static stand-in here";
  return python;
}

fs::path embedded_python_stand_in(const fs::path& dir) {
  const std::string version = python_version(SYSTEM_PYTHON);
  const fs::path python = dir / "shared" / "bin" / ("python" + version);
  fs::create_directories(python.parent_path());
  fs::copy_file(PYTHON_ON_LIBPYTHON_STAND_IN, python, fs::copy_options::overwrite_existing);
  const fs::path library = dir / "shared" / "lib" / ("libpython" + version + ".so.1.0");
  fs::create_directories(library.parent_path());
  fs::create_symlink(fs::canonical(DEFAULT_LIBPYTHON), library);
  return python;
}

std::string path_with_stand_ins() { return path_with(STAND_INS); }

std::string path_with_recording_git(const fs::path& bin, const fs::path& log) {
  write_file(bin / "git",
             "#!/bin/sh\necho \"$*\" >> '" + log.string() + "'\nexec /usr/bin/git \"$@\"\n");
  fs::permissions(bin / "git", fs::perms(0755));
  return path_with(bin);
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

long long mtime_ns(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return -1;
  }
  return static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec;
}

bool CmakeCall::is_configure() const {
  return !args.empty() && std::find(args.begin(), args.end(), "--build") == args.end() &&
         std::find(args.begin(), args.end(), "--version") == args.end();
}

std::vector<CmakeCall> read_cmake_calls(const fs::path& log) {
  std::vector<CmakeCall> calls(1);
  std::istringstream in(read_file(log));
  std::string line;
  while (std::getline(in, line)) {
    if (line == "--end--") {
      calls.emplace_back();
    } else if (line.rfind("env:", 0) == 0) {
      const auto equals = line.find('=');
      calls.back().env[line.substr(4, equals - 4)] = line.substr(equals + 1);
    } else {
      calls.back().args.push_back(line);
    }
  }
  calls.pop_back();
  return calls;
}

std::map<std::string, std::string> files_under(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (name == ".git" || name == "build" || name == "dist" || name.ends_with(".egg-info")) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      files[it->path().lexically_relative(root).string()] =
          ascend_setup::sha256_hex(read_file(it->path()));
    }
  }
  return files;
}

std::vector<fs::path> files_in(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string wheel_summary(const fs::path& wheel) {
  return must_run({SYSTEM_PYTHON, "-c",
                   "import sys, os, zipfile\n"
                   "z = zipfile.ZipFile(sys.argv[1])\n"
                   "print(os.path.basename(sys.argv[1]))\n"
                   "for i in sorted(z.infolist(), key=lambda i: i.filename):\n"
                   "    if not i.filename.endswith('/RECORD'):\n"
                   "        print(oct((i.external_attr >> 16) & 0o777)[2:], i.filename)\n"
                   "for n in sorted(z.namelist()):\n"
                   "    if n.endswith(('/METADATA', '/entry_points.txt')):\n"
                   "        print(z.read(n).decode())\n",
                   wheel.string()},
                  wheel.parent_path());
}

std::vector<std::string> wheel_members(const fs::path& wheel) {
  const std::string out =
      must_run({SYSTEM_PYTHON, "-c",
                "import sys, zipfile\n"
                "for i in zipfile.ZipFile(sys.argv[1]).infolist():\n"
                "    print(oct((i.external_attr >> 16) & 0o777)[2:], i.filename)\n",
                wheel.string()},
               wheel.parent_path());
  std::vector<std::string> members;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    members.push_back(line);
  }
  return members;
}

std::map<fs::path, long long> source_mtimes(const fs::path& tree) {
  std::map<fs::path, long long> times;
  for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == "build" || name == "dist" || name == ".git" ||
                               name.find(".egg-info") != std::string::npos)) {
      it.disable_recursion_pending();
    } else if (!it->is_directory()) {
      times[it->path()] = mtime_ns(it->path());
    }
  }
  return times;
}

std::map<fs::path, std::pair<long long, std::string>> snapshot(const fs::path& tree) {
  std::map<fs::path, std::pair<long long, std::string>> files;
  for (const auto& entry : fs::recursive_directory_iterator(tree)) {
    if (entry.is_directory() && !entry.is_symlink()) {
      files[entry.path()] = {0, "dir"};
    } else {
      files[entry.path()] = {mtime_ns(entry.path()),
                             entry.is_symlink() ? "link" : read_file(entry.path())};
    }
  }
  return files;
}

std::vector<std::string> backend_entry_points(const nlohmann::ordered_json& kwargs) {
  std::vector<std::string> entries;
  for (const auto& entry : kwargs["entry_points"]["triton.backends"]) {
    entries.push_back(entry.get<std::string>());
  }
  return entries;
}

fs::path write_profile(const fs::path& path,
                       const std::vector<std::pair<std::string, std::string>>& replacements,
                       std::string_view base) {
  std::string text(base.empty() ? ascend_setup::builtin_profile_text() : base);
  for (const auto& [from, to] : replacements) {
    text = replace_once(text, from, to);
  }
  write_file(path, text);
  return path;
}

void adopt_ascend_setup_hooks(const fs::path& tree) {
  write_file(tree / "third_party/ascend/build/__init__.py",
             "from ascend_setup.hooks import prepare, activate\n");
  const std::string imports =
      "from python.build_helpers import get_base_dir, get_cmake_dir  # noqa: E402\n";
  std::string setup_py = replace_once(read_file(tree / "setup.py"), imports,
                                      imports +
                                          "from third_party.ascend.build import prepare, activate  "
                                          "# noqa: E402\nprepare()\n");
  write_file(tree / "setup.py", replace_once(setup_py, "\nsetup(\n", "\nactivate()\nsetup(\n"));
  write_file(tree / "pyproject.toml",
             "[build-system]\nrequires = [\"setuptools>=40.8.0\", \"wheel\"]\n"
             "build-backend = \"setuptools.build_meta\"\n");
}

std::string_view builtin_profile_text_of(const std::string& file) {
  for (const ascend_setup::BuiltinProfile& builtin : ascend_setup::builtin_profiles()) {
    if (builtin.file == file) {
      return builtin.text;
    }
  }
  ADD_FAILURE() << "no built-in profile " << file;
  return {};
}

std::string_view in_tree_profile_text() {
  return builtin_profile_text_of("triton-ascend-3.6.0-in-tree.toml");
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' in the text";
  if (at != std::string::npos) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string make_distributed_remote(const fs::path& dir, const fs::path& home) {
  write_file(dir / "python/triton_dist/__init__.py", "");
  write_file(dir / "python/triton_dist/__init__.pyi", "");
  write_file(dir / "python/triton_dist/layers/__init__.py", "");
  write_file(dir / "python/triton_dist/layers/nested/ops.py", "def op(): pass\n");
  write_file(dir / "python/triton_dist/layers/nested/ops.pyi", "def op() -> None: ...\n");
  write_file(dir / "python/triton_dist/layers/nested/README.txt", "not packaged\n");
  const std::string head = make_git_repo(dir, home);
  must_run({"git", "branch", "-q", "-M", "master"}, dir, git_env(home));
  return head;
}

}  // namespace test_support

namespace test_support {

SmallDisk::SmallDisk(const fs::path& dir, const std::string& size) : dir_(dir) {
  fs::create_directories(dir_);
  const std::string options = "size=" + size + ",mode=0755";
  if (::mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    ADD_FAILURE() << "cannot mount a " << size << " tmpfs at " << dir_
                  << " (needs root): " << std::strerror(errno);
    return;
  }
  mounted_ = true;
}

SmallDisk::~SmallDisk() {
  if (mounted_ && ::umount2(dir_.c_str(), 0) != 0) {
    ::umount2(dir_.c_str(), MNT_DETACH);  // still busy: detached, freed when the last user ends
  }
  std::error_code ignored;
  fs::remove(dir_, ignored);
}

void SmallDisk::fill(std::uint64_t leave) const {
  struct statvfs disk {};
  ASSERT_EQ(::statvfs(dir_.c_str(), &disk), 0);
  const std::uint64_t free_bytes = std::uint64_t(disk.f_bavail) * disk.f_frsize;
  ASSERT_GT(free_bytes, leave) << "the disk has less free than " << leave;
  const int fd = ::open((dir_ / ".filler").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(free_bytes - leave));
  ::close(fd);
  ASSERT_EQ(rc, 0) << std::strerror(rc);
}

HeldFileLock::HeldFileLock(const fs::path& path, const std::string& holder) {
  fs::create_directories(path.parent_path());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || ::flock(fd, LOCK_EX) != 0 ||
      ::write(fd, holder.data(), holder.size()) != static_cast<ssize_t>(holder.size())) {
    ADD_FAILURE() << "cannot hold the lock " << path << ": " << std::strerror(errno);
    if (fd >= 0) {
      ::close(fd);
    }
    return;
  }
  fd_ = fd;
}

void HeldFileLock::release() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

fs::path leave_staged_copy(const fs::path& target, const std::string& what, const fs::path& file) {
  const pid_t ended = ::fork();
  if (ended == 0) {
    ::_exit(0);
  }
  int status = 0;
  EXPECT_EQ(::waitpid(ended, &status, 0), ended);
  const ascend_setup::StagedReplacement staging(test_writer_lock(), target,
                                                what);  // named as the run names it
  const std::string name = staging.staged().filename().string();
  const std::string pid = std::to_string(::getpid());
  EXPECT_TRUE(name.ends_with("-" + pid)) << name;
  const fs::path left = staging.staged().parent_path() /
                        (name.substr(0, name.size() - pid.size()) + std::to_string(ended));
  write_file(file.empty() ? left : left / file, "half\n");
  return left;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& part) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(part) != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

std::string error_line(const std::string& err) {
  const auto at = err.find("ascend-setup: error: ");
  return at == std::string::npos ? std::string() : err.substr(at, err.find('\n', at) - at);
}

bool wait_until(const std::function<bool()>& ready, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace test_support
