// The start of every run on a tree, before any Python: the source tree
// entered (cwd = setup.py's directory), a killed run's patching rolled back,
// the profile chosen (and the log line saying why), the Ascend environment
// defaults set; and the commands that need nothing more (--apply-patches,
// --patch-status, --restore-sources), which need no interpreter: the launcher
// hands them to ascend-setup-patches (src/mains/patches_main.cpp).
#pragma once

#include "base/git/source_repo.hpp"
#include "base/launch/command_line.hpp"
#include "base/layer/profile.hpp"
#include "base/layer/profile_choice.hpp"

#include <filesystem>
#include <memory>

namespace ascend_setup {

struct SourceTree {
  std::filesystem::path root;      // absolute: .git, version.txt, third_party/ascend, patches
  std::filesystem::path setup_py;  // absolute
  std::filesystem::path run_dir;   // the process's cwd from here on: setup.py's directory
                                   // when inside the tree (python/setup.py), else the root
  std::filesystem::path script;    // sys.argv[0]: relative to run_dir when inside it
};

struct RunStart {
  SourceTree tree;
  std::shared_ptr<const Profile> profile;
  std::unique_ptr<LibgitStartAhead> libgit_start;  // overlaps Python's start
};

// Throws Error (exit 3) for a missing tree or setup.py, a bad profile.
RunStart start_run(const HostOptions& options);

// The part of start_run() after the tree is found, without changing
// directory (also the hooks' start, in an interpreter already running
// setup.py): a killed run's patching rolled back, the profile chosen and the
// line saying why logged, the Ascend environment defaults set (setenv).
std::shared_ptr<const Profile> start_on_tree(const std::filesystem::path& root,
                                             const std::filesystem::path& setup_py,
                                             const ProfileRequest& request);

// --apply-patches, --patch-status, --restore-sources: the patch engine alone.
int run_patch_action(const HostOptions& options, const SourceTree& tree, const Profile& profile);

// start_run() then run_patch_action(): the launcher's whole run of a patch option.
int run_patch_command(const HostOptions& options);

}  // namespace ascend_setup
