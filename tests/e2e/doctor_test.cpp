// --doctor, patch points as profile data, the upstream version check and the
// python/setup.py layout, through the built binary on copies of the example
// tree. The "stand-ins" are the example's setup.py edited the way upstream
// changed it between versions (upstream-contract.md): a removed function, a
// renamed class, a failing import, a changed signature, an older version.
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sstream>

using namespace test_support;
using ascend_setup::ProcessResult;
namespace code = ascend_setup::exit_code;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class DoctorTest : public ExampleTreeTest {
 protected:
  void commit(const std::string& message) {
    must_run({"git", "commit", "-qam", message}, tree, git_env(dir.path()));
  }
  // The stand-in of a newer upstream setup.py: each kind of drift at once.
  void drift_setup_py(bool failing_import) {
    edit("setup.py", "def get_llvm_package_info():", "def get_llvm_package_info_gone():");
    edit("setup.py", "class Package:", "class PackageSpec:");
    edit("setup.py", "Package(", "PackageSpec(");
    edit("setup.py", "def add_links(external_only):", "def add_links(only_external):");
    edit("setup.py", "external_only=external_only)", "external_only=only_external)");
    edit("setup.py", "if not external_only and", "if not only_external and");
    edit("setup.py", "TRITON_VERSION = \"3.6.0\"", "TRITON_VERSION = \"3.5.0\"");
    if (failing_import) {
      edit("setup.py", "import pybind11\n", "import pybind11\nimport nanobind\n");
    }
  }
};

}  // namespace

TEST_F(DoctorTest, HealthyTreeExitsZeroAndWritesNothing) {
  make_git_repo(tree, dir.path());
  const auto before = snapshot(tree);
  const ProcessResult result = host({"--doctor"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(has(result.out, "healthy: the tree fits the profile")) << result.out;
  EXPECT_EQ(snapshot(tree), before) << "the doctor wrote into the tree";
  EXPECT_EQ(must_run({"git", "status", "--porcelain"}, tree, git_env(dir.path())), "");

  const ProcessResult json = host({"--doctor=json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const auto report = parse_json(json.out);
  EXPECT_EQ(report["healthy"], true);
  EXPECT_EQ(report["findings"].size(), 0u);
  EXPECT_EQ(report["profile"]["name"], "triton-ascend-3.6.0");
}

// Upstream 3.5's BackendInstaller.prepare runs `git submodule update --init
// <backend>` while setup.py loads, which writes .git/config: the stand-in
// starts processes the same ways at import time, tolerating their failure
// as upstream does.
TEST_F(DoctorTest, ProcessesSetupPyStartsWhileLoadingAreNotRun) {
  edit("setup.py", "import pybind11\n",
       "import pybind11\n"
       "import subprocess\n"
       "try:\n"
       "    subprocess.run(['git', 'config', '--local', 'ascend.doctor', 'ran'], check=True)\n"
       "except (subprocess.CalledProcessError, FileNotFoundError):\n"
       "    pass\n"
       "try:\n"
       "    os.system('touch started-by-setup-py')\n"
       "except OSError:\n"
       "    pass\n");
  make_git_repo(tree, dir.path());
  const auto before = snapshot(tree);
  const ProcessResult result = host({"--doctor"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(snapshot(tree), before) << "a process setup.py started wrote into the tree";
  EXPECT_TRUE(has(result.err,
                  "info: --doctor starts no process; not run: `git config --local ascend.doctor "
                  "ran`, `touch started-by-setup-py`, "))
      << result.err;

  // A build runs them: the stand-in really starts them.
  ASSERT_EQ(host({"--dump-kwargs"}).exit_code, 0);
  EXPECT_TRUE(fs::exists(tree / "started-by-setup-py"));
  EXPECT_EQ(must_run({"git", "config", "--local", "ascend.doctor"}, tree, git_env(dir.path())),
            "ran\n");
}

TEST_F(DoctorTest, NewerUpstreamSetupPyStandInAllFindingsInOneRun) {
  drift_setup_py(/*failing_import=*/true);
  const auto before = snapshot(tree);
  const ProcessResult result = host({"--doctor"});
  EXPECT_EQ(result.exit_code, code::doctor_findings) << result.err;
  EXPECT_EQ(snapshot(tree), before);
  const std::string& out = result.out;
  EXPECT_TRUE(has(out, "patch points:\n")) << out;
  EXPECT_TRUE(has(out, "missing: setup.py has no function get_llvm_package_info")) << out;
  EXPECT_TRUE(has(out, "missing: setup.py has no class Package")) << out;
  EXPECT_TRUE(has(out, "missing-parameter: add_links has no parameter 'external_only'")) << out;
  EXPECT_TRUE(has(out, "imports:\n")) << out;
  EXPECT_TRUE(has(out, "imports nanobind, which fails here: ModuleNotFoundError")) << out;
  EXPECT_TRUE(has(out, "upstream-version: setup.py's TRITON_VERSION is 3.5.0")) << out;
  EXPECT_TRUE(has(out, "5 findings\n")) << out;
  EXPECT_EQ(result.err.find("Traceback"), std::string::npos) << result.err;

  const ProcessResult json = host({"--doctor=json"});
  EXPECT_EQ(json.exit_code, code::doctor_findings);
  const auto report = parse_json(json.out);
  EXPECT_EQ(report["healthy"], false);
  std::set<std::string> kinds;
  for (const auto& finding : report["findings"]) {
    kinds.insert(finding["group"].get<std::string>() + "/" + finding["kind"].get<std::string>() +
                 "/" + finding["subject"].get<std::string>());
  }
  EXPECT_EQ(kinds,
            (std::set<std::string>{
                "patch points/missing/get_llvm_package_info", "patch points/missing/Package",
                "patch points/missing-parameter/add_links.external_only",
                "imports/failing-import/nanobind", "version/upstream-version/TRITON_VERSION"}))
      << json.out;
}

TEST_F(DoctorTest, LoadableStandInIsCheckedLiveToo) {
  drift_setup_py(/*failing_import=*/false);
  // A signature only the loaded module shows: prepare rebound at run time.
  edit("setup.py", "TRITON_VERSION = ",
       "BackendInstaller.prepare = staticmethod(lambda name, src=None: None)\n"
       "TRITON_VERSION = ");
  const ProcessResult result = host({"--doctor=json"});
  EXPECT_EQ(result.exit_code, code::doctor_findings) << result.err;
  const auto report = parse_json(result.out);
  bool live = false;
  for (const auto& finding : report["findings"]) {
    EXPECT_NE(finding["kind"], "does-not-load") << finding.dump();
    if (finding["subject"] == "BackendInstaller.prepare.backend_name") {
      live = finding["seen_in"] == "loaded module";
    }
  }
  EXPECT_TRUE(live) << result.out;
}

TEST_F(DoctorTest, StaleAndAppliedHunksAgainstCommittedContentLocalEditsApart) {
  make_git_repo(tree, dir.path());
  // Upstream moved on: a context line of ir.cc's hunk changed, committed.
  edit("python/src/ir.cc", "m.def(\"add\", [](int a, int b) { return a + b; });",
       "m.def(\"add\", [](long a, long b) { return a + b; });");
  // Someone committed the patched semantic.py.
  edit("python/triton/language/semantic.py", "    return (value, dtype)\n",
       "    # Ascend: casts keep the NPU dtype table in sync.\n    return (value, dtype, "
       "\"npu\")\n");
  commit("upstream moved");
  // An uncommitted edit overlapping a hunk.
  edit("bin/triton-opt.cpp", "  return 0;", "  return 1;");
  const ProcessResult result = host({"--doctor"});
  EXPECT_EQ(result.exit_code, code::doctor_findings) << result.err;
  const std::string& out = result.out;
  EXPECT_TRUE(has(out, "patches:\n")) << out;
  EXPECT_TRUE(has(out,
                  "stale-hunk: triton-ascend-3.6.0.patch: python/src/ir.cc @@ -8,4 +8,6 @@: "
                  "line 10 has \"  m.def(\"add\", [](long a, long b) { return a + b; });\", "
                  "the patch expects \"  m.def(\"add\", [](int a, int b) { return a + b; "
                  "});\" (committed content)"))
      << out;
  EXPECT_TRUE(has(out,
                  "already-applied: triton-ascend-3.6.0.patch: "
                  "python/triton/language/semantic.py @@ -7,7 +7,8 @@: already applied"))
      << out;
  EXPECT_TRUE(has(out, "local-edit: bin/triton-opt.cpp has uncommitted edits")) << out;
}

TEST_F(DoctorTest, CmakeSwitchTheTreeNoLongerKnows) {
  edit("third_party/ascend/CMakeLists.txt", "option(TRITON_BUILD_TD ", "option(TRITON_BUILD_DIST ");
  const ProcessResult result = host({"--doctor"});
  EXPECT_EQ(result.exit_code, code::doctor_findings);
  EXPECT_TRUE(has(result.out,
                  "cmake:\n  unknown-switch: third_party/ascend/CMakeLists.txt no "
                  "longer mentions TRITON_BUILD_TD"))
      << result.out;
}

TEST_F(DoctorTest, BuildNamesEveryMissingPatchPointAtOnce) {
  drift_setup_py(/*failing_import=*/false);
  const ProcessResult result = host({"--dev", "--dump-kwargs"});
  EXPECT_EQ(result.exit_code, code::upstream_mismatch) << result.err;
  EXPECT_TRUE(has(result.err, "(3 patch points")) << result.err;
  EXPECT_TRUE(has(result.err, "get_llvm_package_info")) << result.err;
  EXPECT_TRUE(has(result.err, "class Package")) << result.err;
  EXPECT_TRUE(has(result.err, "'external_only'")) << result.err;
  EXPECT_FALSE(has(result.err, "Traceback")) << result.err;
}

TEST_F(DoctorTest, RenameIsAProfileEditAlias) {
  edit("setup.py", "def get_entry_points():", "def entry_points_of_backends():");
  edit("setup.py", "entry_points=get_entry_points()", "entry_points=entry_points_of_backends()");
  ProcessResult result = host({"--dump-kwargs"});
  EXPECT_EQ(result.exit_code, code::upstream_mismatch) << result.err;
  EXPECT_TRUE(has(result.err, "get_entry_points")) << result.err;

  write_profile(tree / "ascend-setup.toml",
                {{"{ id = \"get_entry_points\", kind = \"function\" }",
                  "{ id = \"get_entry_points\", kind = \"function\", aliases = "
                  "[\"entry_points_of_backends\"] }"}});
  result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["entry_points"]["triton.backends"][0],
            "ascend = triton.backends.ascend");
}

TEST_F(DoctorTest, OlderUpstreamVersionStopsAReleaseBuildWarnsADevBuild) {
  edit("setup.py", "TRITON_VERSION = \"3.6.0\"", "TRITON_VERSION = \"3.4.0\"");
  ProcessResult result = host({"--release", "--dump-kwargs"});
  EXPECT_EQ(result.exit_code, code::upstream_mismatch);
  EXPECT_TRUE(has(result.err,
                  "upstream's setup.py is version 3.4.0 (TRITON_VERSION), the profile "
                  "triton-ascend-3.6.0 is for upstream 3.6.0"))
      << result.err;
  result = host({"--release", "--allow-version-mismatch", "--dump-kwargs"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(has(result.err, "warning")) << result.err;
  result = host({"--dev", "--dump-kwargs"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(has(result.err, "version 3.4.0")) << result.err;
}

TEST_F(DoctorTest, TheTreesUpstreamVersionPicksTheProfileAndTheLogSaysWhy) {
  // A built-in profile made for the tree's version (among the entry form's
  // 3.6.0 and 3.8.0): nothing to tell at the default level (stderr stays
  // setup.py's own); debug says it.
  ProcessResult result = host({"--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(parse_json(result.out)["name"], "triton_ascend");
  result = host({"--log-level", "debug", "--dump-kwargs"});
  EXPECT_TRUE(has(result.err,
                  "debug: profile triton-ascend-3.6.0 (built-in triton-ascend-3.6.0.toml): "
                  "setup.py's TRITON_VERSION is 3.6.0\n"))
      << result.err;

  // Two more profiles in a --profile-dir, each with its own wheel name.
  const fs::path profiles = dir.path() / "profiles";
  for (const std::string version : {"3.4.0", "3.5.0"}) {
    const std::string tag = version.substr(0, 3);
    write_profile(profiles / ("triton-ascend-" + version + ".toml"),
                  {{"name = \"triton-ascend-3.6.0\"", "name = \"triton-ascend-" + version + "\""},
                   {"[upstream]\nversion = \"3.6.0\"", "[upstream]\nversion = \"" + version + "\""},
                   {"[\"TRITON_WHEEL_NAME\", \"triton_ascend\"]",
                    "[\"TRITON_WHEEL_NAME\", \"triton_ascend_" + tag + "\"]"}});
  }
  const std::string profile_dir = "--profile-dir=" + profiles.string();
  // Still 3.6.0: the built-in one, chosen among three, which the info log says.
  result = host({profile_dir, "--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["name"], "triton_ascend");
  EXPECT_TRUE(has(result.err,
                  "info: profile triton-ascend-3.6.0 (built-in triton-ascend-3.6.0.toml): "
                  "setup.py's TRITON_VERSION is 3.6.0\n"))
      << result.err;

  // setup.py of 3.5.0: the 3.5.0 profile, whose values the build uses, and doctor agrees.
  edit("setup.py", "TRITON_VERSION = \"3.6.0\"", "TRITON_VERSION = \"3.5.0\"");
  result = host({profile_dir, "--release", "--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["name"], "triton_ascend_3.5");
  EXPECT_TRUE(has(result.err, "info: profile triton-ascend-3.5.0 (" +
                                  (profiles / "triton-ascend-3.5.0.toml").string() +
                                  "): setup.py's TRITON_VERSION is 3.5.0\n"))
      << result.err;
  result = host({profile_dir, "--doctor=json"});
  const auto report = parse_json(result.out);
  EXPECT_EQ(report["profile"]["name"], "triton-ascend-3.5.0");
  EXPECT_EQ(report["profile"]["chosen_because"], "setup.py's TRITON_VERSION is 3.5.0");
  for (const auto& finding : report["findings"]) {
    EXPECT_NE(finding["kind"], "upstream-version") << finding.dump();
  }

  // 3.4.2: none is made for it; the one of the same minor version, with a warning.
  edit("setup.py", "TRITON_VERSION = \"3.5.0\"", "TRITON_VERSION = \"3.4.2\"");
  result = host({profile_dir, "--dev", "--dump-kwargs"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse_json(result.out)["name"], "triton_ascend_3.4");
  EXPECT_TRUE(has(result.err,
                  "warning: profile triton-ascend-3.4.0 (" +
                      (profiles / "triton-ascend-3.4.0.toml").string() +
                      "): setup.py's TRITON_VERSION is 3.4.2; no profile is made for it "
                      "(profiles: triton-ascend-3.4.0 for 3.4.0, triton-ascend-3.5.0 for 3.5.0, "
                      "triton-ascend-3.6.0 for 3.6.0, triton-ascend-3.8.0 for 3.8.0), this one is "
                      "for the same minor version"))
      << result.err;

  // Without the directory, the built-in one is the nearest newer; a release build stops.
  result = host({"--release", "--dump-kwargs"});
  EXPECT_EQ(result.exit_code, code::upstream_mismatch) << result.err;
  EXPECT_TRUE(has(result.err, "this one is for the nearest newer upstream")) << result.err;

  // A missing --profile-dir: one line, exit 3.
  result = host({"--profile-dir", (dir.path() / "nowhere").string(), "--dump-kwargs"});
  EXPECT_EQ(result.exit_code, code::bad_input);
  EXPECT_TRUE(has(result.err, "--profile-dir " + (dir.path() / "nowhere").string())) << result.err;
  EXPECT_FALSE(has(result.err, "Traceback")) << result.err;
}

TEST_F(DoctorTest, SetupPyUnderPythonDirIsFoundAndRunsThere) {
  fs::remove(tree / "setup.py");
  write_file(tree / "python/setup.py",
             "import os\nfrom setuptools import setup\n"
             "setup(name='triton', version='3.2.0', description=os.getcwd())\n");
  const ProcessResult result =
      run_host({"-C", tree.string(), "--dump-kwargs=captured"}, dir.path(), env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto kwargs = parse_json(result.out);
  EXPECT_EQ(kwargs["description"], fs::canonical(tree / "python").string());
  EXPECT_EQ(kwargs["version"], "3.2.0");
}

TEST_F(DoctorTest, PatchThatNoLongerFitsUpstreamIsItsOwnErrorNamingEveryHunk) {
  make_git_repo(tree, dir.path());
  edit("python/src/ir.cc", "m.def(\"add\", [](int a, int b) { return a + b; });",
       "m.def(\"add\", [](long a, long b) { return a + b; });");
  edit("bin/triton-opt.cpp", "int main() {", "int main(void) {");
  commit("upstream moved");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--apply-patches"}, {"--force-patches", "--apply-patches"}}) {
    const ProcessResult result = host(args);
    EXPECT_EQ(result.exit_code, code::patch_stale) << result.err;
    EXPECT_TRUE(has(result.err, "no longer fit upstream's committed files (2 hunks)"))
        << result.err;
    EXPECT_TRUE(has(result.err,
                    "triton-ascend-3.6.0.patch: python/src/ir.cc @@ -8,4 +8,6 @@: "
                    "line 10 has"))
        << result.err;
    EXPECT_TRUE(
        has(result.err, "bin/triton-opt.cpp @@ -3,6 +3,6 @@: line 5 has \"int main(void) {\""))
        << result.err;
    EXPECT_EQ(read_file(tree / "python/triton/language/semantic.py"),
              read_file(fs::path(EXAMPLE_TREE) / "python/triton/language/semantic.py"));
  }
}

// The doctor reads the patches as the engine does: a renamed file's hunks fit
// the old name's content; a plain diff without "diff --git" headers is one
// malformed-patch finding saying so.
TEST_F(DoctorTest, RenamingPatchFitsTheOldNameAndPlainDiffIsMalformed) {
  const std::string autotuner = "python/triton/runtime/autotuner.py";
  edit("third_party/ascend/patch/triton-ascend-dev-3.6.0.patch",
       "diff --git a/" + autotuner + " b/" + autotuner + "\n",
       "diff --git a/" + autotuner + " b/python/triton/runtime/tuner.py\nsimilarity index 90%\n" +
           "rename from " + autotuner + "\nrename to python/triton/runtime/tuner.py\n");
  edit("third_party/ascend/patch/triton-ascend-dev-3.6.0.patch", "+++ b/" + autotuner,
       "+++ b/python/triton/runtime/tuner.py");
  const ProcessResult renamed = host({"--doctor"});
  EXPECT_EQ(renamed.exit_code, 0) << renamed.out << renamed.err;

  const fs::path main_patch = tree / "third_party/ascend/patch/triton-ascend-3.6.0.patch";
  std::string plain;
  std::istringstream lines(read_file(main_patch));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("diff --git ", 0) != 0 && line.rfind("index ", 0) != 0) {
      plain += line + "\n";
    }
  }
  write_file(main_patch, plain);
  const ProcessResult result = host({"--doctor"});
  EXPECT_EQ(result.exit_code, code::doctor_findings) << result.err;
  EXPECT_TRUE(has(result.out,
                  "malformed-patch: malformed patch "
                  "third_party/ascend/patch/triton-ascend-3.6.0.patch: "))
      << result.out;
  EXPECT_TRUE(has(result.out, "no \"diff --git\" header")) << result.out;
}
