#include "base/git/hunk_check.hpp"

#include "base/util/error.hpp"

#include <cstdlib>
#include <regex>
#include <sstream>

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

std::string strip_prefix(const std::string& path) {
  if (path.rfind("a/", 0) == 0 || path.rfind("b/", 0) == 0) {
    return path.substr(2);
  }
  return path;
}

// "--- a/x\tdate" -> "a/x"
std::string header_path(const std::string& line) {
  std::string path = line.substr(4);
  const auto tab = path.find('\t');
  return tab == std::string::npos ? path : path.substr(0, tab);
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

std::vector<DiffFile> parse_unified_diff(const std::string& text, const std::string& origin) {
  static const std::regex hunk_header(R"(^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@.*$)");
  std::vector<DiffFile> files;
  const std::vector<std::string> lines = split_lines(text);
  std::string old_path;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("diff --git ", 0) == 0) {
      files.emplace_back();
      old_path.clear();
      continue;
    }
    if (line.rfind("--- ", 0) == 0 && i + 1 < lines.size() && lines[i + 1].rfind("+++ ", 0) == 0) {
      if (files.empty() || !files.back().hunks.empty()) {
        files.emplace_back();  // a plain unified diff without "diff --git"
      }
      DiffFile& file = files.back();
      old_path = header_path(line);
      const std::string new_path = header_path(lines[i + 1]);
      file.created = old_path == "/dev/null";
      file.deleted = new_path == "/dev/null";
      file.path = strip_prefix(file.deleted ? old_path : new_path);
      ++i;
      continue;
    }
    std::smatch match;
    if (files.empty() || !std::regex_match(line, match, hunk_header)) {
      continue;
    }
    DiffHunk hunk;
    hunk.old_start = std::atoi(match[1].str().c_str());
    hunk.old_count = match[2].matched ? std::atoi(match[2].str().c_str()) : 1;
    hunk.new_start = std::atoi(match[3].str().c_str());
    hunk.new_count = match[4].matched ? std::atoi(match[4].str().c_str()) : 1;
    hunk.header = "@@ -" + match[1].str() + (match[2].matched ? "," + match[2].str() : "") + " +" +
                  match[3].str() + (match[4].matched ? "," + match[4].str() : "") + " @@";
    int old_left = hunk.old_count;
    int new_left = hunk.new_count;
    while ((old_left > 0 || new_left > 0) && i + 1 < lines.size()) {
      const std::string& body = lines[++i];
      const char sign = body.empty() ? ' ' : body[0];
      const std::string content = body.empty() ? "" : body.substr(1);
      if (sign == '\\') {
        continue;
      }
      if (sign == ' ') {
        hunk.preimage.push_back(content);
        hunk.postimage.push_back(content);
        --old_left;
        --new_left;
        hunk.trailing_context = true;
      } else if (sign == '-') {
        hunk.preimage.push_back(content);
        --old_left;
        hunk.trailing_context = false;
      } else if (sign == '+') {
        hunk.postimage.push_back(content);
        --new_left;
        hunk.trailing_context = false;
      } else {
        break;
      }
    }
    if (old_left != 0 || new_left != 0) {
      throw Error("malformed patch " + origin + ": hunk " + hunk.header + " of " +
                  files.back().path + " is cut short");
    }
    files.back().hunks.push_back(std::move(hunk));
  }
  std::erase_if(files, [](const DiffFile& file) { return file.path.empty(); });
  return files;
}

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

std::vector<HunkResult> failing_hunks(const std::string& patch_text, const std::string& origin,
                                      const std::string& file,
                                      const std::optional<std::string>& content) {
  for (const DiffFile& diff_file : parse_unified_diff(patch_text, origin)) {
    if (diff_file.path == file) {
      return failing_hunks(diff_file, content);
    }
  }
  return {};
}

}  // namespace ascend_setup
