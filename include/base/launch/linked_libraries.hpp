// The libraries this build links and their versions, compiled in as strings
// by CMake (src/base/launch/linked_library_list.cpp.in): the portable build's
// from scripts/build-static-deps.sh's versions.json (each library built from
// Debian's source package, each Debian static archive), the system-library
// build's from the system's -dev packages (pkg-config). Printing them
// (--host-version) calls into none of the libraries, so the launcher links
// none of them. The same list is in the build directory as
// linked-libraries.json, for the wheel's SBOM (python_shims/project_build.py).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ascend_setup {

struct LinkedLibrary {
  std::string_view name;     // "libgit2"
  std::string_view version;  // upstream's, from the library's own header: "1.5.1"
  // "source": built from Debian's source package by build-static-deps.sh;
  // "archive": Debian's static archive; "system": the system's shared library.
  std::string_view origin;
  std::string_view debian_source;   // Debian's source package ("libgit2"); empty when unknown
  std::string_view debian_version;  // its version ("1.5.1+ds-1+deb12u1"); empty when unknown
  // The newest version Debian lists (a security update) when newer than
  // debian_version: the build links an older library than Debian's. Else empty.
  std::string_view newer_debian_version;
};

// In link order; every library but the C++ runtime and libc.
std::span<const LinkedLibrary> linked_libraries();

// The library's line of --host-version: "library: NAME VERSION (how it is
// linked[; older than Debian's ...])", NAME and VERSION as in the SBOM.
std::string describe_linked_library(const LinkedLibrary& library);

}  // namespace ascend_setup
