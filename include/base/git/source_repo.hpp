// The source tree's git checkout, read with libgit2 (no git process): HEAD's
// abbreviated id and branch, its submodules and the gitlinks HEAD records;
// and clones and fetches of other repositories (the distributed part, the
// NPUIR build's nested repositories at one exact commit). Works for
// worktrees and submodules (`.git` is a file there), detached HEAD and
// shallow clones. Never writes git config.
//
// The network operations (ensure_submodule, clone, fetch_origin,
// fetch_commit) take the run's NetworkSettings: the proxy of their URL is
// passed to libgit2 explicitly, the CA is GIT_SSL_CAINFO/GIT_SSL_CAPATH, else
// git's http.sslCAInfo/http.sslCAPath, else the downloads' (set before each
// operation, in place of the operation before's, so that a CA trusted once
// is not trusted by a later operation that names another: where libgit2
// links OpenSSL in, by a new certificate store; Debian's libgit2, on mbedTLS,
// replaces its own). A stop signal ends a transfer under way (the stop's
// Error); a proxy's refusal or an untrusted certificate is an Error of kind
// bad_input saying what to fix (not retried), other network failures kind
// network.
#pragma once

#include "base/util/held_lock.hpp"
#include "base/util/network_settings.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

struct git_repository;

namespace ascend_setup {

// libgit2's init, once per process (shutdown is left to process exit). It
// loads the TLS certificates, milliseconds: call it only where libgit2 is used.
void ensure_libgit2();

// libgit2's init started on a second thread when `tree_root` is a git
// checkout, so that its certificate parsing (about 7% of a --dump-kwargs of
// a checkout, though nothing offline uses TLS) overlaps Python's start; the
// first ensure_libgit2() waits for it. Stop signals stay with the other
// threads. Joined on destruction.
class LibgitStartAhead {
 public:
  explicit LibgitStartAhead(const std::filesystem::path& tree_root);
  ~LibgitStartAhead();
  LibgitStartAhead(const LibgitStartAhead&) = delete;
  LibgitStartAhead& operator=(const LibgitStartAhead&) = delete;

 private:
  std::thread thread_;
};

// A repository a commit's tree records (a gitlink): its path, the commit id
// recorded and the URL .gitmodules gives it (resolved against origin when
// relative; empty when .gitmodules has none).
struct Gitlink {
  std::string path;
  std::string id;
  std::string url;
};

class SourceRepo {
 public:
  // Opens the checkout whose work tree is exactly `tree_root` (no search
  // upwards). Returns nullopt when `tree_root` is not a git checkout.
  // Throws Error when it is one that cannot be read (ownership check, corrupt).
  static std::optional<SourceRepo> open(const std::filesystem::path& tree_root);

  // HEAD's id abbreviated to at least `min_length` hex digits, longer when
  // needed to be unique, as `git rev-parse --short=N HEAD`.
  // nullopt when HEAD has no commit yet.
  std::optional<std::string> head_short_id(int min_length) const;

  // The branch HEAD points at, or nullopt on a detached HEAD.
  std::optional<std::string> branch() const;

  // The bytes of `path` (relative to the work tree) in HEAD's commit, or
  // nullopt when HEAD has no commit or no such file. A path inside a nested
  // checkout (a submodule's work tree, or a repository placed inside this
  // one) is read from that checkout's HEAD.
  std::optional<std::string> committed_file(const std::string& path) const;

  // Makes sure the submodule at `path` (relative to the work tree) is checked
  // out: registered in .gitmodules, then initialised and cloned/updated when
  // its directory is empty, as `git submodule update --init <path>`. Throws
  // Error naming the path and that command when it cannot.
  void ensure_submodule(const std::string& path, const NetworkSettings& network) const;

  // True when a submodule is registered at `path` (in .gitmodules or the index).
  bool has_submodule(const std::string& path) const;

  // Clones `url` at `branch` into `directory` (absent or empty): the clone is
  // made beside it under a temporary name and renamed into place, so a failed
  // clone leaves nothing behind (StagedReplacement, under `held`, the lock
  // that keeps other writers of `directory` out). Throws Error with
  // libgit2's message.
  static SourceRepo clone(const std::string& url, const std::string& branch,
                          const std::filesystem::path& directory, const NetworkSettings& network,
                          const HeldLock& held);

  // HEAD's full id, nullopt when HEAD has no commit yet.
  std::optional<std::string> head_id() const;

  // True when the commit `id` (40 hex digits) is in the object database.
  bool has_commit(const std::string& id) const;

  // Fetches origin's branches and tags. Throws Error with origin's URL and
  // libgit2's message when that fails.
  void fetch_origin(const NetworkSettings& network) const;

  // Tracked files whose work tree or index content differs from HEAD
  // (untracked files are not changes).
  std::vector<std::string> changed_files() const;

  // Checks the commit `id` out (safe: never overwrites a change) and detaches
  // HEAD there; branches are not moved.
  void checkout_detached(const std::string& id) const;

  // The gitlinks HEAD's tree records directly under `directory` (relative to
  // the work tree), in tree order; empty when HEAD has no such directory.
  // Throws Error when HEAD cannot be read.
  std::vector<Gitlink> gitlinks_under(const std::string& directory) const;

  // Fetches the commit `id` (40 hex digits) from `url` and checks it out in a
  // new repository at `directory` (absent or an empty directory). libgit2 1.5
  // has no shallow fetch, so the commit comes with its history; the server
  // must serve a `want` of an id that no branch need point at. Made beside
  // `directory` under a temporary name and renamed into place, so a failure
  // leaves nothing behind (under `held`, as clone()). Throws Error with
  // libgit2's message.
  static void fetch_commit(const std::string& url, const std::string& id,
                           const std::filesystem::path& directory, const NetworkSettings& network,
                           const HeldLock& held);

  // Lifts libgit2's repository ownership check for this process only.
  static void trust_all_owners();

 private:
  explicit SourceRepo(git_repository* repo);
  std::optional<std::string> nested_committed_file(const std::string& path) const;
  std::shared_ptr<git_repository> repo_;
};

}  // namespace ascend_setup
