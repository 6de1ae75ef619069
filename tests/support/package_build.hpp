// The set-up of the e2e suites where a build downloads its LLVM package from
// a loopback nginx (download_e2e_test.cpp, shared_cache_test.cpp): the
// example tree with LLVM_SYSPATH and TRITON_OFFLINE_BUILD unset, a profile
// whose LLVM URL points at the test's server, the package a tarball of the
// stub LLVM as `llvm-e2e/` plus what the test adds, and cmake stand-ins that
// end the run right after the download.
#pragma once

#include "loopback_servers.hpp"
#include "test_support.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace test_support {

// The staged copies in `package_root` (util/staged_replacement.hpp: hidden
// entries named ".<target>.ascend-setup-<what>-<pid>"): a package being
// unpacked, a record being written, or what a stopped run left.
std::vector<fs::path> staged_copies(const fs::path& package_root);

// No partial package in `package_root`: no staged copy, and every directory
// a whole package of `url` (its version.txt; lib/payload.bin of
// `payload_bytes` when not 0). Files (the lock, a kept download, its part,
// state and record) and symbolic links (upstream's) may be there.
void expect_no_partial_package(const fs::path& package_root, const std::string& url,
                               std::uint64_t payload_bytes);

class PackageBuildTest : public ExampleTreeTest {
 protected:
  PackageBuildTest();

  // www/llvm-e2e.tar.gz: the stub LLVM as llvm-e2e/ with lib/payload.bin of
  // `payload` random bytes (none when 0), and whatever `add` puts in the
  // package's directory before it is packed.
  void make_package(std::uint64_t payload,
                    const std::function<void(const fs::path&)>& add = nullptr);

  // `args` with the profile naming the package llvm-e2e at
  // `base_url`/llvm-e2e.tar.gz in front.
  std::vector<std::string> with_profile(const std::string& base_url, std::vector<std::string> args);

  // A cmake that answers --version and fails anything else: the run ends
  // right after the download, before any compile.
  void cmake_failing_after_version();

  // A cmake that answers --version and does nothing else, successfully: a
  // build_ext then ends with exit 0 right after the download (nothing is
  // compiled).
  void cmake_doing_nothing();

  // Bytes in the package's part so far, from the downloader's saved state (0
  // before it has one).
  std::uint64_t downloaded() const;

  // A package server whose answers are held at a gate past `budget` bytes:
  // the gate, and no stall limit a held download could reach while the test
  // acts (ASCEND_SETUP_DOWNLOAD_STALL_SECONDS).
  StreamGate gate_downloads(std::uint64_t budget);

  // The free function above on package_root and payload_bytes.
  void expect_no_partial_package(const std::string& url) const {
    test_support::expect_no_partial_package(package_root, url, payload_bytes);
  }

  fs::path www = dir.path() / "www";
  fs::path package_root;  // $TRITON_HOME/.triton/llvm
  std::uint64_t payload_bytes = 0;
};

}  // namespace test_support
