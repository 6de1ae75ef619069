#include "base/launch/linked_libraries.hpp"

namespace ascend_setup {

std::string describe_linked_library(const LinkedLibrary& library) {
  std::string line = "library: " + std::string(library.name) + " " + std::string(library.version);
  std::string how;
  const std::string package =
      std::string(library.debian_source) + " " + std::string(library.debian_version);
  if (library.origin == "source") {
    how = "built from Debian's source package " + package;
  } else if (library.origin == "archive") {
    how = "Debian's static archive, source package " + package;
  } else {
    how = "the system's shared library";
  }
  if (!library.newer_debian_version.empty()) {
    how += library.origin == "source" ? "; older than Debian's security version "
                                      : "; older than Debian's newer version ";
    how += library.newer_debian_version;
  }
  return line + " (" + how + ")";
}

}  // namespace ascend_setup
