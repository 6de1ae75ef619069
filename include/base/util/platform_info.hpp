// What the machine is, read natively: system and machine as uname reports
// them, the glibc version (none on musl), the /etc/os-release ID.
#pragma once

#include <optional>
#include <string>

namespace ascend_setup {

struct PlatformInfo {
  std::string system;                // "Linux", "Darwin", ...
  std::string machine;               // "x86_64", "aarch64", ...
  std::optional<std::string> glibc;  // "2.36"; nullopt without glibc
  std::string os_id;                 // ID= of /etc/os-release, unquoted; "" if unknown
};

PlatformInfo current_platform();

}  // namespace ascend_setup
