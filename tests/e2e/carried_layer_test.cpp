// A setup.py that carries the Ascend layer itself (the oldest form: the
// Ascend edits written into upstream's setup.py, as release branches keep
// it): ascend-setup refuses to apply the layer a second time, with exit 4
// and one line naming the command that builds such a tree, and --doctor
// names it. The stand-in is the example tree's setup.py edited the way
// triton-ascend's was: the layer's defaults set at its top, `ascend` among
// its backends, the Ascend wheel's pin of upstream in install_requires.
// The plain example tree is not flagged (below) and neither is the in-tree
// form (InTreeLayerTest: its dump, build and doctor exit 0).
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;
using ascend_setup::ProcessResult;
namespace code = ascend_setup::exit_code;

namespace {

const std::string refusal =
    "setup.py already carries the Ascend layer (`ascend` is already among setup.py's backends): "
    "ascend-setup would apply it a second time; build this tree with its own setup.py: "
    "`python3 setup.py bdist_wheel`";

class CarriedLayerTest : public ExampleTreeTest {
 protected:
  // The oldest form's setup.py, made from the example tree's.
  void carry_the_layer() {
    edit("setup.py", "from python.build_helpers import get_base_dir, get_cmake_dir  # noqa: E402\n",
         "from python.build_helpers import get_base_dir, get_cmake_dir  # noqa: E402\n"
         "\n"
         "os.environ.setdefault(\"TRITON_BUILD_WITH_CCACHE\", \"true\")\n"
         "os.environ.setdefault(\"TRITON_BUILD_PROTON\", \"OFF\")\n"
         "os.environ.setdefault(\"TRITON_WHEEL_NAME\", \"triton-ascend\")\n");
    edit("setup.py", "BackendInstaller.copy([\"nvidia\", \"amd\"])",
         "BackendInstaller.copy([\"ascend\", \"nvidia\", \"amd\"])");
    edit("setup.py", "install_requires=[\"importlib-metadata; python_version < '3.10'\"]",
         "install_requires=[\"numpy==1.26.4\", \"triton==3.6.0\"]");
  }

  // The one line on stderr, nothing else but the log's.
  void expect_refused(const ProcessResult& result) const {
    EXPECT_EQ(result.exit_code, code::upstream_mismatch) << result.out << result.err;
    EXPECT_TRUE(contains(result.err, refusal)) << result.err;
    EXPECT_FALSE(contains(result.err, "Traceback")) << result.err;
    EXPECT_EQ(result.out, "") << "no kwargs printed";
  }
};

}  // namespace

TEST_F(CarriedLayerTest, DumpsAreRefusedWithOneLine_StandInOldestForm) {
  carry_the_layer();
  const auto before = snapshot(tree);
  for (const std::string dump :
       {"--dump-kwargs", "--dump-kwargs=rewritten", "--dump-kwargs=diff"}) {
    SCOPED_TRACE(dump);
    expect_refused(host({dump}));
  }
  EXPECT_EQ(snapshot(tree), before) << "a refused dump wrote into the tree";
}

// Upstream's own kwargs apply nothing: they still print, the layer's traces
// in them.
TEST_F(CarriedLayerTest, CapturedKwargsStillPrint_StandInOldestForm) {
  carry_the_layer();
  const ProcessResult captured = host({"--dump-kwargs=captured"});
  ASSERT_EQ(captured.exit_code, 0) << captured.err;
  const auto kwargs = parse_json(captured.out);
  EXPECT_EQ(
      backend_entry_points(kwargs),
      (std::vector<std::string>{"ascend = triton.backends.ascend",
                                "nvidia = triton.backends.nvidia", "amd = triton.backends.amd"}));
  EXPECT_EQ(kwargs["name"], "triton_ascend") << "ascend-setup's default, set before setup.py's";
}

// A build stops before anything is written: no patch applied, no build
// directory, no wheel.
TEST_F(CarriedLayerTest, BdistWheelIsRefusedBeforeAnythingIsWritten_StandInOldestForm) {
  carry_the_layer();
  make_git_repo(tree, dir.path());
  env["MAX_JOBS"] = "2";
  env["PATH"] = path_with_stand_ins();
  const auto before = snapshot(tree);
  const ProcessResult build = host({"bdist_wheel"});
  expect_refused(build);
  EXPECT_EQ(snapshot(tree), before) << "a refused build wrote into the tree";
  EXPECT_FALSE(fs::exists(tree / "dist"));
  EXPECT_EQ(must_run({"git", "status", "--porcelain"}, tree, git_env(dir.path())), "");
}

// Such trees are upstream 3.5.0: the refusal comes before the version check,
// whose release-build stop would say something else.
TEST_F(CarriedLayerTest, TheRefusalWinsOverTheVersionMismatch_StandInOldestForm35) {
  carry_the_layer();
  edit("setup.py", "TRITON_VERSION = \"3.6.0\"", "TRITON_VERSION = \"3.5.0\"");
  write_file(tree / "version.txt", "3.5.0\n");
  env["IS_MANYLINUX"] = "1";
  const ProcessResult dump = host({"--dump-kwargs"});
  expect_refused(dump);
  EXPECT_FALSE(contains(dump.err, "a release build stops here")) << dump.err;
  expect_refused(host({"bdist_wheel"}));
  EXPECT_FALSE(fs::exists(tree / "dist"));

  // The doctor lists the version findings and this one.
  const auto report = parse_json(host({"--doctor=json"}).out);
  std::vector<std::string> kinds;
  for (const auto& finding : report["findings"]) {
    kinds.push_back(finding["kind"].get<std::string>());
  }
  EXPECT_TRUE(contains(kinds, "layer-in-setup-py")) << report.dump(2);
  EXPECT_TRUE(contains(kinds, "upstream-version")) << report.dump(2);
}

TEST_F(CarriedLayerTest, DoctorNamesItInTextAndJson_StandInOldestForm) {
  carry_the_layer();
  const auto before = snapshot(tree);
  const ProcessResult text = host({"--doctor"});
  EXPECT_EQ(text.exit_code, code::doctor_findings) << text.out << text.err;
  EXPECT_TRUE(contains(text.out, "setup.py:\n  layer-in-setup-py: " + refusal + "\n")) << text.out;
  EXPECT_TRUE(contains(text.out,
                       "layer in setup.py (`ascend` is already among setup.py's backends): "
                       "setup.py carries the layer itself"))
      << text.out;

  const ProcessResult json = host({"--doctor=json"});
  EXPECT_EQ(json.exit_code, code::doctor_findings) << json.err;
  const auto report = parse_json(json.out);
  EXPECT_EQ(report["healthy"], false);
  ASSERT_EQ(report["findings"].size(), 1u) << report.dump(2);
  const auto& finding = report["findings"][0];
  EXPECT_EQ(finding["group"], "setup.py");
  EXPECT_EQ(finding["kind"], "layer-in-setup-py");
  EXPECT_EQ(finding["subject"], (tree / "setup.py").string());
  EXPECT_EQ(finding["message"], refusal);
  EXPECT_EQ(finding["build_with"], "python3 setup.py bdist_wheel");
  EXPECT_EQ(finding["evidence"],
            (nlohmann::ordered_json{
                "`ascend` is already among setup.py's backends",
                "`ascend` is already among setup.py's triton.backends entry points",
                "setup.py's install_requires already pins upstream (`triton==3.6.0`)"}));
  EXPECT_TRUE(contains(report["layer"].get<std::string>(), "in setup.py (")) << report["layer"];
  EXPECT_EQ(snapshot(tree), before) << "the doctor wrote into the tree";
}

// Any one sign is enough: setup.py's entry points naming the backend, with
// upstream's backends list left alone.
TEST_F(CarriedLayerTest, EntryPointsAloneAreEnough_StandInOldestForm) {
  edit("setup.py",
       "entry_points[\"triton.backends\"] = [f\"{b.name} = triton.backends.{b.name}\" for b in "
       "backends]",
       "entry_points[\"triton.backends\"] = [\"ascend = triton.backends.ascend\"] + "
       "[f\"{b.name} = triton.backends.{b.name}\" for b in backends]");
  const ProcessResult dump = host({"--dump-kwargs"});
  EXPECT_EQ(dump.exit_code, code::upstream_mismatch) << dump.err;
  EXPECT_TRUE(contains(dump.err,
                       "setup.py already carries the Ascend layer (`ascend` is already among "
                       "setup.py's triton.backends entry points): "))
      << dump.err;
}

// Upstream's own setup.py carries nothing of the layer: not flagged.
TEST_F(CarriedLayerTest, ThePlainExampleTreeIsNotFlagged) {
  const ProcessResult dump = host({"--dump-kwargs"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_FALSE(contains(dump.err, "already carries")) << dump.err;
  const auto kwargs = parse_json(dump.out);
  const auto backends = backend_entry_points(kwargs);
  EXPECT_EQ(std::count(backends.begin(), backends.end(), "ascend = triton.backends.ascend"), 1);

  const ProcessResult doctor = host({"--doctor=json"});
  EXPECT_EQ(doctor.exit_code, 0) << doctor.out << doctor.err;
  EXPECT_EQ(parse_json(doctor.out)["layer"], "entry");
}
