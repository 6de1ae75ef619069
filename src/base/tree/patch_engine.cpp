#include "base/tree/patch_engine.hpp"

#include "base/git/hunk_check.hpp"

#include "base/git/git_apply.hpp"
#include "base/git/source_repo.hpp"
#include "base/layer/environment.hpp"
#include "base/layer/patch_files.hpp"
#include "base/tree/file_lock.hpp"
#include "base/tree/scratch_dir.hpp"
#include "base/tree/state_paths.hpp"
#include "base/tree/tree_transaction.hpp"
#include "base/util/error.hpp"
#include "base/util/github_actions.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"

#include <sys/stat.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <utility>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

std::string timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
  return text;
}

// Where a failing hunk is: the first line that differs, else the line its
// header starts at in the old file ("@@ -a,b +c,d @@"), else 0.
int hunk_line(const HunkResult& hunk) {
  if (hunk.line > 0) {
    return hunk.line;
  }
  const auto at = hunk.header.find("@@ -");
  if (at == std::string::npos) {
    return 0;
  }
  return parse_integer(leading_digits(std::string_view(hunk.header).substr(at + 4)), 0, 1 << 30)
      .value_or(0);
}

// `git apply` of one of the engine's patches (inside its checkout when nested).
GitApplyResult apply_patch(const fs::path& scratch, const PatchText& patch,
                           ApplyDirection direction = ApplyDirection::forward,
                           ApplyAction action = ApplyAction::write,
                           std::vector<std::string> only = {}) {
  return git_apply(scratch, patch.text, patch.origin,
                   {direction, action, std::move(only), patch.checkout});
}

// lf_line_endings of a content that may be absent.
std::optional<std::string> lf(const std::optional<std::string>& text) {
  return text ? std::optional(lf_line_endings(*text)) : std::nullopt;
}

}  // namespace

std::string_view to_string(FileStatus status) {
  switch (status) {
    case FileStatus::pristine:
      return "pristine";
    case FileStatus::patched:
      return "patched";
    case FileStatus::patched_by_older_patch:
      return "patched-by-an-older-patch";
    case FileStatus::locally_modified:
      return "locally-modified";
    case FileStatus::missing:
      return "missing";
  }
  return "?";
}

// What the tree holds, worked out on copies: which patches are applied to
// which file, the unpatched ("base") content, and the content for the wanted
// patch set, which the scratch directory holds at the end.
struct PatchEngine::Analysis {
  ScratchDir scratch;
  std::vector<Patch> candidates;   // may be applied now, in application order
  std::vector<std::string> files;  // every file of candidates and wanted
  std::map<std::string, std::vector<const Patch*>> applied;  // file -> candidates found applied
  std::map<std::string, std::string> conflicts;  // file -> the patch whose hunks do not fit
  std::set<std::string> missing;                 // files a patch needs that do not exist
  // Files of a crlf_to_lf patch: worked on with LF endings; the tree's bytes
  // of those that had CRLF, to give back when the result is their content.
  std::set<std::string> lf_files;
  std::map<std::string, std::string> crlf_originals;

  // Not yet found missing or in conflict.
  bool open(const std::string& file) const {
    return conflicts.count(file) == 0 && missing.count(file) == 0;
  }
  bool all_open(const Patch& patch) const {
    return std::all_of(patch.files.begin(), patch.files.end(),
                       [&](const std::string& file) { return open(file); });
  }
  // A hunk of `patch` did not fit `file`: missing, unless the patch creates
  // it (while applying), else a conflict.
  void failed(const Patch& patch, const std::string& file, bool undoing) {
    if (!fs::exists(scratch.path() / file) && (undoing || patch.created.count(file) == 0)) {
      missing.insert(file);
    } else {
      conflicts.emplace(file, patch.name);
    }
  }
  void found_applied(const std::string& file, const Patch& patch) {
    applied[file].insert(applied[file].begin(), &patch);
  }
};

PatchEngine::PatchEngine(fs::path tree_root, const Profile& profile, BuildMode mode,
                         fs::path state_dir)
    : tree_root_(std::move(tree_root)),
      profile_(profile),
      mode_(mode),
      state_dir_(std::move(state_dir)),
      record_(state_dir_) {}

fs::path PatchEngine::default_state_dir(const fs::path& tree_root) {
  return patch_state_dir(tree_root);
}

std::vector<PatchText> PatchEngine::wanted_patches() const {
  std::vector<Patch> patches;
  for (const ProfilePatchFile& patch_file : profile_patch_files(profile_, mode_)) {
    const fs::path path = tree_root_ / patch_file.relative;
    const auto text = read_whole_file(path);
    if (!text) {
      if (patch_file.entry->optional) {
        spdlog::info("no {} patch {}: skipped (optional in the profile)", patch_file.role,
                     path.string());
        continue;
      }
      throw Error("the Ascend " + patch_file.role + " patch " + path.string() +
                      " does not exist (named by the profile " + profile_.source +
                      "; mark it optional there if a tree may lack it)",
                  ErrorKind::bad_input);
    }
    require_checkout(*patch_file.entry, path);
    patches.push_back(Patch::read(patch_file.entry->file, path, *text, patch_file.entry->checkout));
    patches.back().crlf_to_lf = patch_file.entry->crlf_to_lf;
  }
  return patches;
}

// A nested patch applies inside its checkout, which must hold files: a
// missing directory or an empty one (a submodule not checked out) stops the
// run before anything is read or written.
void PatchEngine::require_checkout(const PatchFile& entry, const fs::path& patch) const {
  if (entry.checkout.empty()) {
    return;
  }
  const fs::path checkout = tree_root_ / entry.checkout;
  std::error_code ec;
  if (!holds_content(checkout)) {
    throw Error("the checkout " + entry.checkout + " that the Ascend patch " + patch.string() +
                    " applies inside is " + (fs::exists(checkout, ec) ? "empty" : "missing") +
                    " (named by the profile " + profile_.source +
                    "); check it out first, e.g. git submodule update --init " + entry.checkout,
                ErrorKind::bad_input);
  }
}

// The patches that may be applied now: those of the record, else (no record)
// any patch of the profile, the dev one in a release build too (e.g. after a
// switch); the wanted ones are read already.
std::vector<PatchText> PatchEngine::candidates(const std::vector<Patch>& wanted) const {
  std::vector<Patch> candidates = record_.patches();
  if (!candidates.empty()) {
    return candidates;
  }
  candidates = wanted;
  for (const ProfilePatchFile& patch_file : profile_patch_files(profile_, std::nullopt)) {
    const bool read = std::any_of(wanted.begin(), wanted.end(), [&](const Patch& patch) {
      return patch.name == patch_file.entry->file;
    });
    const fs::path path = tree_root_ / patch_file.relative;
    const auto text = read ? std::nullopt : read_whole_file(path);
    if (!text) {
      continue;
    }
    try {
      candidates.push_back(
          Patch::parse(patch_file.entry->file, path, *text, patch_file.entry->checkout));
      candidates.back().crlf_to_lf = patch_file.entry->crlf_to_lf;
    } catch (const Error& error) {
      if (patch_file.role == "main") {
        throw;
      }
      spdlog::warn("{} (not used in a release build)", error.what());
    }
  }
  return candidates;
}

// Every file of the candidates and the wanted patches, copied into the scratch
// directory (those that exist).
void PatchEngine::copy_files(Analysis& analysis, const std::vector<Patch>& wanted) const {
  for (const std::vector<Patch>* list :
       std::initializer_list<const std::vector<Patch>*>{&analysis.candidates, &wanted}) {
    for (const auto& patch : *list) {
      for (const auto& file : patch.files) {
        if (std::find(analysis.files.begin(), analysis.files.end(), file) == analysis.files.end()) {
          analysis.files.push_back(file);
        }
      }
    }
  }
  for (const std::vector<Patch>* list :
       std::initializer_list<const std::vector<Patch>*>{&analysis.candidates, &wanted}) {
    for (const auto& patch : *list) {
      if (patch.crlf_to_lf) {
        analysis.lf_files.insert(patch.files.begin(), patch.files.end());
      }
    }
  }
  const fs::path& scratch = analysis.scratch.path();
  for (const auto& file : analysis.files) {
    if (!fs::is_regular_file(tree_root_ / file)) {
      continue;
    }
    fs::create_directories((scratch / file).parent_path());
    fs::copy_file(tree_root_ / file, scratch / file);
    if (analysis.lf_files.count(file) != 0) {
      const auto bytes = read_whole_file(tree_root_ / file);
      if (bytes && bytes->find("\r\n") != std::string::npos) {
        analysis.crlf_originals[file] = *bytes;
        write_whole_file(scratch / file, lf_line_endings(*bytes));
      }
    }
  }
}

// A file of a crlf_to_lf patch whose result is, but for its line endings,
// the tree's bytes or the committed ones (a restore, or no patch wanted
// there) gets those bytes back, CRLF and all.
void PatchEngine::restore_line_endings(const Analysis& analysis) const {
  const fs::path& scratch = analysis.scratch.path();
  const auto repo = analysis.lf_files.empty() ? std::nullopt : SourceRepo::open(tree_root_);
  for (const auto& file : analysis.lf_files) {
    const auto result = read_whole_file(scratch / file);
    if (!result) {
      continue;
    }
    std::vector<std::optional<std::string>> originals;
    if (const auto found = analysis.crlf_originals.find(file);
        found != analysis.crlf_originals.end()) {
      originals.emplace_back(found->second);
    }
    if (repo) {
      originals.push_back(repo->committed_file(file));
    }
    for (const auto& original : originals) {
      if (original && *original != *result && lf_line_endings(*original) == *result) {
        write_whole_file(scratch / file, *original);
        break;
      }
    }
  }
}

// Undoes the candidates, last applied first, noting where each was applied.
// One `git apply` for the whole patch when it fits everywhere; file by file
// otherwise, to tell which files differ.
void PatchEngine::undo_candidates(Analysis& analysis) const {
  const fs::path& scratch = analysis.scratch.path();
  for (auto patch = analysis.candidates.rbegin(); patch != analysis.candidates.rend(); ++patch) {
    if (analysis.all_open(*patch) && apply_patch(scratch, *patch, ApplyDirection::reverse).ok) {
      for (const auto& file : patch->files) {
        analysis.found_applied(file, *patch);
      }
      continue;
    }
    for (const auto& file : patch->files) {
      if (!analysis.open(file)) {
        continue;
      }
      if (apply_patch(scratch, *patch, ApplyDirection::reverse, ApplyAction::write, {file}).ok) {
        analysis.found_applied(file, *patch);
      } else if (!apply_patch(scratch, *patch, ApplyDirection::forward, ApplyAction::check_only,
                              {file})
                      .ok) {
        analysis.failed(*patch, file, true);  // neither applied nor applicable
      }
    }
  }
}

// Applies the wanted set to the base content the undo left.
void PatchEngine::apply_wanted(Analysis& analysis, const std::vector<Patch>& wanted) const {
  const fs::path& scratch = analysis.scratch.path();
  for (const auto& patch : wanted) {
    if (analysis.all_open(patch) && apply_patch(scratch, patch).ok) {
      continue;
    }
    for (const auto& file : patch.files) {
      if (analysis.open(file) &&
          !apply_patch(scratch, patch, ApplyDirection::forward, ApplyAction::write, {file}).ok) {
        analysis.failed(patch, file, false);
      }
    }
  }
}

PatchEngine::Analysis PatchEngine::analyse(const std::vector<Patch>& wanted) const {
  Analysis analysis;
  analysis.candidates = candidates(wanted);
  copy_files(analysis, wanted);
  undo_candidates(analysis);
  apply_wanted(analysis, wanted);
  return analysis;
}

// The failure path, hunk by hunk: a wanted patch that does not fit the
// committed content no longer fits upstream (patch_stale, whatever `force`);
// otherwise the user's edits overlap (patch_conflict unless `force`).
void PatchEngine::report_troubled_files(const std::vector<std::string>& troubled,
                                        const Analysis& analysis, const std::vector<Patch>& wanted,
                                        bool force) const {
  const auto repo = SourceRepo::open(tree_root_);
  std::vector<std::string> stale;
  std::vector<std::string> annotations;  // GitHub's, one per stale hunk
  std::vector<std::string> overlapping;
  for (const auto& file : troubled) {
    std::vector<std::string> hunks;
    for (const auto& patch : wanted) {
      for (const DiffFile& diff_file : patch.diff) {
        if (diff_file.path != file) {
          continue;
        }
        const bool as_lf = analysis.lf_files.count(file) != 0;
        if (repo) {
          const auto committed = repo->committed_file(file);
          for (const auto& hunk : failing_hunks(diff_file, as_lf ? lf(committed) : committed)) {
            stale.push_back(patch.name + ": " + hunk.describe());
            annotations.push_back(error_annotation(
                hunk.file, hunk_line(hunk),
                "the Ascend patch " + patch.name + " no longer fits: " + hunk.describe()));
          }
        }
        const auto content = read_whole_file(tree_root_ / file);
        for (const auto& hunk : failing_hunks(diff_file, as_lf ? lf(content) : content)) {
          hunks.push_back(hunk.describe());
        }
        break;
      }
    }
    const auto conflict = analysis.conflicts.find(file);
    overlapping.push_back(
        analysis.missing.count(file) != 0 ? file + " (missing)"
        : hunks.empty()
            ? file + " (edits overlap " +
                  (conflict != analysis.conflicts.end() ? conflict->second : "a patch") + ")"
            : join(hunks, "; "));
  }
  if (!stale.empty()) {
    if (github_actions_from_environment().on) {
      for (const auto& annotation : annotations) {
        write_workflow_command(annotation);
      }
    }
    throw Error("the Ascend patches no longer fit upstream's committed files (" +
                    std::to_string(stale.size()) + " hunk" + (stale.size() == 1 ? "" : "s") +
                    "): " + join(stale, "; ") +
                    "; nothing was written. Refresh the patches or use the profile for this "
                    "upstream version (ascend-setup --doctor lists everything)",
                ErrorKind::patch_stale);
  }
  if (!force) {
    throw Error("local changes conflict with the Ascend patches in " + join(overlapping, "; ") +
                    "; nothing was written. Commit, stash or undo those edits, or rerun with "
                    "--force-patches to save them under " +
                    (state_dir_ / "saved").string() + " and patch the committed files",
                ErrorKind::patch_conflict);
  }
}

PatchOutcome PatchEngine::reconcile(const std::vector<Patch>& wanted, bool force,
                                    TreeTransaction& transaction) {
  PatchOutcome outcome;
  Analysis analysis = analyse(wanted);
  const fs::path& scratch = analysis.scratch.path();

  std::vector<std::string> troubled;
  for (const auto& file : analysis.files) {
    if (analysis.conflicts.count(file) != 0 || analysis.missing.count(file) != 0) {
      troubled.push_back(file);
    }
  }
  if (!troubled.empty()) {
    report_troubled_files(troubled, analysis, wanted, force);
  }
  if (!troubled.empty()) {
    const auto repo = SourceRepo::open(tree_root_);
    if (!repo) {
      throw Error("--force-patches takes the committed content of " + join(troubled) + ", but " +
                      tree_root_.string() +
                      " is not a git checkout: restore those files from the source archive",
                  ErrorKind::bad_input);
    }
    outcome.saved_dir = state_dir_ / "saved" / timestamp();
    for (int n = 2; fs::exists(outcome.saved_dir); ++n) {
      outcome.saved_dir = state_dir_ / "saved" / (timestamp() + "-" + std::to_string(n));
    }
    for (const auto& file : troubled) {
      const auto committed = repo->committed_file(file);
      if (!committed) {
        throw Error("--force-patches: " + file + " is not in the committed tree (HEAD)",
                    ErrorKind::bad_input);
      }
      write_whole_file(scratch / file, analysis.lf_files.count(file) != 0
                                           ? lf_line_endings(*committed)
                                           : *committed);
      for (const auto& patch : wanted) {
        if (patch.touches(file) &&
            !apply_patch(scratch, patch, ApplyDirection::forward, ApplyAction::write, {file}).ok) {
          throw Error("the patch " + patch.origin.string() + " does not apply to the committed " +
                          file + " either: the patch does not fit this tree",
                      ErrorKind::patch_conflict);
        }
      }
    }
    for (const auto& file : troubled) {
      if (fs::exists(tree_root_ / file)) {
        fs::create_directories((outcome.saved_dir / file).parent_path());
        fs::copy_file(tree_root_ / file, outcome.saved_dir / file);
        outcome.saved.push_back(file);
      }
    }
    spdlog::warn("saved your versions of {} file{} under {}", outcome.saved.size(),
                 outcome.saved.size() == 1 ? "" : "s", outcome.saved_dir.string());
    for (const auto& file : outcome.saved) {
      spdlog::warn("  saved {}", file);
    }
  }

  restore_line_endings(analysis);
  // Every hunk fitted: now, and only now, write what differs, all or nothing.
  for (const auto& file : analysis.files) {
    const auto want = read_whole_file(scratch / file);
    const auto have = read_whole_file(tree_root_ / file);
    if (want == have) {
      continue;
    }
    struct stat info {};
    const bool made = want && ::stat((scratch / file).c_str(), &info) == 0;
    transaction.stage(file, want, made ? info.st_mode & 07777 : 0644);
    outcome.written.push_back(file);
  }
  transaction.write();
  return outcome;
}

fs::path PatchEngine::journal_dir() const { return ascend_setup::journal_dir(state_dir_); }

// One run at a time patches a tree; what a killed one left is rolled back
// first, under the lock.
FileLock PatchEngine::lock_tree() const {
  FileLock lock(state_dir_ / "tree.lock", "patching " + tree_root_.string());
  TreeTransaction::recover(journal_dir());
  return lock;
}

void recover_interrupted_patching(const fs::path& tree_root) {
  const fs::path state_dir = patch_state_dir(tree_root);
  if (fs::exists(journal_dir(state_dir) / journal_file_name)) {
    FileLock lock(state_dir / "tree.lock", "patching " + tree_root.string());
    TreeTransaction::recover(journal_dir(state_dir));
  }
}

PatchOutcome PatchEngine::apply(bool force) {
  std::vector<Patch> wanted = wanted_patches();
  PatchOutcome up_to_date;
  up_to_date.up_to_date = true;
  if (!fs::exists(journal_dir() / journal_file_name) && record_.matches(wanted, tree_root_)) {
    return up_to_date;
  }
  const FileLock lock = lock_tree();
  if (record_.matches(wanted, tree_root_)) {
    return up_to_date;  // another run patched it while this one waited
  }
  for (auto& patch : wanted) {
    patch.parse_files();
  }
  // The record must be writable before the tree is touched.
  fs::create_directories(state_dir_ / "applied");
  TreeTransaction transaction(tree_root_, journal_dir());
  PatchOutcome outcome = reconcile(wanted, force, transaction);
  record_.save(wanted, mode_, tree_root_);
  transaction.finish();
  return outcome;
}

PatchOutcome PatchEngine::restore(bool force) {
  const FileLock lock = lock_tree();
  TreeTransaction transaction(tree_root_, journal_dir());
  PatchOutcome outcome = reconcile({}, force, transaction);
  std::error_code ec;
  fs::remove(state_dir_ / "state.json", ec);
  if (ec) {
    throw Error(
        "cannot remove the record " + (state_dir_ / "state.json").string() + ": " + ec.message(),
        ErrorKind::local_io);
  }
  transaction.finish();
  fs::remove_all(state_dir_ / "applied", ec);
  return outcome;
}

namespace {

bool same_patch(const PatchText* a, const PatchText& b) {
  return a->name == b.name && a->sha256 == b.sha256;
}

}  // namespace

// The record says the tree is patched for this mode: every wanted patch
// applied, each of its files patched.
PatchStatus PatchEngine::recorded_status(const std::vector<Patch>& wanted) {
  PatchStatus status;
  for (const auto& patch : wanted) {
    status.patches.push_back({patch.name, true, true});
    for (const auto& file : patch.files) {
      if (std::none_of(status.files.begin(), status.files.end(),
                       [&](const auto& entry) { return entry.first == file; })) {
        status.files.emplace_back(file, FileStatus::patched);
      }
    }
  }
  status.patched_for_mode = true;
  return status;
}

// One file's status, and whether it holds exactly the wanted patches.
std::pair<FileStatus, bool> PatchEngine::file_status(const Analysis& analysis,
                                                     const std::string& file,
                                                     const std::vector<Patch>& wanted) {
  const auto found = analysis.applied.find(file);
  const std::vector<const Patch*> applied =
      found == analysis.applied.end() ? std::vector<const Patch*>{} : found->second;
  std::vector<const Patch*> wanted_here;
  for (const auto& patch : wanted) {
    if (patch.touches(file)) {
      wanted_here.push_back(&patch);
    }
  }
  FileStatus status = FileStatus::pristine;
  if (analysis.missing.count(file) != 0) {
    return {FileStatus::missing, false};
  }
  if (analysis.conflicts.count(file) != 0) {
    return {FileStatus::locally_modified, false};
  }
  if (!applied.empty()) {
    const bool older = std::any_of(applied.begin(), applied.end(), [&](const Patch* a) {
      return std::any_of(wanted.begin(), wanted.end(), [&](const Patch& w) {
        return w.name == a->name && w.sha256 != a->sha256;
      });
    });
    status = older ? FileStatus::patched_by_older_patch : FileStatus::patched;
  }
  const bool as_wanted =
      applied.size() == wanted_here.size() &&
      std::equal(applied.begin(), applied.end(), wanted_here.begin(),
                 [&](const Patch* a, const Patch* w) { return same_patch(a, *w); });
  return {status, as_wanted};
}

PatchStatus PatchEngine::status() {
  recover_interrupted_patching(tree_root_);
  std::vector<Patch> wanted = wanted_patches();
  for (auto& patch : wanted) {
    patch.parse_files();
  }
  if (record_.matches(wanted, tree_root_)) {
    return recorded_status(wanted);
  }

  const Analysis analysis = analyse(wanted);
  PatchStatus status;
  bool clean = true;
  for (const auto& file : analysis.files) {
    const auto [file_state, as_wanted] = file_status(analysis, file, wanted);
    clean = clean && as_wanted;
    status.files.emplace_back(file, file_state);
  }
  auto applied_everywhere = [&](const Patch& patch) {
    return std::all_of(patch.files.begin(), patch.files.end(), [&](const std::string& file) {
      const auto found = analysis.applied.find(file);
      return found != analysis.applied.end() &&
             std::any_of(found->second.begin(), found->second.end(),
                         [&](const Patch* a) { return same_patch(a, patch); });
    });
  };
  for (const auto& patch : wanted) {
    status.patches.push_back({patch.name, applied_everywhere(patch), true});
  }
  // A candidate this mode does not want must not be applied anywhere.
  for (const auto& patch : analysis.candidates) {
    const bool listed = std::any_of(status.patches.begin(), status.patches.end(),
                                    [&](const auto& entry) { return entry.name == patch.name; });
    if (!listed) {
      const bool applied = applied_everywhere(patch);
      clean = clean && !applied;
      status.patches.push_back({patch.name, applied, false});
    }
  }
  status.patched_for_mode = clean;
  return status;
}

PatchOutcome patch_source_tree(const fs::path& tree_root, const Profile& profile,
                               std::optional<BuildMode> forced_mode, bool force) {
  const ModeChoice mode = choose_build_mode(forced_mode, profile, tree_root);
  PatchEngine engine(tree_root, profile, mode.mode, PatchEngine::default_state_dir(tree_root));
  PatchOutcome outcome = engine.apply(force);
  if (outcome.written.empty()) {
    spdlog::info("Ascend patches ({} build: {}): up to date, no file touched", to_string(mode.mode),
                 mode.reason);
  } else {
    spdlog::info("Ascend patches ({} build: {}): wrote {}", to_string(mode.mode), mode.reason,
                 join(outcome.written));
  }
  return outcome;
}

}  // namespace ascend_setup
