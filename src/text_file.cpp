#include "ascend_setup/text_file.hpp"

#include <fstream>
#include <sstream>

namespace ascend_setup {

std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace ascend_setup
