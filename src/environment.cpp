#include "ascend_setup/environment.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ascend_setup {

namespace {
std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}
}  // namespace

std::optional<std::string> get_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) {
    return std::nullopt;
  }
  return std::string(value);
}

void set_env(const std::string& name, const std::string& value) {
  ::setenv(name.c_str(), value.c_str(), 1);
}

void unset_env(const std::string& name) { ::unsetenv(name.c_str()); }

std::vector<std::string> apply_env_defaults(const EnvList& defaults) {
  std::vector<std::string> set_names;
  for (const auto& [name, value] : defaults) {
    if (!get_env(name)) {
      set_env(name, value);
      set_names.push_back(name);
    }
  }
  return set_names;
}

bool env_flag(const std::string& name, const std::string& fallback) {
  const std::string value = upper(get_env(name).value_or(fallback));
  return value == "ON" || value == "1" || value == "YES" || value == "TRUE" || value == "Y";
}

bool env_switch(const std::string& name) {
  const std::string value = upper(get_env(name).value_or("0"));
  return value == "1" || value == "ON" || value == "TRUE";
}

}  // namespace ascend_setup
