#include "base/util/loaded_library.hpp"
#include "base/download/libraries.hpp"
#include "base/util/error.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <functional>
#include <string>

namespace {

using ascend_setup::Error;
using ascend_setup::ErrorKind;
using ascend_setup::LoadedLibrary;

// The error a throwing call gives (the test fails when it does not throw).
Error error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no Error thrown";
  return Error("", ErrorKind::internal);
}

TEST(LoadedLibrary, AFunctionIsTheLibrarysOwn) {
  const LoadedLibrary library("libz.so.1", "zlib1g");
  decltype(&::zlibVersion) version = nullptr;
  library.function(version, "zlibVersion");
  ASSERT_NE(version, nullptr);
  EXPECT_TRUE(std::string(version()).starts_with("1.")) << version();
}

TEST(LoadedLibrary, AMissingLibraryIsOneLineNamingItAndItsPackage) {
  const Error error = error_of([] { LoadedLibrary("libnonexistent-ascend.so.7", "the-package"); });
  EXPECT_EQ(error.kind(), ErrorKind::local_io);
  const std::string message = error.what();
  EXPECT_TRUE(message.starts_with("cannot load libnonexistent-ascend.so.7 (")) << message;
  EXPECT_TRUE(message.ends_with("): install the-package")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(LoadedLibrary, AMissingFunctionSaysTheLibraryIsOlder) {
  const LoadedLibrary library("libz.so.1", "zlib1g");
  void (*missing)() = nullptr;
  const Error error = error_of([&] { library.function(missing, "ascend_setup_no_such_function"); });
  EXPECT_EQ(error.kind(), ErrorKind::local_io);
  EXPECT_TRUE(std::string(error.what())
                  .starts_with("libz.so.1 has no ascend_setup_no_such_function: it is older"))
      << error.what();
}

// Every function of the downloader's tables is found, whether the library
// is linked in or loaded by its SONAME (the system-library build).
TEST(LoadedLibrary, TheDownloadersTablesAreComplete) {
  const auto& curl = ascend_setup::libcurl();
#define ASCEND_SETUP_EXPECT_SET(name) EXPECT_NE(curl.name, nullptr) << #name;
  ASCEND_SETUP_LIBCURL_FUNCTIONS(ASCEND_SETUP_EXPECT_SET)
#undef ASCEND_SETUP_EXPECT_SET
  const auto& archive = ascend_setup::libarchive();
#define ASCEND_SETUP_EXPECT_SET(name) EXPECT_NE(archive.name, nullptr) << #name;
  ASCEND_SETUP_LIBARCHIVE_FUNCTIONS(ASCEND_SETUP_EXPECT_SET)
#undef ASCEND_SETUP_EXPECT_SET
  EXPECT_NE(std::string(curl.curl_easy_strerror(CURLE_OK)), "");
}

}  // namespace
