#include "base/git/source_repo.hpp"

#include "base/git/network_retry.hpp"
#include "base/process/stop_signals.hpp"
#include "base/util/error.hpp"
#include "base/util/staged_replacement.hpp"

#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <utility>

#if ASCEND_SETUP_DEFER_LIBGIT2_CA
// The portable build links libgit2 and OpenSSL in, with libgit2's call of
// SSL_CTX_set_default_verify_paths wrapped (ld --wrap, cmake/Dependencies.cmake):
// libgit2's init calls it to load OpenSSL's default CA bundle, parsing every
// certificate in it (a quarter of a --dump-kwargs's instructions), though
// only a network operation checks one. Made during that init, the call is
// kept for the first network operation (GitNetwork below), which loads the
// same defaults, or the run's CA, into the same context, as the init would
// have.
#include <openssl/ssl.h>
#include <openssl/x509.h>

extern "C" int __real_SSL_CTX_set_default_verify_paths(SSL_CTX* context);

namespace {

thread_local bool in_libgit2_init = false;
std::atomic<SSL_CTX*> deferred_ca_context{nullptr};

}  // namespace

extern "C" int __wrap_SSL_CTX_set_default_verify_paths(SSL_CTX* context) {
  if (!in_libgit2_init) {
    return __real_SSL_CTX_set_default_verify_paths(context);
  }
  deferred_ca_context = context;
  return 1;
}

namespace {

// libgit2's context trusts what it is given as its certificate locations,
// and OpenSSL adds locations to the store they were given before: a change
// of CA would keep the old one trusted. A new store replaces it instead,
// holding `file` and `directory`, or OpenSSL's defaults when both are
// empty. False when libgit2's context is not known (then libgit2 is told).
bool replace_trusted_certificates(const std::string& file, const std::string& directory) {
  SSL_CTX* context = deferred_ca_context.load();
  if (context == nullptr) {
    return false;
  }
  SSL_CTX_set_cert_store(context, X509_STORE_new());
  const int loaded =
      file.empty() && directory.empty()
          ? __real_SSL_CTX_set_default_verify_paths(context)
          : SSL_CTX_load_verify_locations(context, file.empty() ? nullptr : file.c_str(),
                                          directory.empty() ? nullptr : directory.c_str());
  if (loaded != 1) {
    throw ascend_setup::Error("OpenSSL could not read them", ascend_setup::ErrorKind::bad_input);
  }
  return true;
}

}  // namespace
#else
namespace {

// The system's libgit2 is told its locations: with mbedTLS (Debian's), they
// replace what it trusted; with OpenSSL, they would be added to it.
bool replace_trusted_certificates(const std::string&, const std::string&) { return false; }

}  // namespace
#endif

// libgit2's *_options_init functions, not its *_INIT macros: clang reports
// every field those brace lists leave out (-Wmissing-field-initializers).
namespace ascend_setup {

void ensure_libgit2() {
  // The CA certificates are set before each network operation (GitNetwork
  // below): the run's choice, not the one the library's build baked in.
  static const int initialised = [] {
#if ASCEND_SETUP_DEFER_LIBGIT2_CA
    in_libgit2_init = true;
    const int result = git_libgit2_init();
    in_libgit2_init = false;
    return result;
#else
    return git_libgit2_init();
#endif
  }();
  (void)initialised;
}

LibgitStartAhead::LibgitStartAhead(const std::filesystem::path& tree_root) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(tree_root / ".git", ec))) {
    return;
  }
  const StopSignalsBlocked blocked;  // inherited by the thread
  try {
    thread_ = std::thread(ensure_libgit2);
  } catch (const std::system_error&) {
    // no thread: the first use initialises libgit2 itself
  }
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
// (tried again), this machine, or else the input (classify_git_failure).
Error libgit_error(const std::string& what) {
  const git_error* error = git_error_last();
  const ErrorKind kind =
      classify_git_failure(0, error != nullptr ? error->klass : 0, {}, false).kind();
  return Error(what.empty() ? last_git_error() : what + ": " + last_git_error(), kind);
}

using SubmodulePtr = std::unique_ptr<git_submodule, decltype(&git_submodule_free)>;

// The submodule registered at `path` (in .gitmodules or the index); null when
// none is (GIT_EEXISTS: a directory there that is no submodule). A
// .gitmodules libgit2 cannot read throws Error naming it, with libgit2's
// reason, rather than passing for "not registered".
SubmodulePtr find_submodule(git_repository* repo, const std::string& path) {
  git_submodule* submodule = nullptr;
  const int rc = git_submodule_lookup(&submodule, repo, path.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EEXISTS) {
    return SubmodulePtr(nullptr, git_submodule_free);
  }
  if (rc != 0) {
    throw libgit_error("cannot read the submodule " + path + " in .gitmodules of " +
                       std::string(git_repository_workdir(repo)));
  }
  return SubmodulePtr(submodule, git_submodule_free);
}

// The submodule's URL from .gitmodules, resolved against origin when
// relative; empty when it has none; Error for one holding a line break.
std::string submodule_url(git_repository* repo, git_submodule* submodule) {
  const char* url = git_submodule_url(submodule);
  if (url == nullptr) {
    return {};
  }
  std::string resolved = url;
  if (resolved.find_first_of("\r\n") != std::string::npos) {
    // libgit2 keeps a quoted line continuation's break; no URL holds one
    throw Error("the URL of the submodule " + std::string(git_submodule_path(submodule)) +
                    " in .gitmodules of " + std::string(git_repository_workdir(repo)) +
                    " holds a line break",
                ErrorKind::bad_input);
  }
  git_buf absolute = {nullptr, 0, 0};
  if (git_submodule_resolve_url(&absolute, repo, url) == 0) {
    resolved = absolute.ptr;
  }
  git_buf_dispose(&absolute);
  return resolved;
}

// A configured path of git's (http.sslCAInfo, ...) from `config`; empty when unset.
std::string config_path(git_config* config, const char* name) {
  git_buf value = {nullptr, 0, 0};
  std::string path;
  if (config != nullptr && git_config_get_path(&value, config, name) == 0) {
    path = value.ptr;
  }
  git_buf_dispose(&value);
  git_error_clear();
  return path;
}

// The network of one libgit2 operation on `url`: its proxy passed
// explicitly (GIT_PROXY_SPECIFIED, credentials from the proxy URL, which
// libgit2 presents on a 407; or GIT_PROXY_NONE), the CA set before it
// (libgit2's certificate locations are process-wide), a stop signal ending
// the transfer from its progress callbacks (and, while the server sends
// nothing, by interrupting its reads), and a failure told as the user
// can act on it. Callbacks never let an exception into libgit2's C frames.
class GitNetwork {
 public:
  // `repo`: whose configuration gives http.sslCAInfo/sslCAPath (nullptr:
  // the user's and the system's).
  GitNetwork(std::string url, const NetworkSettings& settings, git_repository* repo)
      : url_(std::move(url)), proxy_(settings.proxy_for(url_)) {
    git_config* config = nullptr;
    const int rc = repo != nullptr ? git_repository_config_snapshot(&config, repo)
                                   : git_config_open_default(&config);
    if (rc != 0) {
      config = nullptr;
      git_error_clear();
    }
    ca_ = settings.git_ca(config_path(config, "http.sslCAInfo"),
                          config_path(config, "http.sslCAPath"));
    git_config_free(config);
    use_certificates(ca_);
  }

  void apply(git_remote_callbacks& callbacks, git_proxy_options& proxy) {
    callbacks.payload = this;
    callbacks.transfer_progress = [](const git_indexer_progress*, void* payload) {
      return static_cast<GitNetwork*>(payload)->keep_going();
    };
    callbacks.sideband_progress = [](const char*, int, void* payload) {
      return static_cast<GitNetwork*>(payload)->keep_going();
    };
    if (proxy_) {
      proxy.type = GIT_PROXY_SPECIFIED;
      proxy.url = proxy_->url.c_str();
    } else {
      proxy.type = GIT_PROXY_NONE;
    }
  }

  // After a failed libgit2 call: the stop, an exception of a callback, or
  // libgit2's error as `what` + its message, told for the user when it is a
  // proxy's refusal or an untrusted certificate (neither worth a retry).
  [[noreturn]] void fail(int rc, const std::string& what) {
    throw_if_stopped();
    if (failure_) {
      std::rethrow_exception(failure_);
    }
    const git_error* error = git_error_last();
    const std::string message =
        error != nullptr && error->message != nullptr ? error->message : "unknown libgit2 error";
    const std::string prefix = what.empty() ? std::string() : what + ": ";
    const GitFailure failure =
        classify_git_failure(rc, error != nullptr ? error->klass : 0, message, proxy_.has_value());
    if (failure.cause == GitFailure::Cause::proxy && failure.kind() == ErrorKind::network) {
      throw Error(prefix + "the proxy " + proxy_->shown() + " (from " + proxy_->variable +
                      ") answered HTTP " + std::to_string(failure.proxy_status) +
                      " to CONNECT for " + url_origin(url_),
                  ErrorKind::network);
    }
    if (failure.cause == GitFailure::Cause::proxy) {
      throw Error(prefix + proxy_refusal_message(*proxy_, url_, failure.proxy_status, message),
                  ErrorKind::bad_input);
    }
    if (failure.cause == GitFailure::Cause::certificate) {
      throw Error(prefix + untrusted_certificate_message(url_, message, ca_), ErrorKind::bad_input);
    }
    std::string text = prefix + message;
    if (proxy_ && failure.kind() == ErrorKind::network) {
      text += " (through the proxy " + proxy_->shown() + " from " + proxy_->variable + ")";
    }
    throw Error(text, failure.kind());
  }

 private:
  // 0 to go on; -1 (libgit2 ends the transfer) on a stop or an exception.
  int keep_going() noexcept {
    try {
      return stop_signal() == 0 ? 0 : -1;
    } catch (...) {
      failure_ = std::current_exception();
      return -1;
    }
  }

  // The certificate locations, in place of those of the operation before
  // (replace_trusted_certificates above), parsed again only when they change.
  static void use_certificates(const CaChoice& ca) {
    static std::optional<std::pair<std::string, std::string>> current;
    const std::pair<std::string, std::string> wanted{ca.file.value_or(""),
                                                     ca.directory.value_or("")};
    if (current == wanted) {
      return;
    }
    const std::string named = wanted.first +
                              (wanted.second.empty() ? "" : " and " + wanted.second) + " (from " +
                              ca.named_by + ")";
    try {
      if (replace_trusted_certificates(wanted.first, wanted.second)) {
        current = wanted;
        return;
      }
    } catch (const Error& error) {
      throw Error("cannot use the CA certificates " + named + ": " + error.what(),
                  ErrorKind::bad_input);
    }
    if (!ca.file && !ca.directory) {
      return;  // the library's own default stays
    }
    if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca.file ? ca.file->c_str() : nullptr,
                         ca.directory ? ca.directory->c_str() : nullptr) != 0) {
      throw Error("cannot use the CA certificates " + named + ": " + last_git_error(),
                  ErrorKind::bad_input);
    }
    current = wanted;
  }

  std::string url_;
  std::optional<ProxyChoice> proxy_;
  CaChoice ca_;
  std::exception_ptr failure_;
  // A stop ends the transfer even while the server sends nothing (no
  // progress callback comes then): its reads are interrupted until it ends.
  StopWakesThisThread stop_wakes_;
};

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
                    "to read it anyway (for this run only; no git configuration is changed)",
                ErrorKind::bad_input);
  }
  if (rc != 0) {
    throw Error("cannot read the git checkout " + tree_root.string() + ": " + last_git_error(),
                ErrorKind::bad_input);
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
    throw Error("cannot resolve HEAD: " + last_git_error(), ErrorKind::bad_input);
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
    throw Error("cannot open the object database: " + last_git_error(), ErrorKind::bad_input);
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
    throw Error("cannot read HEAD: " + last_git_error(), ErrorKind::bad_input);
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
  if (git_revparse_single(&object, repo_.get(), spec.c_str()) == 0) {
    std::unique_ptr<git_object, decltype(&git_object_free)> guard(object, git_object_free);
    if (git_object_type(object) != GIT_OBJECT_BLOB) {
      return std::nullopt;
    }
    const auto* blob = reinterpret_cast<const git_blob*>(object);
    return std::string(static_cast<const char*>(git_blob_rawcontent(blob)),
                       static_cast<size_t>(git_blob_rawsize(blob)));
  }
  return nested_committed_file(path);
}

// A file inside a nested checkout (a submodule, or a repository placed in
// the work tree): its HEAD's content, from the outermost nested repository
// on the path.
std::optional<std::string> SourceRepo::nested_committed_file(const std::string& path) const {
  const char* workdir = git_repository_workdir(repo_.get());
  if (workdir == nullptr) {
    return std::nullopt;
  }
  for (auto slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::filesystem::path checkout = std::filesystem::path(workdir) / path.substr(0, slash);
    if (std::filesystem::exists(std::filesystem::symlink_status(checkout / ".git"))) {
      const auto nested = open(checkout);
      return nested ? nested->committed_file(path.substr(slash + 1)) : std::nullopt;
    }
  }
  return std::nullopt;
}

void SourceRepo::ensure_submodule(const std::string& path, const NetworkSettings& network) const {
  const std::string manual = "git submodule update --init " + path;
  const SubmodulePtr guard = find_submodule(repo_.get(), path);
  if (!guard) {
    throw Error("the submodule " + path + " is not registered in .gitmodules of " +
                    std::string(git_repository_workdir(repo_.get())) + ": add it, then run `" +
                    manual + "`",
                ErrorKind::bad_input);
  }
  git_submodule* submodule = guard.get();
  const std::filesystem::path directory =
      std::filesystem::path(git_repository_workdir(repo_.get())) / path;
  std::error_code ec;
  const bool checked_out =
      std::filesystem::exists(directory / ".git", ec) && !std::filesystem::is_empty(directory, ec);
  if (checked_out) {
    return;
  }
  const std::string resolved = submodule_url(repo_.get(), submodule);
  GitNetwork net(resolved, network, repo_.get());
  git_submodule_update_options options;
  git_submodule_update_options_init(&options, GIT_SUBMODULE_UPDATE_OPTIONS_VERSION);
  net.apply(options.fetch_opts.callbacks, options.fetch_opts.proxy_opts);
  if (const int rc = git_submodule_update(submodule, /*init=*/1, &options); rc != 0) {
    try {
      net.fail(rc, "");
    } catch (const Error& error) {
      if (error.kind() == ErrorKind::stopped) {
        throw;
      }
      throw Error("cannot check out the submodule " + path + " from " +
                      (resolved.empty() ? "?" : resolved) + ": " + error.what() + "; run `" +
                      manual + "` by hand (needs its remote)",
                  error.kind());
    }
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
    throw Error("'" + id + "' is not a commit id: " + last_git_error(), ErrorKind::bad_input);
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
  return find_submodule(repo_.get(), path) != nullptr;
}

SourceRepo SourceRepo::clone(const std::string& url, const std::string& branch,
                             const std::filesystem::path& directory, const NetworkSettings& network,
                             const HeldLock& held) {
  ensure_libgit2();
  StagedReplacement staging(held, directory, "clone");
  GitNetwork net(url, network, nullptr);
  git_clone_options options;
  git_clone_options_init(&options, GIT_CLONE_OPTIONS_VERSION);
  options.checkout_branch = branch.c_str();
  net.apply(options.fetch_opts.callbacks, options.fetch_opts.proxy_opts);
  git_repository* repo = nullptr;
  if (const int rc = git_clone(&repo, url.c_str(), staging.staged().c_str(), &options); rc != 0) {
    net.fail(rc, "");
  }
  git_repository_free(repo);
  staging.commit();
  auto opened = open(directory);
  if (!opened) {
    throw Error("the clone at " + directory.string() + " cannot be opened", ErrorKind::bad_input);
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

void SourceRepo::fetch_origin(const NetworkSettings& network) const {
  git_remote* raw = nullptr;
  if (git_remote_lookup(&raw, repo_.get(), "origin") != 0) {
    throw Error("the clone has no remote 'origin': " + last_git_error(), ErrorKind::bad_input);
  }
  GitPtr<git_remote> remote(raw, git_remote_free);
  const char* url = git_remote_url(remote.get());
  const std::string origin = url != nullptr ? url : "origin";
  GitNetwork net(origin, network, repo_.get());
  git_fetch_options options;
  git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  net.apply(options.callbacks, options.proxy_opts);
  if (const int rc = git_remote_fetch(remote.get(), nullptr, &options, nullptr); rc != 0) {
    net.fail(rc, "fetching from " + origin + " failed");
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
                    ": " + last_git_error(),
                ErrorKind::bad_input);
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
    throw Error("commit " + id + " is not in the clone", ErrorKind::bad_input);
  }
  if (!checkout_commit(repo_.get(), oid, GIT_CHECKOUT_SAFE)) {
    throw Error("cannot check out " + id + ": " + last_git_error(), ErrorKind::bad_input);
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
                    std::string(git_repository_workdir(repo_.get())) + ": " + last_git_error(),
                ErrorKind::bad_input);
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
    if (const SubmodulePtr submodule = find_submodule(repo_.get(), link.path)) {
      link.url = submodule_url(repo_.get(), submodule.get());
    }
    links.push_back(std::move(link));
  }
  return links;
}

void SourceRepo::fetch_commit(const std::string& url, const std::string& id,
                              const std::filesystem::path& directory,
                              const NetworkSettings& network, const HeldLock& held) {
  ensure_libgit2();
  const git_oid oid = parse_id(id);
  StagedReplacement staging(held, directory, "fetch");
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
  GitNetwork net(url, network, repo.get());
  git_fetch_options options;
  git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  net.apply(options.callbacks, options.proxy_opts);
  if (const int rc = git_remote_fetch(remote.get(), &specs, &options, nullptr); rc != 0) {
    net.fail(rc, "fetching " + id + " from " + url + " failed");
  }
  if (!checkout_commit(repo.get(), oid, GIT_CHECKOUT_FORCE)) {
    fail("cannot check out " + id + " fetched from " + url);
  }
  repo.reset();
  staging.commit();
}

}  // namespace ascend_setup
