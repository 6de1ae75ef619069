// Version strings from outside: setup.py's version literal (TRITON_VERSION,
// __version__: the builtin profiles' variables), the version file
// (version.txt), and a version or suffix from the environment (PEP 440). The
// input is setup.py, \x1f, version.txt, \x1f, a version, \x1f, a suffix.
// Invariants: only Error refuses anything; a version read from the tree is
// dotted digits; written back into a setup.py as its literal it reads back the
// same and picks the same profile (the same place in the ordering); the
// release part of a version is idempotent; a PEP 440 version stays one with
// the git part added, and with a suffix that is one's local label; a wheel
// file name made with the version names one RECORD, in one .dist-info
// directory at the wheel's top.
#include "base/layer/profile.hpp"
#include "base/layer/profile_choice.hpp"
#include "base/layer/wheel_version.hpp"
#include "base/wheel/wheel_writer.hpp"
#include "fuzz_support.hpp"

using namespace ascend_setup;
namespace fs = std::filesystem;

namespace {

const std::vector<Profile>& candidates() {
  static const std::vector<Profile> profiles = [] {
    std::vector<Profile> result;
    for (const BuiltinProfile& builtin : builtin_profiles()) {
      result.push_back(parse_profile(builtin.text, std::string(builtin.file)));
    }
    return result;
  }();
  return profiles;
}

std::optional<TreeVersion> tree_version(const fs::path& tree) {
  std::optional<TreeVersion> found;
  FUZZ_CHECK(
      fuzz::accepts([&] { found = read_tree_version(candidates(), tree, tree / "setup.py"); }),
      "read_tree_version refused a tree");
  return found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::fields(fuzz::as_text(data, size), '\x1f', 4);
  const fs::path tree = fuzz::fresh_directory("tree");
  fuzz::write_file(tree / "setup.py", parts[0]);
  for (const Profile& profile : candidates()) {
    fs::create_directories((tree / profile.version.file).parent_path());
    fuzz::write_file(tree / profile.version.file, parts[1]);
  }
  if (const auto found = tree_version(tree)) {
    const std::string& v = found->version;
    FUZZ_CHECK(
        !v.empty() && v.find_first_not_of("0123456789.") == std::string::npos && v.back() != '.',
        "a tree version that is not dotted digits: " + v);
    ProfileChoice first;
    FUZZ_CHECK(fuzz::accepts([&] { first = choose_profile(candidates(), found, candidates()[0]); }),
               "choose_profile refused " + v);
    const fs::path again = fuzz::fresh_directory("again");
    fuzz::write_file(again / "setup.py",
                     candidates()[0].upstream.version_variable + " = \"" + v + "\"\n");
    const auto reread = tree_version(again);
    FUZZ_CHECK(reread && reread->version == v, "the version " + v + " does not read back");
    const ProfileChoice second = choose_profile(candidates(), reread, candidates()[0]);
    FUZZ_CHECK(first.profile.name == second.profile.name && first.fits == second.fits,
               "the version " + v + " read back picks another profile");
  }

  const std::string& version = parts[2];
  for (const std::string& wheel : {version + ".whl", "demo-" + version + "-py3-none-any.whl"}) {
    std::string record;
    if (fuzz::accepts([&] { record = record_path_for(wheel); })) {
      const std::string tail = ".dist-info/RECORD";
      FUZZ_CHECK(record.size() > tail.size() && record.ends_with(tail) &&
                     record.find('/') == record.size() - 7 &&
                     record.find('\0') == std::string::npos,
                 "the wheel " + wheel + " names the RECORD " + record);
    }
  }
  const std::string release = release_part(version);
  FUZZ_CHECK(release_part(release) == release, "release_part is not idempotent: " + version);
  bool pep440 = false;
  FUZZ_CHECK(fuzz::accepts([&] { pep440 = is_pep440_version(version); }),
             "is_pep440_version threw");
  if (pep440 && version.find('+') == std::string::npos &&
      version.find_first_of(" \t\r\n\f\v") == std::string::npos) {
    const std::string with_git = compose_version(version, "", "0123abcd");
    FUZZ_CHECK(is_pep440_version(with_git), "adding the git part breaks " + with_git);
    const std::string& suffix = parts[3];
    if (!suffix.empty() && suffix[0] == '+' && is_pep440_version("0" + suffix)) {
      const std::string both = compose_version(version, suffix, "0123abcd");
      FUZZ_CHECK(is_pep440_version(both), "the suffix's local label and the git part: " + both);
    }
  }
  return 0;
}
