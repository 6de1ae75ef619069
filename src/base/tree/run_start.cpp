#include "base/tree/run_start.hpp"

#include "base/layer/build_mode.hpp"
#include "base/layer/environment.hpp"
#include "base/layer/profile_choice.hpp"
#include "base/tree/patch_engine.hpp"
#include "base/util/error.hpp"
#include "base/util/machine_output.hpp"
#include "base/util/system_error.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace ascend_setup {

namespace {

// Upstream expects to run from setup.py's directory (cwd-relative paths
// everywhere): the tree root, or python/ in older trees. Without --setup-py,
// <root>/setup.py, else <root>/python/setup.py (as triton-ascend's CI looks).
SourceTree enter_source_tree(const HostOptions& options) {
  SourceTree tree;
  std::error_code ec;
  // What is true of the path: absent, not a directory, or not readable.
  const std::string named = "source directory " + options.source_dir.string();
  struct stat info {};
  if (::stat(options.source_dir.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      throw Error(named + " does not exist", ErrorKind::bad_input);
    }
    if (errno == ENOTDIR) {
      throw Error(named + " does not exist: a part of its path is a file, not a directory",
                  ErrorKind::bad_input);
    }
    throw system_error("read the source directory", options.source_dir, errno);
  }
  if (!S_ISDIR(info.st_mode)) {
    throw Error(named + " is not a directory (-C takes the directory of the tree)",
                ErrorKind::bad_input);
  }
  if (::access(options.source_dir.c_str(), R_OK | X_OK) != 0) {
    throw system_error("read the source directory", options.source_dir, errno);
  }
  tree.root = std::filesystem::weakly_canonical(std::filesystem::absolute(options.source_dir), ec);
  if (ec) {
    throw system_error("read the source directory", options.source_dir, ec.value());
  }
  if (options.setup_py) {
    tree.setup_py = std::filesystem::absolute(*options.setup_py);
  } else {
    tree.setup_py = tree.root / "setup.py";
    if (!std::filesystem::is_regular_file(tree.setup_py) &&
        std::filesystem::is_regular_file(tree.root / "python" / "setup.py")) {
      tree.setup_py = tree.root / "python" / "setup.py";
    }
  }
  if (!std::filesystem::is_regular_file(tree.setup_py)) {
    throw Error(options.setup_py
                    ? "--setup-py " + options.setup_py->string() + " is not a file"
                    : tree.root.string() +
                          " has no setup.py nor python/setup.py: run ascend-setup in a "
                          "triton-ascend source tree or pass -C DIR",
                ErrorKind::bad_input);
  }
  tree.setup_py = std::filesystem::weakly_canonical(tree.setup_py, ec);
  const auto inside = [](const std::filesystem::path& path, const std::filesystem::path& dir) {
    const auto relative = path.lexically_relative(dir);
    return !relative.empty() && *relative.begin() != "..";
  };
  tree.run_dir = inside(tree.setup_py, tree.root) ? tree.setup_py.parent_path() : tree.root;
  tree.script = inside(tree.setup_py, tree.run_dir) ? tree.setup_py.lexically_relative(tree.run_dir)
                                                    : tree.setup_py;
  if (tree.run_dir != tree.root) {
    spdlog::info("setup.py is {}: running it from {}", tree.setup_py.string(),
                 tree.run_dir.string());
  }
  std::filesystem::current_path(tree.run_dir);
  return tree;
}

}  // namespace

std::shared_ptr<const Profile> start_on_tree(const std::filesystem::path& root,
                                             const std::filesystem::path& setup_py,
                                             const ProfileRequest& request) {
  recover_interrupted_patching(root);  // a killed run's journal, before anything else
  ProfileChoice choice = select_profile(request, root, setup_py);
  // A built-in profile made for the tree's version is no news (stderr stays
  // setup.py's own, whichever line the tree is); a choice among the user's
  // --profile-dir profiles is said; no profile made for the version warns.
  spdlog::log(!choice.fits                                           ? spdlog::level::warn
              : choice.candidates > 1 && choice.from_directories > 0 ? spdlog::level::info
                                                                     : spdlog::level::debug,
              "profile {} ({}): {}", choice.profile.name, choice.profile.source,
              choice.profile.chosen_because);
  auto profile = std::make_shared<const Profile>(std::move(choice.profile));
  // The Ascend defaults; a value the user set wins.
  for (const auto& name : prepare_environment(*profile)) {
    spdlog::debug("default {}={}", name, std::getenv(name.c_str()));
  }
  return profile;
}

RunStart start_run(const HostOptions& options) {
  if (options.trust_source_dir) {
    SourceRepo::trust_all_owners();
  }
  RunStart start;
  start.tree = enter_source_tree(options);
  start.libgit_start = std::make_unique<LibgitStartAhead>(start.tree.root);
  start.profile =
      start_on_tree(start.tree.root, start.tree.setup_py, {options.profile, options.profile_dirs});
  return start;
}

int run_patch_action(const HostOptions& options, const SourceTree& tree, const Profile& profile) {
  if (options.patch_action == PatchAction::apply) {
    patch_source_tree(tree.root, profile, options.mode, options.force_patches);
    return exit_code::ok;
  }
  const ModeChoice mode = choose_build_mode(options.mode, profile, tree.root);
  PatchEngine engine(tree.root, profile, mode.mode, PatchEngine::default_state_dir(tree.root));
  if (options.patch_action == PatchAction::restore) {
    const PatchOutcome outcome = engine.restore(options.force_patches);
    if (outcome.written.empty()) {
      spdlog::info("sources already unpatched: no file touched");
    }
    for (const auto& file : outcome.written) {
      spdlog::info("restored {}", file);
    }
    return exit_code::ok;
  }
  const MachineOutput out;
  const PatchStatus status = engine.status();
  std::ostringstream text;
  text << "mode " << to_string(mode.mode) << " (" << mode.reason << ")\n";
  for (const auto& patch : status.patches) {
    const char* state = !patch.applied ? "not-applied"
                        : patch.wanted ? "applied"
                                       : "applied-unwanted";
    text << "patch " << state << " " << patch.name << "\n";
  }
  for (const auto& [file, file_status] : status.files) {
    text << "file " << to_string(file_status) << " " << file << "\n";
  }
  out.write(text.str());
  return status.patched_for_mode ? exit_code::ok : 1;
}

int run_patch_command(const HostOptions& options) {
  const RunStart start = start_run(options);
  return run_patch_action(options, start.tree, *start.profile);
}

}  // namespace ascend_setup
