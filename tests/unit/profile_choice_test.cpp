// Which profile a run uses: the tree's upstream version against each
// candidate's [upstream] version, --profile, the tree's ascend-setup.toml,
// --profile-dir before the built-in profiles.
#include "base/layer/profile_choice.hpp"

#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;
namespace fs = std::filesystem;

namespace {

// The default built-in profile made for upstream `upstream`, named `name`.
std::string profile_text(const std::string& name, const std::string& upstream) {
  using test_support::replace_once;
  const Profile builtin = parse_profile(builtin_profile_text(), "built-in");
  std::string text = replace_once(std::string(builtin_profile_text()),
                                  "name = \"" + builtin.name + "\"", "name = \"" + name + "\"");
  return replace_once(text, "[upstream]\nversion = \"" + builtin.upstream.version + "\"",
                      "[upstream]\nversion = \"" + upstream + "\"");
}

Profile profile(const std::string& name, const std::string& upstream) {
  return parse_profile(profile_text(name, upstream), name + ".toml");
}

std::optional<TreeVersion> version(const std::string& v) {
  return TreeVersion{v, "setup.py's TRITON_VERSION"};
}

class ProfileChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = scratch.path() / "tree";
    fs::create_directories(tree);
  }
  void write_setup_py(const std::string& text) {
    test_support::write_file(tree / "setup.py", text);
  }

  test_support::TempDir scratch;
  fs::path tree;
};

}  // namespace

TEST(ProfileChoice, ReleasePartKeepsTheLeadingDottedDigits) {
  EXPECT_EQ(release_part("1.2.3+git1234"), "1.2.3");
  EXPECT_EQ(release_part("1.2.3-dev"), "1.2.3");
  EXPECT_EQ(release_part("dev"), "");
}

TEST(ProfileChoice, TheProfileMadeForTheVersionWinsWhereverItIsListed) {
  const std::vector<Profile> candidates = {profile("p-old", "1.4.0"), profile("p-new", "1.6.0"),
                                           profile("p-mid", "1.5.0")};
  const ProfileChoice choice = choose_profile(candidates, version("1.5.0"), candidates[0]);
  EXPECT_EQ(choice.profile.name, "p-mid");
  EXPECT_TRUE(choice.fits);
  EXPECT_EQ(choice.profile.chosen_because, "setup.py's TRITON_VERSION is 1.5.0");
}

TEST(ProfileChoice, AnEarlierCandidateWinsATie) {
  const std::vector<Profile> candidates = {profile("from-dir", "1.5.0"),
                                           profile("built-in", "1.5.0")};
  EXPECT_EQ(choose_profile(candidates, version("1.5.0"), candidates[1]).profile.name, "from-dir");
}

TEST(ProfileChoice, SameMinorVersionIsNextAndSaysSo) {
  const std::vector<Profile> candidates = {profile("p-150", "1.5.0"), profile("p-152", "1.5.2"),
                                           profile("p-160", "1.6.0")};
  const ProfileChoice choice = choose_profile(candidates, version("1.5.3"), candidates[2]);
  EXPECT_EQ(choice.profile.name, "p-152");
  EXPECT_FALSE(choice.fits);
  EXPECT_EQ(choice.profile.chosen_because,
            "setup.py's TRITON_VERSION is 1.5.3; no profile is made for it (profiles: p-150 for "
            "1.5.0, p-152 for 1.5.2, p-160 for 1.6.0), this one is for the same minor version; "
            "see ascend-setup --doctor, or pass --profile");
}

TEST(ProfileChoice, ThenTheNearestOlderThenTheNearestNewer) {
  const std::vector<Profile> candidates = {profile("p-140", "1.4.0"), profile("p-160", "1.6.0"),
                                           profile("p-180", "1.8.0")};
  ProfileChoice choice = choose_profile(candidates, version("1.7.1"), candidates[0]);
  EXPECT_EQ(choice.profile.name, "p-160");
  EXPECT_NE(choice.profile.chosen_because.find("this one is for the nearest older upstream"),
            std::string::npos)
      << choice.profile.chosen_because;
  choice = choose_profile(candidates, version("1.3.0"), candidates[2]);
  EXPECT_EQ(choice.profile.name, "p-140");
  EXPECT_NE(choice.profile.chosen_because.find("the nearest newer upstream"), std::string::npos);
  // Numbers, not text: 1.10 is newer than 1.9.
  const std::vector<Profile> tens = {profile("p-190", "1.9.0"), profile("p-1100", "1.10.0")};
  EXPECT_EQ(choose_profile(tens, version("1.11.0"), tens[0]).profile.name, "p-1100");
}

TEST(ProfileChoice, UnknownVersionTakesTheFallback) {
  const std::vector<Profile> candidates = {profile("a", "1.4.0"), profile("b", "1.6.0")};
  const ProfileChoice choice = choose_profile(candidates, std::nullopt, candidates[1]);
  EXPECT_EQ(choice.profile.name, "b");
  EXPECT_FALSE(choice.fits);
  EXPECT_NE(choice.profile.chosen_because.find("could not be read"), std::string::npos);
}

TEST_F(ProfileChoiceTest, TreeVersionIsTheModuleLevelLiteralOfTheVersionVariable) {
  const std::vector<Profile> candidates = {profile("p", "1.6.0")};
  write_setup_py(
      "import os\n"
      "def f():\n"
      "    TRITON_VERSION = \"9.9.9\"\n"  // not module level
      "if TRITON_VERSION == \"8.8.8\":\n"
      "    pass\n"
      "TRITON_VERSION_X = \"7.7.7\"\n"
      "TRITON_VERSION = \"1.5.0\" + get_triton_version_suffix()\n");
  test_support::write_file(tree / "version.txt", "2.0.0\n");
  const auto found = read_tree_version(candidates, tree, tree / "setup.py");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->version, "1.5.0");
  EXPECT_EQ(found->found_in, "setup.py's TRITON_VERSION");
}

TEST_F(ProfileChoiceTest, WithoutTheLiteralTheVersionFileDecides) {
  const std::vector<Profile> candidates = {profile("p", "1.6.0")};
  write_setup_py("TRITON_VERSION = get_version()\n");
  EXPECT_FALSE(read_tree_version(candidates, tree, tree / "setup.py"));
  test_support::write_file(tree / "version.txt", "  1.2.2-dev\n");
  const auto found = read_tree_version(candidates, tree, tree / "setup.py");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->version, "1.2.2");
  EXPECT_EQ(found->found_in, "version.txt");
}

TEST_F(ProfileChoiceTest, ProfileDirectoriesComeBeforeTheBuiltInOnes) {
  const Profile builtin = parse_profile(builtin_profile_text(), "built-in");
  write_setup_py("TRITON_VERSION = \"" + builtin.upstream.version + "\"\n");
  // Nothing else: the built-in profile made for the version.
  ProfileChoice choice = select_profile({}, tree, tree / "setup.py");
  EXPECT_EQ(choice.profile.name, builtin.name);
  EXPECT_TRUE(choice.fits);
  EXPECT_TRUE(choice.profile.source.starts_with("built-in ")) << choice.profile.source;

  // A directory's profile for the same version wins; one for another version is passed over.
  const fs::path dir = scratch.path() / "profiles";
  test_support::write_file(dir / "same.toml", profile_text("mine-same", builtin.upstream.version));
  test_support::write_file(dir / "other.toml", profile_text("mine-other", "0.1.0"));
  test_support::write_file(dir / "README", "not a profile");
  choice = select_profile({std::nullopt, {dir}}, tree, tree / "setup.py");
  EXPECT_EQ(choice.profile.name, "mine-same");
  EXPECT_EQ(choice.profile.source, (dir / "same.toml").string());

  write_setup_py("TRITON_VERSION = \"0.1.0\"\n");
  EXPECT_EQ(select_profile({std::nullopt, {dir}}, tree, tree / "setup.py").profile.name,
            "mine-other");

  // --profile, then the tree's own ascend-setup.toml, come before any choice.
  test_support::write_file(tree / "ascend-setup.toml", profile_text("in-tree", "5.0.0"));
  choice = select_profile({std::nullopt, {dir}}, tree, tree / "setup.py");
  EXPECT_EQ(choice.profile.name, "in-tree");
  EXPECT_EQ(choice.profile.chosen_because, "the tree's own ascend-setup.toml");
  EXPECT_TRUE(choice.fits);
  choice = select_profile({dir / "same.toml", {dir}}, tree, tree / "setup.py");
  EXPECT_EQ(choice.profile.name, "mine-same");
  EXPECT_EQ(choice.profile.chosen_because, "named by --profile");
}

TEST_F(ProfileChoiceTest, ABadProfileDirectoryOrProfileInItIsOneErrorNamingIt) {
  write_setup_py("TRITON_VERSION = \"1.0.0\"\n");
  try {
    select_profile({std::nullopt, {scratch.path() / "nowhere"}}, tree, tree / "setup.py");
    ADD_FAILURE() << "accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::bad_input);
    EXPECT_NE(
        std::string(error.what()).find("--profile-dir " + (scratch.path() / "nowhere").string()),
        std::string::npos)
        << error.what();
  }
  const fs::path dir = scratch.path() / "profiles";
  test_support::write_file(dir / "broken.toml", "[profile]\nname = 1\n");
  try {
    select_profile({std::nullopt, {dir}}, tree, tree / "setup.py");
    ADD_FAILURE() << "accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((dir / "broken.toml").string()), std::string::npos)
        << error.what();
  }
}

// A profile with [layer] markers is for a tree holding one of them, and is
// preferred there; without the marker it is dropped.
TEST_F(ProfileChoiceTest, LayerMarkersDecideBetweenProfilesOfOneVersion) {
  Profile entry = profile("entry", "1.5.0");
  Profile in_tree = profile("in-tree", "1.5.0");
  in_tree.layer.form = "in-tree";
  in_tree.layer.markers = {"third_party/ascend/build/setup_patch.py", "other/marker"};
  const std::vector<Profile> candidates = {entry, in_tree};

  auto names = [](const std::vector<Profile>& profiles) {
    std::vector<std::string> result;
    for (const Profile& p : profiles) {
      result.push_back(p.name);
    }
    return result;
  };
  EXPECT_EQ(names(fitting_layer(candidates, tree)), std::vector<std::string>{"entry"});
  EXPECT_FALSE(layer_marker_held(in_tree, tree));

  test_support::write_file(tree / "other/marker", "");
  EXPECT_EQ(names(fitting_layer(candidates, tree)), (std::vector<std::string>{"in-tree", "entry"}));
  EXPECT_EQ(layer_marker_held(in_tree, tree), "other/marker");
  EXPECT_EQ(choose_profile(fitting_layer(candidates, tree), version("1.5.0"), entry).profile.name,
            "in-tree");

  // Only marked profiles, none held: the version alone decides among them all.
  fs::remove(tree / "other/marker");
  EXPECT_EQ(names(fitting_layer({in_tree}, tree)), std::vector<std::string>{"in-tree"});
}

TEST_F(ProfileChoiceTest, TheBuiltInInTreeProfileIsChosenForATreeHoldingItsMarker) {
  write_setup_py("TRITON_VERSION = \"3.6.0\"\n");
  EXPECT_EQ(select_profile({}, tree, tree / "setup.py").profile.layer.form, "entry");
  test_support::write_file(tree / "third_party/ascend/build/setup_patch.py", "");
  const ProfileChoice choice = select_profile({}, tree, tree / "setup.py");
  EXPECT_EQ(choice.profile.layer.form, "in-tree");
  EXPECT_NE(choice.profile.chosen_because.find(
                "the tree holds third_party/ascend/build/setup_patch.py (the in-tree layer)"),
            std::string::npos)
      << choice.profile.chosen_because;
}

// A layer package that re-exports ascend_setup.hooks marks the in-tree form
// without setup_patch.py; one that does not name it (or a directory in its
// place) marks nothing.
TEST_F(ProfileChoiceTest, ALayerPackageNamingAscendSetupHooksIsTheInTreeForm) {
  write_setup_py("TRITON_VERSION = \"3.6.0\"\n");
  const fs::path package = tree / "third_party/ascend/build/__init__.py";
  test_support::write_file(package, "from .setup_patch_v2 import prepare, activate\n");
  EXPECT_EQ(select_profile({}, tree, tree / "setup.py").profile.layer.form, "entry");
  test_support::write_file(package, "from ascend_setup.hooks import prepare, activate\n");
  const ProfileChoice choice = select_profile({}, tree, tree / "setup.py");
  EXPECT_EQ(choice.profile.layer.form, "in-tree");
  EXPECT_NE(choice.profile.chosen_because.find(
                "the tree holds third_party/ascend/build/__init__.py, which names "
                "ascend_setup.hooks (the in-tree layer)"),
            std::string::npos)
      << choice.profile.chosen_because;
  fs::remove(package);
  fs::create_directories(package);
  EXPECT_EQ(select_profile({}, tree, tree / "setup.py").profile.layer.form, "entry");
}

// Components compare as whole numbers whatever their length: the first nine
// digits alone made 1.99999999999999999999 equal to 1.999999999.
TEST(ProfileChoice, VersionComponentsOfAnyLengthCompareExactly) {
  const std::vector<Profile> candidates = {profile("p-short", "1.999999999.0"),
                                           profile("p-long", "1.99999999999999999999.0")};
  EXPECT_EQ(choose_profile(candidates, version("2.0.0"), candidates[0]).profile.name, "p-long");
  EXPECT_EQ(choose_profile(candidates, version("1.0.0"), candidates[1]).profile.name, "p-short");
}
