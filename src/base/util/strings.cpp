#include "base/util/strings.hpp"

#include <spdlog/fmt/fmt.h>

namespace ascend_setup {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string lf_line_endings(std::string text) { return replace_all(std::move(text), "\r\n", "\n"); }

std::string expand_placeholders(std::string text,
                                const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    text = replace_all(std::move(text), "{" + name + "}", value);
  }
  return text;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : separator) + item;
  }
  return text;
}

std::string trim(std::string_view text, std::string_view blanks) {
  const auto first = text.find_first_not_of(blanks);
  const auto last = text.find_last_not_of(blanks);
  return first == std::string_view::npos ? std::string()
                                         : std::string(text.substr(first, last - first + 1));
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} {}", bytes, units[unit])
                   : fmt::format("{:.1f} {}", bytes, units[unit]);
}

}  // namespace ascend_setup
