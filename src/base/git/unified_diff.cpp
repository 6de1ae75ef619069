#include "base/git/unified_diff.hpp"

#include "base/git/source_repo.hpp"
#include "base/util/error.hpp"

#include <git2.h>

#include <algorithm>
#include <memory>
#include <string_view>

namespace ascend_setup {

namespace {

struct DiffFree {
  void operator()(git_diff* diff) const { git_diff_free(diff); }
};
struct PatchFree {
  void operator()(git_patch* patch) const { git_patch_free(patch); }
};
using DiffHandle = std::unique_ptr<git_diff, DiffFree>;
using PatchHandle = std::unique_ptr<git_patch, PatchFree>;

[[noreturn]] void malformed(const std::string& origin, const std::string& why) {
  throw Error("malformed patch " + origin + ": " + why, ErrorKind::bad_input);
}

// libgit2's reason, with a hint for the one shape people bring by mistake.
[[noreturn]] void refused(const std::string& text, const std::string& origin) {
  const git_error* error = git_error_last();
  std::string why =
      error != nullptr && error->message != nullptr ? error->message : "cannot be parsed";
  if (text.rfind("diff --git ", 0) != 0 && text.find("\ndiff --git ") == std::string::npos) {
    why += " (no \"diff --git\" header: write the patch with git diff or git format-patch)";
  }
  malformed(origin, why);
}

void require_ok(int status, const std::string& text, const std::string& origin) {
  if (status != 0) {
    refused(text, origin);
  }
}

// "@@ -a,b +c,d @@ context\n" -> "@@ -a,b +c,d @@" (libgit2 has checked its form).
std::string hunk_header(const git_diff_hunk& hunk) {
  const std::string line(hunk.header, hunk.header_len);
  const std::size_t close = line.find(" @@", 2);
  return close == std::string::npos ? line : line.substr(0, close + 3);
}

std::string without_newline(const git_diff_line& line) {
  std::size_t length = line.content_len;
  if (length > 0 && line.content[length - 1] == '\n') {
    --length;
  }
  return std::string(line.content, length);
}

DiffHunk read_hunk(git_patch* patch, std::size_t index, const std::string& text,
                   const std::string& origin) {
  const git_diff_hunk* header = nullptr;
  std::size_t line_count = 0;
  require_ok(git_patch_get_hunk(&header, &line_count, patch, index), text, origin);
  DiffHunk hunk;
  hunk.header = hunk_header(*header);
  hunk.old_start = header->old_start;
  hunk.old_count = header->old_lines;
  hunk.new_start = header->new_start;
  hunk.new_count = header->new_lines;
  for (std::size_t i = 0; i < line_count; ++i) {
    const git_diff_line* line = nullptr;
    require_ok(git_patch_get_line_in_hunk(&line, patch, index, i), text, origin);
    switch (line->origin) {
      case GIT_DIFF_LINE_CONTEXT:
        hunk.preimage.push_back(without_newline(*line));
        hunk.postimage.push_back(hunk.preimage.back());
        hunk.trailing_context = true;
        break;
      case GIT_DIFF_LINE_DELETION:
        hunk.preimage.push_back(without_newline(*line));
        hunk.trailing_context = false;
        break;
      case GIT_DIFF_LINE_ADDITION:
        hunk.postimage.push_back(without_newline(*line));
        hunk.trailing_context = false;
        break;
      default:  // the "\ No newline at end of file" markers
        break;
    }
  }
  return hunk;
}

// A path a patch names must stay in the tree: relative, no `..` part (libgit2
// lets some through, from a header it reads loosely).
void require_inside(const char* path, const std::string& origin) {
  const std::string_view text(path);
  bool leaves = text.empty() || text.front() == '/';
  std::size_t start = 0;
  while (!leaves && start <= text.size()) {
    const std::size_t slash = std::min(text.find('/', start), text.size());
    leaves = text.substr(start, slash - start) == "..";
    start = slash + 1;
  }
  if (leaves) {
    malformed(origin, "the path '" + std::string(text) + "' leaves the tree");
  }
}

}  // namespace

std::vector<DiffFile> parse_unified_diff(const std::string& text, const std::string& origin) {
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    // Not a text patch (git writes a binary one for such content); libgit2
    // 1.5 would copy such a line up to the NUL and read it to its full length.
    malformed(origin, "a NUL byte at offset " + std::to_string(nul) + " (a text patch holds none)");
  }
  ensure_libgit2();
  git_diff* raw_diff = nullptr;
  require_ok(git_diff_from_buffer(&raw_diff, text.data(), text.size()), text, origin);
  const DiffHandle diff(raw_diff);
  std::vector<DiffFile> files;
  for (std::size_t i = 0; i < git_diff_num_deltas(diff.get()); ++i) {
    git_patch* raw_patch = nullptr;
    require_ok(git_patch_from_diff(&raw_patch, diff.get(), i), text, origin);
    const PatchHandle patch(raw_patch);
    const git_diff_delta* delta = git_patch_get_delta(patch.get());
    // libgit2 refuses a header without either path; one of them may be absent.
    const char* old_path = delta->old_file.path ? delta->old_file.path : delta->new_file.path;
    const char* new_path = delta->new_file.path ? delta->new_file.path : delta->old_file.path;
    require_inside(old_path, origin);
    require_inside(new_path, origin);
    DiffFile file;
    file.created = delta->status == GIT_DELTA_ADDED;
    file.deleted = delta->status == GIT_DELTA_DELETED;
    file.path = file.deleted ? old_path : new_path;
    file.old_path = old_path;
    for (std::size_t h = 0; h < git_patch_num_hunks(patch.get()); ++h) {
      file.hunks.push_back(read_hunk(patch.get(), h, text, origin));
    }
    files.push_back(std::move(file));
  }
  if (files.empty()) {
    malformed(origin, "it changes no file");
  }
  return files;
}

void place_under(std::vector<DiffFile>& files, const std::string& directory) {
  if (directory.empty()) {
    return;
  }
  const std::string prefix = directory.ends_with('/') ? directory : directory + "/";
  for (DiffFile& file : files) {
    file.path = prefix + file.path;
    file.old_path = prefix + file.old_path;
  }
}

}  // namespace ascend_setup
