// The patch step of a build in which nothing changed, two ways, on a copy of
// a tree (the example tree by default): the Python entry's way (`git
// checkout --` of every patched file, then `git apply` of each patch, as
// setup_ascend.py runs them) against ascend-setup's patch engine, in process
// and as a whole `ascend-setup --apply-patches` process. Prints the time per
// run, the ratio, and how many source files got a new mtime.
//
//   patch_step_bench ASCEND_SETUP_BINARY [TREE] [RUNS]
#include "base/layer/profile.hpp"
#include "base/process/process.hpp"
#include "base/tree/patch_engine.hpp"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>

namespace fs = std::filesystem;
using namespace ascend_setup;

namespace {

using Clock = std::chrono::steady_clock;

const std::map<std::string, std::optional<std::string>> git_env = {
    {"GIT_CONFIG_GLOBAL", "/dev/null"}, {"GIT_CONFIG_NOSYSTEM", "1"},
    {"GIT_AUTHOR_NAME", "bench"},       {"GIT_AUTHOR_EMAIL", "bench@example.com"},
    {"GIT_COMMITTER_NAME", "bench"},    {"GIT_COMMITTER_EMAIL", "bench@example.com"}};

void run(const std::vector<std::string>& argv, const fs::path& cwd) {
  const ProcessResult result = run_process({argv, cwd, git_env, ""});
  if (result.exit_code != 0) {
    std::cerr << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << " failed: " << result.err;
    std::exit(1);
  }
}

// Every source file's mtime (the .git and build directories excluded).
std::map<fs::path, fs::file_time_type> mtimes(const fs::path& tree) {
  std::map<fs::path, fs::file_time_type> result;
  for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator();
       ++it) {
    const auto name = it->path().filename();
    if (it->is_directory() && (name == ".git" || name == "build")) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      result[it->path()] = it->last_write_time();
    }
  }
  return result;
}

int changed(const std::map<fs::path, fs::file_time_type>& before,
            const std::map<fs::path, fs::file_time_type>& after) {
  int count = 0;
  for (const auto& [path, time] : after) {
    const auto old = before.find(path);
    count += old == before.end() || old->second != time ? 1 : 0;
  }
  return count;
}

struct Figure {
  double ms_per_run = 0;
  int files_touched = 0;  // in the last run
};

Figure measure(const fs::path& tree, int runs, const std::function<void()>& step) {
  Figure figure;
  const auto start = Clock::now();
  for (int i = 0; i < runs; ++i) {
    const auto before = mtimes(tree);
    const auto t0 = Clock::now();
    step();
    figure.ms_per_run += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    figure.files_touched = changed(before, mtimes(tree));
  }
  (void)start;
  figure.ms_per_run /= runs;
  return figure;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: patch_step_bench ASCEND_SETUP_BINARY [TREE] [RUNS]\n";
    return 2;
  }
  const fs::path binary = fs::absolute(argv[1]);
  const fs::path source = argc > 2 ? fs::path(argv[2]) : fs::path(BENCH_EXAMPLE_TREE);
  const int runs = argc > 3 ? std::atoi(argv[3]) : 20;

  std::string pattern = (fs::temp_directory_path() / "ascend-setup-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return 1;
  }
  const fs::path work = pattern;
  const fs::path tree = work / "tree";
  fs::copy(source, tree, fs::copy_options::recursive);
  if (!fs::exists(tree / ".git")) {
    run({"git", "init", "-q", "-b", "main"}, tree);
    run({"git", "add", "-A"}, tree);
    run({"git", "commit", "-q", "-m", "bench"}, tree);
  }

  const Profile profile = parse_profile(builtin_profile_text(), "built-in");
  const fs::path patch_dir = tree / profile.patches.directory;
  const std::vector<fs::path> patches = {patch_dir / profile.patches.main.file,
                                         patch_dir / profile.patches.dev.file};
  // The files the patches touch, as the Python entry lists them.
  std::set<std::string> files;
  for (const auto& patch : patches) {
    const ProcessResult listed =
        run_process({{"git", "apply", "--numstat", patch.string()}, tree, git_env, ""});
    size_t at = 0;
    while (at < listed.out.size()) {
      const size_t end = listed.out.find('\n', at);
      const std::string line = listed.out.substr(at, end - at);
      files.insert(line.substr(line.rfind('\t') + 1));
      at = end == std::string::npos ? listed.out.size() : end + 1;
    }
  }

  // Both start from a tree patched by the previous build.
  PatchEngine engine(tree, profile, BuildMode::dev, PatchEngine::default_state_dir(tree));
  engine.apply(false);

  const Figure python_way = measure(tree, runs, [&] {
    std::vector<std::string> checkout = {"git", "checkout", "--"};
    checkout.insert(checkout.end(), files.begin(), files.end());
    run(checkout, tree);
    for (const auto& patch : patches) {
      run({"git", "apply", patch.string()}, tree);
    }
  });
  engine.apply(false);  // re-record: the Python way rewrote the files
  const Figure in_process = measure(tree, runs, [&] {
    PatchEngine(tree, profile, BuildMode::dev, PatchEngine::default_state_dir(tree)).apply(false);
  });
  const Figure process = measure(tree, runs, [&] {
    run({binary.string(), "--dev", "--log-level", "warn", "--apply-patches"}, tree);
  });

  std::printf("patch step of a build with nothing changed: %s, %zu patched files, %d runs each\n",
              source.string().c_str(), files.size(), runs);
  std::printf("  %-44s %10s %14s\n", "", "ms/run", "files touched");
  std::printf("  %-44s %10.3f %14d\n", "Python entry (git checkout -- + git apply)",
              python_way.ms_per_run, python_way.files_touched);
  std::printf("  %-44s %10.3f %14d\n", "ascend-setup patch engine (in the build)",
              in_process.ms_per_run, in_process.files_touched);
  std::printf("  %-44s %10.3f %14d\n", "ascend-setup --apply-patches (whole process)",
              process.ms_per_run, process.files_touched);
  std::printf("  ratio Python entry / patch engine: %.1fx; / whole process: %.1fx\n",
              python_way.ms_per_run / in_process.ms_per_run,
              python_way.ms_per_run / process.ms_per_run);
  std::error_code ec;
  fs::remove_all(work, ec);
  return 0;
}
