#include "base/tree/cmake_sources.hpp"

#include "base/util/whole_file.hpp"

#include <cctype>

namespace fs = std::filesystem;

namespace ascend_setup {

std::string without_cmake_comments(const std::string& text) {
  std::string code;
  code.reserve(text.size());
  bool comment = false;
  for (char c : text) {
    comment = c == '#' || (comment && c != '\n');
    if (!comment) {
      code += c;
    }
  }
  return code;
}

std::vector<std::string> cmake_code(const fs::path& root) {
  std::vector<std::string> texts;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      if (name.starts_with('.') || name.starts_with("build") || name == "__pycache__") {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (name == "CMakeLists.txt" || it->path().extension() == ".cmake") {
      if (auto text = read_whole_file(it->path())) {
        texts.push_back(without_cmake_comments(*text));
      }
    }
  }
  return texts;
}

bool names_word(const std::string& text, const std::string& name) {
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  };
  if (name.empty()) {
    return false;
  }
  for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool starts = at == 0 || !word(text[at - 1]);
    const bool ends = at + name.size() == text.size() || !word(text[at + name.size()]);
    if (starts && ends) {
      return true;
    }
  }
  return false;
}

}  // namespace ascend_setup
