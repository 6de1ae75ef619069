#include "base/git/source_repo.hpp"

#include "base/util/ca_bundle.hpp"

#include "base/util/error.hpp"
#include "base/util/staged_replacement.hpp"

#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>

#include <csignal>
#include <system_error>

// libgit2's *_options_init functions, not its *_INIT macros: clang reports
// every field those brace lists leave out (-Wmissing-field-initializers).
namespace ascend_setup {

void ensure_libgit2() {
  static const int initialised = [] {
    const int count = git_libgit2_init();
    // The system's CA bundle, not the one the library's build baked in (the
    // portable build's is Debian's path; AlmaLinux keeps it elsewhere).
    if (auto bundle = system_ca_bundle()) {
      git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, bundle->c_str(), nullptr);
    }
    return count;
  }();
  (void)initialised;
}

LibgitStartAhead::LibgitStartAhead(const std::filesystem::path& tree_root) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(tree_root / ".git", ec))) {
    return;
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) {
    sigaddset(&stop_signals, signal);
  }
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);  // inherited by the thread
  try {
    thread_ = std::thread(ensure_libgit2);
  } catch (const std::system_error&) {
    // no thread: the first use initialises libgit2 itself
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

LibgitStartAhead::~LibgitStartAhead() {
  if (thread_.joinable()) {
    thread_.join();
  }
}

namespace {

std::string last_git_error() {
  const git_error* error = git_error_last();
  return error != nullptr && error->message != nullptr ? error->message : "unknown libgit2 error";
}

// libgit2's last error as an Error of the kind its class says: the network
// (tried again), this machine, or else the input.
Error libgit_error(const std::string& what) {
  const git_error* error = git_error_last();
  ErrorKind kind = ErrorKind::bad_input;
  if (error != nullptr) {
    switch (error->klass) {
      case GIT_ERROR_NET:
      case GIT_ERROR_HTTP:
      case GIT_ERROR_SSL:
      case GIT_ERROR_SSH:
        kind = ErrorKind::network;
        break;
      case GIT_ERROR_OS:
      case GIT_ERROR_FILESYSTEM:
      case GIT_ERROR_NOMEMORY:
        kind = ErrorKind::local_io;
        break;
      default:
        break;
    }
  }
  return Error(what.empty() ? last_git_error() : what + ": " + last_git_error(), kind);
}

bool owned_by_someone_else(const std::filesystem::path& tree_root) {
  struct stat info {};
  return ::stat(tree_root.c_str(), &info) == 0 && info.st_uid != ::geteuid();
}

}  // namespace

SourceRepo::SourceRepo(git_repository* repo) : repo_(repo, git_repository_free) {}

void SourceRepo::trust_all_owners() {
  ensure_libgit2();
  git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
}

std::optional<SourceRepo> SourceRepo::open(const std::filesystem::path& tree_root) {
  // `.git` is a directory in a plain clone and a file in a worktree or submodule.
  // Checked first: libgit2's init loads the TLS certificates (milliseconds).
  if (!std::filesystem::exists(std::filesystem::symlink_status(tree_root / ".git"))) {
    return std::nullopt;
  }
  ensure_libgit2();
  git_repository* repo = nullptr;
  const int rc =
      git_repository_open_ext(&repo, tree_root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  // libgit2 1.5 reports a refused owner either as GIT_EOWNER or, when no
  // safe.directory is configured, as a missing config value: check the owner.
  if (rc == GIT_EOWNER || (rc != 0 && owned_by_someone_else(tree_root))) {
    throw Error("the git checkout " + tree_root.string() +
                " is owned by another user, so git refuses to read it; pass --trust-source-dir "
                "to read it anyway (for this run only; no git configuration is changed)");
  }
  if (rc != 0) {
    throw Error("cannot read the git checkout " + tree_root.string() + ": " + last_git_error());
  }
  return SourceRepo(repo);
}

std::optional<std::string> SourceRepo::head_id() const {
  git_oid head;
  const int rc = git_reference_name_to_id(&head, repo_.get(), "HEAD");
  if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) {
    return std::nullopt;
  }
  if (rc != 0) {
    throw Error("cannot resolve HEAD: " + last_git_error());
  }
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, &head);
  return std::string(hex);
}

std::optional<std::string> SourceRepo::head_short_id(int min_length) const {
  const std::optional<std::string> hex = head_id();
  if (!hex) {
    return std::nullopt;
  }
  git_oid head;
  git_oid_fromstr(&head, hex->c_str());

  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo_.get()) != 0) {
    throw Error("cannot open the object database: " + last_git_error());
  }
  std::unique_ptr<git_odb, decltype(&git_odb_free)> odb_guard(odb, git_odb_free);
  // Like `git rev-parse --short=N`: at least N digits, more until unique.
  for (size_t length = static_cast<size_t>(min_length); length < GIT_OID_HEXSZ; ++length) {
    git_oid found;
    if (git_odb_exists_prefix(&found, odb, &head, length) != GIT_EAMBIGUOUS) {
      return hex->substr(0, length);
    }
  }
  return hex;
}

std::optional<std::string> SourceRepo::branch() const {
  if (git_repository_head_detached(repo_.get()) == 1) {
    return std::nullopt;
  }
  git_reference* head = nullptr;
  // An unborn branch still has a name: read HEAD's symbolic target.
  if (git_reference_lookup(&head, repo_.get(), "HEAD") != 0) {
    throw Error("cannot read HEAD: " + last_git_error());
  }
  std::unique_ptr<git_reference, decltype(&git_reference_free)> guard(head, git_reference_free);
  const char* target = git_reference_symbolic_target(head);
  if (target == nullptr) {
    return std::nullopt;
  }
  std::string name = target;
  const std::string prefix = "refs/heads/";
  if (name.rfind(prefix, 0) == 0) {
    name = name.substr(prefix.size());
  }
  return name;
}

std::optional<std::string> SourceRepo::committed_file(const std::string& path) const {
  git_object* object = nullptr;
  const std::string spec = "HEAD:" + path;
  if (git_revparse_single(&object, repo_.get(), spec.c_str()) != 0) {
    return std::nullopt;
  }
  std::unique_ptr<git_object, decltype(&git_object_free)> guard(object, git_object_free);
  if (git_object_type(object) != GIT_OBJECT_BLOB) {
    return std::nullopt;
  }
  const auto* blob = reinterpret_cast<const git_blob*>(object);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob)),
                     static_cast<size_t>(git_blob_rawsize(blob)));
}

void SourceRepo::ensure_submodule(const std::string& path) const {
  const std::string manual = "git submodule update --init " + path;
  git_submodule* submodule = nullptr;
  const int rc = git_submodule_lookup(&submodule, repo_.get(), path.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EEXISTS) {
    throw Error("the submodule " + path + " is not registered in .gitmodules of " +
                std::string(git_repository_workdir(repo_.get())) + ": add it, then run `" + manual +
                "`");
  }
  if (rc != 0) {
    throw Error("cannot read the submodule " + path + ": " + last_git_error() + "; run `" + manual +
                "` by hand");
  }
  std::unique_ptr<git_submodule, decltype(&git_submodule_free)> guard(submodule,
                                                                      git_submodule_free);
  const std::filesystem::path directory =
      std::filesystem::path(git_repository_workdir(repo_.get())) / path;
  std::error_code ec;
  const bool checked_out =
      std::filesystem::exists(directory / ".git", ec) && !std::filesystem::is_empty(directory, ec);
  if (checked_out) {
    return;
  }
  git_submodule_update_options options;
  git_submodule_update_options_init(&options, GIT_SUBMODULE_UPDATE_OPTIONS_VERSION);
  if (git_submodule_update(submodule, /*init=*/1, &options) != 0) {
    const char* url = git_submodule_url(submodule);
    const Error error = libgit_error("");
    throw Error("cannot check out the submodule " + path + " from " + (url ? url : "?") + ": " +
                    error.what() + "; run `" + manual + "` by hand (needs its remote)",
                error.kind());
  }
}

}  // namespace ascend_setup

namespace ascend_setup {

namespace {

template <typename T>
using GitPtr = std::unique_ptr<T, void (*)(T*)>;

git_oid parse_id(const std::string& id) {
  git_oid oid;
  if (git_oid_fromstr(&oid, id.c_str()) != 0) {
    throw Error("'" + id + "' is not a commit id: " + last_git_error());
  }
  return oid;
}

// Checks the commit `oid` out and detaches HEAD at it; false (libgit2's
// error pending) when the commit is missing or the checkout fails.
bool checkout_commit(git_repository* repo, const git_oid& oid, unsigned int strategy) {
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo, &oid) != 0) {
    return false;
  }
  GitPtr<git_commit> commit(raw, git_commit_free);
  git_checkout_options options;
  git_checkout_options_init(&options, GIT_CHECKOUT_OPTIONS_VERSION);
  options.checkout_strategy = strategy;
  return git_checkout_tree(repo, reinterpret_cast<const git_object*>(commit.get()), &options) ==
             0 &&
         git_repository_set_head_detached(repo, &oid) == 0;
}

}  // namespace

bool SourceRepo::has_submodule(const std::string& path) const {
  git_submodule* submodule = nullptr;
  if (git_submodule_lookup(&submodule, repo_.get(), path.c_str()) != 0) {
    return false;
  }
  git_submodule_free(submodule);
  return true;
}

SourceRepo SourceRepo::clone(const std::string& url, const std::string& branch,
                             const std::filesystem::path& directory) {
  ensure_libgit2();
  StagedReplacement staging(directory, "clone");
  git_clone_options options;
  git_clone_options_init(&options, GIT_CLONE_OPTIONS_VERSION);
  options.checkout_branch = branch.c_str();
  git_repository* repo = nullptr;
  if (git_clone(&repo, url.c_str(), staging.staged().c_str(), &options) != 0) {
    throw libgit_error("");
  }
  git_repository_free(repo);
  staging.commit();
  auto opened = open(directory);
  if (!opened) {
    throw Error("the clone at " + directory.string() + " cannot be opened");
  }
  return std::move(*opened);
}

bool SourceRepo::has_commit(const std::string& id) const {
  const git_oid oid = parse_id(id);
  git_commit* commit = nullptr;
  if (git_commit_lookup(&commit, repo_.get(), &oid) != 0) {
    return false;
  }
  git_commit_free(commit);
  return true;
}

void SourceRepo::fetch_origin() const {
  git_remote* raw = nullptr;
  if (git_remote_lookup(&raw, repo_.get(), "origin") != 0) {
    throw Error("the clone has no remote 'origin': " + last_git_error());
  }
  GitPtr<git_remote> remote(raw, git_remote_free);
  git_fetch_options options;
  git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  if (git_remote_fetch(remote.get(), nullptr, &options, nullptr) != 0) {
    const char* url = git_remote_url(remote.get());
    throw libgit_error("fetching from " + std::string(url ? url : "origin") + " failed");
  }
}

std::vector<std::string> SourceRepo::changed_files() const {
  git_status_options options;
  git_status_options_init(&options, GIT_STATUS_OPTIONS_VERSION);
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* raw = nullptr;
  if (git_status_list_new(&raw, repo_.get(), &options) != 0) {
    throw Error("cannot read the status of " + std::string(git_repository_workdir(repo_.get())) +
                ": " + last_git_error());
  }
  GitPtr<git_status_list> list(raw, git_status_list_free);
  std::vector<std::string> files;
  for (size_t i = 0; i < git_status_list_entrycount(list.get()); ++i) {
    const git_status_entry* entry = git_status_byindex(list.get(), i);
    const git_diff_delta* delta =
        entry->index_to_workdir != nullptr ? entry->index_to_workdir : entry->head_to_index;
    if (entry->status != GIT_STATUS_CURRENT && delta != nullptr) {
      files.emplace_back(delta->old_file.path);
    }
  }
  return files;
}

void SourceRepo::checkout_detached(const std::string& id) const {
  const git_oid oid = parse_id(id);
  if (!has_commit(id)) {
    throw Error("commit " + id + " is not in the clone");
  }
  if (!checkout_commit(repo_.get(), oid, GIT_CHECKOUT_SAFE)) {
    throw Error("cannot check out " + id + ": " + last_git_error());
  }
}

std::vector<Gitlink> SourceRepo::gitlinks_under(const std::string& directory) const {
  std::vector<Gitlink> links;
  git_object* raw = nullptr;
  const std::string spec = "HEAD:" + directory;
  if (const int rc = git_revparse_single(&raw, repo_.get(), spec.c_str()); rc != 0) {
    if (rc == GIT_ENOTFOUND) {
      return links;
    }
    throw Error("cannot read " + directory + " in HEAD of " +
                std::string(git_repository_workdir(repo_.get())) + ": " + last_git_error());
  }
  GitPtr<git_object> object(raw, git_object_free);
  if (git_object_type(object.get()) != GIT_OBJECT_TREE) {
    return links;
  }
  const auto* tree = reinterpret_cast<const git_tree*>(object.get());
  for (size_t i = 0; i < git_tree_entrycount(tree); ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(tree, i);
    if (git_tree_entry_filemode(entry) != GIT_FILEMODE_COMMIT) {
      continue;
    }
    Gitlink link;
    link.path = directory + "/" + git_tree_entry_name(entry);
    char hex[GIT_OID_HEXSZ + 1] = {};
    git_oid_tostr(hex, sizeof hex, git_tree_entry_id(entry));
    link.id = hex;
    git_submodule* submodule = nullptr;
    if (git_submodule_lookup(&submodule, repo_.get(), link.path.c_str()) == 0) {
      GitPtr<git_submodule> guard(submodule, git_submodule_free);
      if (const char* url = git_submodule_url(submodule); url != nullptr) {
        link.url = url;
        git_buf resolved = {nullptr, 0, 0};
        if (git_submodule_resolve_url(&resolved, repo_.get(), url) == 0) {
          link.url = resolved.ptr;
        }
        git_buf_dispose(&resolved);
      }
    }
    links.push_back(std::move(link));
  }
  return links;
}

void SourceRepo::fetch_commit(const std::string& url, const std::string& id,
                              const std::filesystem::path& directory) {
  ensure_libgit2();
  const git_oid oid = parse_id(id);
  StagedReplacement staging(directory, "fetch");
  const auto fail = [](const std::string& what) { throw libgit_error(what); };
  git_repository* raw_repo = nullptr;
  if (git_repository_init(&raw_repo, staging.staged().c_str(), 0) != 0) {
    fail("cannot create a repository at " + staging.staged().string());
  }
  GitPtr<git_repository> repo(raw_repo, git_repository_free);
  git_remote* raw_remote = nullptr;
  if (git_remote_create(&raw_remote, repo.get(), "origin", url.c_str()) != 0) {
    fail("cannot add the remote " + url);
  }
  GitPtr<git_remote> remote(raw_remote, git_remote_free);
  // The id itself as the refspec's source: a `want <id>`, kept under a ref of
  // ascend-setup's own so that the commit stays reachable.
  std::string refspec = id + ":refs/ascend-setup/fetched";
  char* refspecs[] = {refspec.data()};
  const git_strarray specs = {refspecs, 1};
  git_fetch_options options;
  git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  if (git_remote_fetch(remote.get(), &specs, &options, nullptr) != 0) {
    fail("fetching " + id + " from " + url + " failed");
  }
  if (!checkout_commit(repo.get(), oid, GIT_CHECKOUT_FORCE)) {
    fail("cannot check out " + id + " fetched from " + url);
  }
  repo.reset();
  staging.commit();
}

}  // namespace ascend_setup
