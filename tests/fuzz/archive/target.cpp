// The downloaded package archive (tar.gz and whatever else libarchive reads),
// unpacked by extract_archive. The first byte picks the member to unpack (the
// whole archive, or only its top directory `pkg/`), the rest is the archive.
// Invariants, checked on the file system after every run:
// - only Error refuses an archive;
// - nothing is written outside the target directory: beside it, the sentinel
//   file is unchanged and nothing else appeared;
// - inside it, every path resolves (symlinks followed) to a place inside it,
//   and nothing is a device, FIFO or socket.
#include "base/download/archive_extract.hpp"
#include "fuzz_support.hpp"

#include <fstream>

using namespace ascend_setup;
namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& path, const fs::path& root) {
  const auto relative = path.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::string member = data[0] % 2 == 0 ? "" : "pkg";
  const fs::path box = fuzz::fresh_directory("box");
  const fs::path root = box / "root";
  const fs::path archive = fuzz::scratch() / "archive.bin";
  fs::create_directories(root);
  fuzz::write_file(box / "sentinel", "untouched");
  fuzz::write_file(archive, fuzz::as_text(data + 1, size - 1));

  fuzz::accepts([&] { extract_archive(archive, root, member); });

  for (const auto& entry : fs::directory_iterator(box)) {
    const auto name = entry.path().filename();
    FUZZ_CHECK(name == "root" || name == "sentinel",
               "extraction wrote outside its directory: " + entry.path().string());
  }
  std::ifstream sentinel(box / "sentinel");
  std::string text;
  std::getline(sentinel, text);
  FUZZ_CHECK(text == "untouched" && fs::is_regular_file(fs::symlink_status(box / "sentinel")),
             "extraction changed a file outside its directory");
  const fs::path real_root = fs::canonical(root);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const auto status = fs::symlink_status(it->path());
    FUZZ_CHECK(fs::is_regular_file(status) || fs::is_directory(status) || fs::is_symlink(status),
               "extraction made a device, FIFO or socket: " + it->path().string());
    std::error_code resolve_error;
    const fs::path resolved = fs::weakly_canonical(it->path(), resolve_error);
    FUZZ_CHECK(resolve_error || resolved == real_root || inside(resolved, real_root),
               "extraction made a path that leads outside its directory: " + it->path().string() +
                   " -> " + resolved.string());
  }
  return 0;
}
