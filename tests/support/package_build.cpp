#include "package_build.hpp"

#include "loopback_servers.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace test_support {

namespace {

constexpr const char* kUpstreamUrl =
    "https://triton-ascend-artifacts.obs.myhuaweicloud.com/llvm-builds/{name}.tar.gz";

fs::path cmake_stand_in(const fs::path& bin, const std::string& otherwise) {
  fs::create_directories(bin);
  write_file(bin / "cmake",
             "#!/bin/sh\ncase \"$1\" in --version) echo 'cmake version 3.25.1' ;; *) " + otherwise +
                 " ;; esac\n");
  fs::permissions(bin / "cmake", fs::perms(0755));
  return bin;
}

}  // namespace

PackageBuildTest::PackageBuildTest() : package_root(dir.path() / ".triton" / "llvm") {
  env["LLVM_SYSPATH"] = std::nullopt;
  env["TRITON_OFFLINE_BUILD"] = std::nullopt;
  env["MAX_JOBS"] = std::nullopt;
  env["TRITON_PARALLEL_LINK_JOBS"] = std::nullopt;
  env["ASCEND_SETUP_DOWNLOAD_BACKOFF_MS"] = "50";
  env["ASCEND_SETUP_DOWNLOAD_STALL_SECONDS"] = "5";
  for (const char* proxy : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) {
    env[proxy] = std::nullopt;
  }
  // Upstream's NVIDIA tool downloads (not through this override; the newer
  // layer skips them): given, so not fetched.
  for (const char* tool : {"TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH"}) {
    env[tool] = "/bin/true";
  }
  fs::create_directories(www);
}

void PackageBuildTest::make_package(std::uint64_t payload,
                                    const std::function<void(const fs::path&)>& add) {
  const fs::path sources = dir.path() / "package-source";
  const fs::path source = sources / "llvm-e2e";
  fs::remove_all(sources);
  fs::create_directories(source);
  fs::copy(STUB_LLVM, source, fs::copy_options::recursive);
  if (payload > 0) {
    const fs::path made = dir.path() / "payload";
    fs::remove_all(made);
    make_package_tarball(made, "p", payload);
    fs::copy(made / "source-p" / "p" / "lib" / "payload.bin", source / "lib" / "payload.bin");
  }
  payload_bytes = payload;
  if (add) {
    add(source);
  }
  must_run({"tar", "-czf", (www / "llvm-e2e.tar.gz").string(), "-C", sources.string(), "llvm-e2e"},
           dir.path());
}

std::vector<std::string> PackageBuildTest::with_profile(const std::string& base_url,
                                                        std::vector<std::string> args) {
  const fs::path profile =
      write_profile(dir.path() / "profile.toml",
                    {{"name = \"llvm-{rev}-{patch_hash}-{suffix}\"", "name = \"llvm-e2e\""},
                     {kUpstreamUrl, base_url + "/{name}.tar.gz"}});
  args.insert(args.begin(), {"--profile", profile.string()});
  return args;
}

void PackageBuildTest::cmake_failing_after_version() {
  env["PATH"] = path_with(
      cmake_stand_in(dir.path() / "bin", "echo 'configure refused by the test' >&2; exit 1"));
}

void PackageBuildTest::cmake_doing_nothing() {
  env["PATH"] = path_with(cmake_stand_in(dir.path() / "bin-nothing", "exit 0"));
}

std::uint64_t PackageBuildTest::downloaded() const {
  std::uint64_t done = 0;
  try {
    const auto state =
        nlohmann::json::parse(read_file(package_root / ".llvm-e2e.download.part.state"));
    for (const auto& segment : state.at("segments")) {
      done += segment.at(2).get<std::uint64_t>();
    }
  } catch (const std::exception&) {
    return 0;  // not written yet
  }
  return done;
}

StreamGate PackageBuildTest::gate_downloads(std::uint64_t budget) {
  env["ASCEND_SETUP_DOWNLOAD_STALL_SECONDS"] = "3600";
  return StreamGate(dir.path() / "gate", budget);
}

std::vector<fs::path> staged_copies(const fs::path& package_root) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(package_root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.front() == '.' && contains(name, ".ascend-setup-")) {
      found.push_back(it->path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

void expect_no_partial_package(const fs::path& package_root, const std::string& url,
                               std::uint64_t payload_bytes) {
  if (!fs::exists(package_root)) {
    return;
  }
  for (const fs::path& staged : staged_copies(package_root)) {
    ADD_FAILURE() << "a partial package: the staged copy " << staged;
  }
  for (const auto& entry : fs::directory_iterator(package_root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || entry.is_symlink() || contains(name, ".ascend-setup-")) {
      continue;
    }
    EXPECT_EQ(read_file(entry.path() / "version.txt"), url) << "a partial package: " << name;
    if (payload_bytes > 0) {
      EXPECT_EQ(fs::file_size(entry.path() / "lib" / "payload.bin"), payload_bytes)
          << "a partial package: " << name;
    }
  }
}

}  // namespace test_support
