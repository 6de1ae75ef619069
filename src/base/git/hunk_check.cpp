#include "base/git/hunk_check.hpp"

#include <algorithm>

namespace ascend_setup {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool matches_at(const std::vector<std::string>& lines, std::size_t pos,
                const std::vector<std::string>& image) {
  if (pos + image.size() > lines.size()) {
    return false;
  }
  for (std::size_t i = 0; i < image.size(); ++i) {
    if (lines[pos + i] != image[i]) {
      return false;
    }
  }
  return true;
}

// git apply's find_pos: outward from `expected`, under the start/end rules.
std::optional<std::size_t> find_image(const std::vector<std::string>& lines,
                                      const std::vector<std::string>& image, int stated_line,
                                      bool trailing_context) {
  if (image.size() > lines.size()) {
    return std::nullopt;
  }
  const bool at_start = stated_line <= 1;
  const bool at_end = !trailing_context;
  const std::size_t last = lines.size() - image.size();
  if (at_start || at_end) {
    const std::size_t pos = at_start ? 0 : last;
    if ((at_start && at_end && pos != last) || !matches_at(lines, pos, image)) {
      return std::nullopt;
    }
    return pos;
  }
  const std::size_t expected = std::min<std::size_t>(stated_line - 1, last);
  for (std::size_t distance = 0; distance <= lines.size(); ++distance) {
    bool in_range = false;
    if (distance <= expected) {
      in_range = true;
      if (matches_at(lines, expected - distance, image)) {
        return expected - distance;
      }
    }
    if (expected + distance <= last) {
      in_range = true;
      if (distance != 0 && matches_at(lines, expected + distance, image)) {
        return expected + distance;
      }
    }
    if (!in_range) {
      break;
    }
  }
  return std::nullopt;
}

// Where the preimage fits best: the longest run of matching leading lines,
// nearest the stated line.
void locate_difference(const std::vector<std::string>& lines, const DiffHunk& hunk,
                       HunkResult& result) {
  const std::size_t expected = hunk.old_start > 0 ? hunk.old_start - 1 : 0;
  std::size_t best_pos = std::min(expected, lines.size());
  std::size_t best_run = 0;
  std::size_t best_distance = 0;
  bool have = false;
  for (std::size_t pos = 0; pos <= lines.size(); ++pos) {
    std::size_t run = 0;
    while (run < hunk.preimage.size() && pos + run < lines.size() &&
           lines[pos + run] == hunk.preimage[run]) {
      ++run;
    }
    const std::size_t distance = pos > expected ? pos - expected : expected - pos;
    if (!have || run > best_run || (run == best_run && distance < best_distance)) {
      have = true;
      best_pos = pos;
      best_run = run;
      best_distance = distance;
    }
  }
  const std::size_t differs = best_pos + best_run;
  result.line = static_cast<int>(differs) + 1;
  result.expected = best_run < hunk.preimage.size() ? hunk.preimage[best_run] : "";
  result.at_end = differs >= lines.size();
  result.found = result.at_end ? "" : lines[differs];
}

std::string quoted(const std::string& text) {
  constexpr std::size_t limit = 100;
  return "\"" + (text.size() > limit ? text.substr(0, limit) + "..." : text) + "\"";
}

}  // namespace

std::string HunkResult::describe() const {
  std::string text = file + (header.empty() ? "" : " " + header) + ": ";
  switch (fit) {
    case HunkFit::applies:
      return text + "applies";
    case HunkFit::already_applied:
      return text + "already applied";
    case HunkFit::does_not_apply:
      break;
  }
  if (header.empty()) {
    return text + "missing (the patch changes it)";
  }
  if (at_end) {
    return text + "the file ends at line " + std::to_string(line - 1) + ", the patch expects " +
           quoted(expected);
  }
  return text + "line " + std::to_string(line) + " has " + quoted(found) + ", the patch expects " +
         quoted(expected);
}

std::vector<HunkResult> check_hunks(const DiffFile& file,
                                    const std::optional<std::string>& content) {
  std::vector<HunkResult> results;
  if (!content) {
    if (!file.created) {
      results.push_back({file.path, "", HunkFit::does_not_apply, 0, "", "", false});
      return results;
    }
  }
  const std::vector<std::string> lines =
      content ? split_lines(*content) : std::vector<std::string>();
  for (const DiffHunk& hunk : file.hunks) {
    HunkResult result{file.path, hunk.header, HunkFit::applies, 0, "", "", false};
    if (file.created && content) {
      // A new file that exists already: applied when it holds the new content.
      result.fit = lines == hunk.postimage ? HunkFit::already_applied : HunkFit::does_not_apply;
      if (result.fit == HunkFit::does_not_apply) {
        result.line = 1;
        result.expected = "(no file)";
        result.found = lines.empty() ? "" : lines.front();
      }
    } else if (!find_image(lines, hunk.preimage, hunk.old_start, hunk.trailing_context)) {
      if (!hunk.postimage.empty() &&
          find_image(lines, hunk.postimage, hunk.new_start, hunk.trailing_context)) {
        result.fit = HunkFit::already_applied;
      } else {
        result.fit = HunkFit::does_not_apply;
        locate_difference(lines, hunk, result);
      }
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<HunkResult> failing_hunks(const DiffFile& file,
                                      const std::optional<std::string>& content) {
  std::vector<HunkResult> results = check_hunks(file, content);
  std::erase_if(results, [](const HunkResult& result) { return result.fit == HunkFit::applies; });
  return results;
}

}  // namespace ascend_setup
