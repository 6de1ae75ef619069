// Process environment as upstream's setup.py sees it: setdefault-style
// defaults, and the two ways of reading a boolean switch.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ascend_setup {

using EnvList = std::vector<std::pair<std::string, std::string>>;

std::optional<std::string> get_env(const std::string& name);
void set_env(const std::string& name, const std::string& value);
void unset_env(const std::string& name);

// Sets each variable that is not already set (a value the user set wins,
// even an empty one). Returns the names it set.
std::vector<std::string> apply_env_defaults(const EnvList& defaults);

// Upstream's check_env_flag: the value (or `fallback` when unset), upper-cased,
// is one of ON, 1, YES, TRUE, Y.
bool env_flag(const std::string& name, const std::string& fallback = "");

// The seed's dev/release switches: 1, on or true in any case.
bool env_switch(const std::string& name);

}  // namespace ascend_setup
