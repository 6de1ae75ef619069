// The tree's CMake code as text, for the doctor's question "does any CMake
// file of the tree build this tool?": no CMake run, no configure, a plain
// read of every CMakeLists.txt and *.cmake with its comments removed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ascend_setup {

// `text` without its CMake line comments (from a `#` to the end of its
// line; a `#` inside a quoted argument is rare enough in a target's file).
std::string without_cmake_comments(const std::string& text);

// Every CMake file under `root` (CMakeLists.txt, *.cmake), comments removed;
// hidden directories, build* directories and __pycache__ left out.
std::vector<std::string> cmake_code(const std::filesystem::path& root);

// Whether `text` holds `name` as a whole CMake word: not part of a longer
// name such as triton-opt-extra or my_triton-opt.
bool names_word(const std::string& text, const std::string& name);

}  // namespace ascend_setup
