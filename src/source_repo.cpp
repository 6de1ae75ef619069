#include "ascend_setup/source_repo.hpp"

#include "ascend_setup/error.hpp"

#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ascend_setup {

namespace {

// libgit2 needs one init per process; shutdown is left to process exit.
void ensure_libgit2() {
  static const int initialised = git_libgit2_init();
  (void)initialised;
}

std::string last_git_error() {
  const git_error* error = git_error_last();
  return error != nullptr && error->message != nullptr ? error->message : "unknown libgit2 error";
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
  ensure_libgit2();
  // `.git` is a directory in a plain clone and a file in a worktree or submodule.
  if (!std::filesystem::exists(std::filesystem::symlink_status(tree_root / ".git"))) {
    return std::nullopt;
  }
  git_repository* repo = nullptr;
  const int rc = git_repository_open_ext(&repo, tree_root.c_str(),
                                         GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
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

std::optional<std::string> SourceRepo::head_short_id(int min_length) const {
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

  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo_.get()) != 0) {
    throw Error("cannot open the object database: " + last_git_error());
  }
  std::unique_ptr<git_odb, decltype(&git_odb_free)> odb_guard(odb, git_odb_free);
  // Like `git rev-parse --short=N`: at least N digits, more until unique.
  for (size_t length = static_cast<size_t>(min_length); length < GIT_OID_HEXSZ; ++length) {
    git_oid found;
    if (git_odb_exists_prefix(&found, odb, &head, length) != GIT_EAMBIGUOUS) {
      return std::string(hex, length);
    }
  }
  return std::string(hex);
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

}  // namespace ascend_setup
