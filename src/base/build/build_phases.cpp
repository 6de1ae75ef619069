#include "base/build/build_phases.hpp"

#include "base/build/build_summary.hpp"
#include "base/layer/environment.hpp"
#include "base/util/error.hpp"

#include <spdlog/spdlog.h>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool on_github_actions() {
  try {
    return github_actions_from_environment().on;
  } catch (const Error&) {
    return false;  // a variable that is not UTF-8: said where the build reads it
  }
}

}  // namespace

std::string_view build_phase_name(BuildPhase phase) {
  switch (phase) {
    case BuildPhase::download:
      return "download";
    case BuildPhase::patch:
      return "patch";
    case BuildPhase::configure:
      return "configure";
    case BuildPhase::compile:
      return "compile";
    case BuildPhase::link:
      return "link";
    case BuildPhase::pack:
      return "pack";
    case BuildPhase::repair:
      return "repair";
  }
  return "build";
}

PhaseScope::PhaseScope(BuildPhase phase)
    : phase_(phase),
      start_(WallClock::now()),
      steady_start_(std::chrono::steady_clock::now()),
      group_(on_github_actions(), build_phase_name(phase)) {}

PhaseScope::~PhaseScope() {
  build_summary().phases.push_back({phase_, start_, seconds_since(steady_start_)});
}

NinjaRunScope::NinjaRunScope(fs::path build_dir)
    : build_dir_(std::move(build_dir)),
      before_(ninja_log_entries(build_dir_)),
      start_(WallClock::now()),
      group_(on_github_actions(), "compile and link") {}

NinjaRunScope::~NinjaRunScope() {
  try {
    add_ninja_run(build_dir_, before_, start_);
  } catch (const std::exception& error) {
    spdlog::debug("the ninja run in {} not recorded: {}", build_dir_.string(), error.what());
  }
}

}  // namespace ascend_setup
