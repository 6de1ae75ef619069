// A checkout's .gitmodules (read through libgit2 for the NPUIR build's nested
// repositories: SourceRepo::gitlinks_under, has_submodule). The input is the
// work tree's .gitmodules of a real repository whose HEAD records one gitlink
// at nested/sub. Invariants: only Error refuses it; the gitlink is found with
// its recorded id whatever .gitmodules says, and is registered; its URL, when
// there is one, is one line.
#include "base/git/source_repo.hpp"
#include "fuzz_support.hpp"

#include <cstdlib>

using namespace ascend_setup;
namespace fs = std::filesystem;

namespace {

constexpr const char* kRecorded = "0123456789abcdef0123456789abcdef01234567";

// The repository, made once with git: HEAD holds nested/sub as a gitlink.
const fs::path& repository() {
  static const fs::path tree = [] {
    const fs::path dir = fuzz::scratch() / "repo";
    fs::create_directories(dir);
    const std::string command =
        "cd '" + dir.string() + "' && git init -q . && git update-index --add --cacheinfo 160000," +
        kRecorded +
        ",nested/sub && git -c user.name=fuzz -c user.email=fuzz@localhost commit -qm gitlink";
    if (std::system(command.c_str()) != 0) {
      fuzz::fail("cannot make the repository with git: " + command);
    }
    return dir;
  }();
  return tree;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& tree = repository();
  fuzz::write_file(tree / ".gitmodules", fuzz::as_text(data, size));
  std::vector<Gitlink> links;
  bool registered = false;
  if (!fuzz::accepts([&] {
        const auto repo = SourceRepo::open(tree);
        FUZZ_CHECK(repo.has_value(), "the repository is no checkout");
        links = repo->gitlinks_under("nested");
        registered = repo->has_submodule("nested/sub");
      })) {
    return 0;
  }
  FUZZ_CHECK(links.size() == 1, "the gitlink nested/sub is not found");
  FUZZ_CHECK(links[0].path == "nested/sub" && links[0].id == kRecorded,
             "the gitlink reads as " + links[0].path + " at " + links[0].id);
  FUZZ_CHECK(registered, "a gitlink recorded in HEAD is not registered");
  FUZZ_CHECK(links[0].url.find_first_of("\r\n") == std::string::npos,
             "a URL of more than one line: " + links[0].url);
  return 0;
}
