#include "base/launch/linked_libraries.hpp"

#include <archive.h>
#include <curl/curlver.h>
#include <git2/version.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <map>

using namespace ascend_setup;

namespace {

std::map<std::string, LinkedLibrary> by_name() {
  std::map<std::string, LinkedLibrary> libraries;
  for (const LinkedLibrary& library : linked_libraries()) {
    libraries.emplace(library.name, library);
  }
  return libraries;
}

}  // namespace

TEST(LinkedLibraries, LineNamesTheVersionHowItIsLinkedAndDebiansNewerVersion) {
  EXPECT_EQ(describe_linked_library({"libgit2", "1.5.1", "source", "libgit2", "1.5.1+ds-1+deb12u1",
                                     "1.5.1+ds-1+deb12u2"}),
            "library: libgit2 1.5.1 (built from Debian's source package libgit2 "
            "1.5.1+ds-1+deb12u1; older than Debian's security version 1.5.1+ds-1+deb12u2)");
  EXPECT_EQ(
      describe_linked_library({"libcurl", "7.88.1", "source", "curl", "7.88.1-10+deb12u15", ""}),
      "library: libcurl 7.88.1 (built from Debian's source package curl 7.88.1-10+deb12u15)");
  EXPECT_EQ(describe_linked_library({"openssl", "3.0.19", "archive", "openssl", "3.0.19-1~deb12u2",
                                     "3.0.22-1~deb12u2"}),
            "library: openssl 3.0.19 (Debian's static archive, source package openssl "
            "3.0.19-1~deb12u2; older than Debian's newer version 3.0.22-1~deb12u2)");
  EXPECT_EQ(describe_linked_library({"zlib", "1.2.13", "system", "", "", ""}),
            "library: zlib 1.2.13 (the system's shared library)");
}

// The recorded versions are those of the headers the build compiled against;
// the portable build's say which Debian source each was built from.
TEST(LinkedLibraries, ListsLibgit2LibcurlLibarchiveAndZlibAtTheirHeadersVersions) {
  const auto libraries = by_name();
  const std::map<std::string, std::string> headers = {{"libgit2", LIBGIT2_VERSION},
                                                      {"libcurl", LIBCURL_VERSION},
                                                      {"libarchive", ARCHIVE_VERSION_ONLY_STRING},
                                                      {"zlib", ZLIB_VERSION}};
  for (const auto& [name, version] : headers) {
    SCOPED_TRACE(name);
    const auto found = libraries.find(name);
    ASSERT_NE(found, libraries.end());
    EXPECT_EQ(found->second.version, version);
    if (PORTABLE_BUILD) {
      EXPECT_EQ(found->second.origin, "source");
      EXPECT_FALSE(found->second.debian_source.empty());
      EXPECT_FALSE(found->second.debian_version.empty());
    } else {
      EXPECT_EQ(found->second.origin, "system");
    }
  }
  if (PORTABLE_BUILD) {
    for (const char* archive :
         {"openssl", "libssh2", "http-parser", "pcre2", "liblzma", "libdeflate"}) {
      EXPECT_EQ(libraries.count(archive), 1u) << archive;
    }
  }
}
