#include "base/util/platform_info.hpp"

#include <sys/utsname.h>

#include <fstream>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace ascend_setup {

namespace {

std::string os_release_id() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ID=", 0) == 0) {
      std::string value = line.substr(3);
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
        value = value.substr(1, value.size() - 2);
      }
      return value;
    }
  }
  return "";
}

}  // namespace

PlatformInfo current_platform() {
  PlatformInfo info;
  struct utsname names {};
  if (uname(&names) == 0) {
    info.system = names.sysname;
    info.machine = names.machine;
  }
#if defined(__GLIBC__)
  info.glibc = gnu_get_libc_version();
#endif
  info.os_id = os_release_id();
  return info;
}

}  // namespace ascend_setup
