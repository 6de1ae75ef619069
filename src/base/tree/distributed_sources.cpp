#include "base/tree/distributed_sources.hpp"

#include "base/git/network_retry.hpp"
#include "base/git/source_repo.hpp"
#include "base/layer/environment.hpp"
#include "base/tree/file_lock.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/strings.hpp"

#include <spdlog/spdlog.h>

namespace ascend_setup {

namespace {

namespace fs = std::filesystem;

// What a user runs to provide the clone by hand: git clone, then the pin checked out.
std::string manual_clone(const Profile::Distributed& d, const fs::path& directory, bool pinned) {
  std::string commands = "git clone " + d.url + " -b " + d.branch + " " + directory.string();
  if (pinned) {
    commands += " && git -C " + directory.string() + " checkout " + d.pin;
  }
  return commands;
}

RetryPolicy network_retries(const Profile::Distributed& d) {
  return {d.network_attempts, std::chrono::seconds(d.retry_seconds)};
}

bool missing_or_empty(const fs::path& directory) {
  std::error_code ec;
  return !fs::exists(directory, ec) ||
         (fs::is_directory(directory, ec) && fs::is_empty(directory, ec));
}

void provide_clone(const fs::path& directory, const Profile& profile,
                   const std::optional<SourceRepo>& tree_repo, const NetworkSettings& network,
                   const HeldLock& held) {
  const Profile::Distributed& d = profile.distributed;
  if (tree_repo && tree_repo->has_submodule(d.directory)) {
    tree_repo->ensure_submodule(d.directory, network);
    spdlog::info("distributed part: submodule {} checked out", d.directory);
    return;
  }
  spdlog::info("distributed part: cloning {} (branch {}) into {}", d.url, d.branch, d.directory);
  try {
    // A failed clone leaves nothing (staged, renamed into place when whole),
    // so each attempt starts clean.
    with_retries(network_retries(d), "cloning " + d.url,
                 [&] { SourceRepo::clone(d.url, d.branch, directory, network, held); });
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::stopped) {
      throw;
    }
    throw Error(profile.switches.distributed +
                    " is on, but the distributed part could not be cloned from " + d.url +
                    " into " + directory.string() + " (" + error.what() +
                    "); without network, provide the clone by hand: " +
                    manual_clone(d, directory, tree_repo.has_value()) + " (or turn " +
                    profile.switches.distributed + " off)",
                error.kind());
  }
}

void hold_at_pin(const fs::path& directory, const Profile& profile,
                 const NetworkSettings& network) {
  const Profile::Distributed& d = profile.distributed;
  const auto clone = SourceRepo::open(directory);
  if (!clone) {
    throw Error(directory.string() + " exists but is not a git clone, so it cannot be held at " +
                    d.pin +
                    ": move it away and ascend-setup clones it, or provide the clone by "
                    "hand: " +
                    manual_clone(d, directory, true),
                ErrorKind::bad_input);
  }
  const std::string head = clone->head_id().value_or("no commit");
  if (head == d.pin) {
    spdlog::debug("distributed part: {} is at the pin {}", d.directory, d.pin);
    return;
  }
  const std::vector<std::string> changed = clone->changed_files();
  if (!changed.empty()) {
    throw Error(directory.string() + " is at " + head + ", not at the pin " + d.pin +
                    ", and has local changes (" + join(changed) +
                    "): nothing was touched; commit or stash them in that clone, or check the "
                    "pin out yourself (git -C " +
                    directory.string() + " checkout " + d.pin + ")",
                ErrorKind::patch_conflict);
  }
  if (!clone->has_commit(d.pin)) {
    spdlog::info("distributed part: the pin {} is not in {}; fetching origin", d.pin, d.directory);
    try {
      with_retries(network_retries(d), "fetching origin of " + d.directory,
                   [&] { clone->fetch_origin(network); });
    } catch (const Error& error) {
      if (error.kind() == ErrorKind::stopped) {
        throw;
      }
      throw Error(directory.string() + " is at " + head + ", and the pin " + d.pin +
                      " is not in it: " + error.what() + "; fetch it by hand (git -C " +
                      directory.string() + " fetch origin && git -C " + directory.string() +
                      " checkout " + d.pin + ")",
                  error.kind());
    }
    if (!clone->has_commit(d.pin)) {
      throw Error("the pin " + d.pin + " of the distributed part is neither in " +
                      directory.string() +
                      " nor on its remote origin: check the profile's "
                      "distributed.pin",
                  ErrorKind::bad_input);
    }
  }
  clone->checkout_detached(d.pin);
  if (clone->head_id() != d.pin) {
    throw Error("the distributed part " + directory.string() + " is not at the pin " + d.pin +
                    " after checking it out (HEAD is " + clone->head_id().value_or("no commit") +
                    ")",
                ErrorKind::bad_input);
  }
  spdlog::info("distributed part: {} checked out at the pin {} (was {})", d.directory, d.pin, head);
}

}  // namespace

void ensure_distributed_sources(const fs::path& tree_root, const Profile& profile) {
  if (!env_on(EnvVar::distributed, profile)) {
    return;
  }
  const fs::path directory = tree_root / profile.distributed.directory;
  const auto tree_repo = SourceRepo::open(tree_root);
  const NetworkSettings network = network_settings_from_environment();
  if (missing_or_empty(directory)) {
    // One run clones at a time; under the lock, what a killed run staged
    // beside the directory is removed first (StagedReplacement).
    const FileLock lock(state_dir(tree_root) / "distributed.lock",
                        "cloning the distributed part into " + directory.string());
    if (missing_or_empty(directory)) {
      provide_clone(directory, profile, tree_repo, network, lock);
    }
  }
  if (!tree_repo) {
    spdlog::debug("distributed part: a source archive, {} used as it is",
                  profile.distributed.directory);
    return;
  }
  hold_at_pin(directory, profile, network);
}

}  // namespace ascend_setup
