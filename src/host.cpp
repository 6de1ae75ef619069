#include "ascend_setup/host.hpp"

#include "ascend_setup/captured_setup.hpp"
#include "ascend_setup/embedded_python.hpp"
#include "ascend_setup/environment.hpp"
#include "ascend_setup/error.hpp"
#include "ascend_setup/kwargs_json.hpp"
#include "ascend_setup/patch_engine.hpp"
#include "ascend_setup/setup_kwargs.hpp"
#include "ascend_setup/source_repo.hpp"
#include "overrides.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>

namespace py = pybind11;

namespace ascend_setup {

namespace {

struct SourceTree {
  std::filesystem::path root;      // absolute; the process's cwd from here on
  std::filesystem::path setup_py;  // absolute
  std::filesystem::path script;    // sys.argv[0]: relative to root when inside it
};

// Upstream expects to run from the tree root (cwd-relative paths everywhere).
SourceTree enter_source_tree(const HostOptions& options) {
  SourceTree tree;
  std::error_code ec;
  tree.root = std::filesystem::weakly_canonical(std::filesystem::absolute(options.source_dir), ec);
  if (ec || !std::filesystem::is_directory(tree.root)) {
    throw Error("source directory " + options.source_dir.string() + " does not exist");
  }
  tree.setup_py =
      options.setup_py ? std::filesystem::absolute(*options.setup_py) : tree.root / "setup.py";
  if (!std::filesystem::is_regular_file(tree.setup_py)) {
    throw Error(options.setup_py
                    ? "--setup-py " + options.setup_py->string() + " is not a file"
                    : tree.root.string() +
                          " has no setup.py: run ascend-setup in a triton-ascend source tree "
                          "or pass -C DIR");
  }
  const auto relative = tree.setup_py.lexically_relative(tree.root);
  tree.script = !relative.empty() && *relative.begin() != ".." ? relative : tree.setup_py;
  std::filesystem::current_path(tree.root);
  return tree;
}

void print_json(const nlohmann::ordered_json& value) {
  flush_python_streams();
  std::cout << value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
            << std::endl;
}

// Seed 4.1 from "capture setup()" on; every Python object lives in here, so
// that none outlives the interpreter.
int run_setup_py(const HostOptions& options, const SourceTree& tree,
                 const std::shared_ptr<const Profile>& profile) {
  Phase phase = Phase::loading_setup_py;
  try {
    const auto started = std::chrono::steady_clock::now();
    auto elapsed_ms = [&started] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
          .count();
    };
    CapturedSetup captured = capture_setup(tree.setup_py);
    spdlog::debug("setup.py executed ({:.1f} ms)", elapsed_ms());
    if (options.dump == DumpMode::captured) {
      print_json(to_json(captured.kwargs));
      return exit_code::ok;
    }
    const nlohmann::ordered_json captured_json =
        options.dump == DumpMode::diff ? to_json(captured.kwargs) : nlohmann::ordered_json();

    phase = Phase::patching;
    const PlatformInfo platform = current_platform();
    apply_overrides({captured.module, captured.kwargs, profile, tree.root, platform, options.mode,
                     options.force_patches, {}});
    py::dict kwargs =
        rewrite_setup_kwargs(captured.kwargs, captured.module, *profile, tree.root, platform);
    spdlog::debug("overrides applied, kwargs rewritten ({:.1f} ms)", elapsed_ms());
    if (options.dump == DumpMode::rewritten) {
      print_json(to_json(kwargs));
      return exit_code::ok;
    }
    if (options.dump == DumpMode::diff) {
      print_json(kwargs_diff(captured_json, to_json(kwargs)));
      return exit_code::ok;
    }

    phase = Phase::calling_setup;
    captured.real_setup(**kwargs);
    flush_python_streams();
    return exit_code::ok;
  } catch (py::error_already_set& error) {
    return report_python_error(error, phase);
  }
}

// --apply-patches, --patch-status, --restore-sources: the patch engine alone.
int run_patch_action(const HostOptions& options, const SourceTree& tree, const Profile& profile) {
  if (options.patch_action == PatchAction::apply) {
    patch_source_tree(tree.root, profile, options.mode, options.force_patches);
    return exit_code::ok;
  }
  const ModeChoice mode = choose_build_mode(options.mode, profile.switches, tree.root);
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
  const PatchStatus status = engine.status();
  std::cout << "mode " << to_string(mode.mode) << " (" << mode.reason << ")\n";
  for (const auto& patch : status.patches) {
    const char* state = !patch.applied ? "not-applied"
                        : patch.wanted ? "applied"
                                       : "applied-unwanted";
    std::cout << "patch " << state << " " << patch.name << "\n";
  }
  for (const auto& [file, file_status] : status.files) {
    std::cout << "file " << to_string(file_status) << " " << file << "\n";
  }
  std::cout.flush();
  return status.patched_for_mode ? exit_code::ok : 1;
}

// Seed 4.8: with the distributed switch on, its submodule must be checked out
// before setup.py is loaded (get_packages() walks it).
void ensure_distributed_submodule(const SourceTree& tree, const Profile& profile) {
  if (!env_flag(profile.switches.distributed, "OFF")) {
    return;
  }
  const auto repo = SourceRepo::open(tree.root);
  if (!repo) {
    if (std::filesystem::is_directory(tree.root / profile.distributed.package_root)) {
      return;  // a source archive that ships the submodule's files
    }
    throw Error(profile.switches.distributed + " is on, but " + tree.root.string() +
                " is not a git checkout and has no " + profile.distributed.submodule +
                ": check the submodule out there (git submodule update --init " +
                profile.distributed.submodule + ") or turn the switch off");
  }
  repo->ensure_submodule(profile.distributed.submodule);
  spdlog::debug("submodule {} is checked out", profile.distributed.submodule);
}

}  // namespace

int run_host(const HostOptions& options) {
  if (options.trust_source_dir) {
    SourceRepo::trust_all_owners();
  }
  const SourceTree tree = enter_source_tree(options);
  auto profile = std::make_shared<const Profile>(select_profile(options.profile, tree.root));
  spdlog::debug("profile {} from {}", profile->name, profile->source);

  // Seed 4.2: the Ascend defaults; a value the user set wins.
  for (const auto& name : apply_env_defaults(profile->env_defaults)) {
    spdlog::debug("default {}={}", name, get_env(name).value_or(""));
  }

  if (options.patch_action != PatchAction::none) {
    return run_patch_action(options, tree, *profile);
  }
  ensure_distributed_submodule(tree, *profile);

  const Interpreter interpreter = choose_interpreter(options.python);
  EmbeddedPython python(interpreter, tree.script, options.setup_args, tree.root);
  return run_setup_py(options, tree, profile);
}

}  // namespace ascend_setup
