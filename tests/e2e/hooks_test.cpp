// ascend_setup.hooks: a stand-in tree of the maintainers' in-tree form (setup.py
// calls prepare() near its top and activate() before setup(), from
// third_party/ascend/build) that adopts the one line
// `from ascend_setup.hooks import prepare, activate`, built by the front ends
// themselves in their own interpreter: plain `python3 setup.py bdist_wheel`,
// `pip wheel` (PEP 517 through setuptools.build_meta, and pip's legacy
// setup.py path), `pip install -e`, `python -m build`. Each wheel must equal
// `ascend-setup bdist_wheel`'s (name, file list and modes, METADATA,
// entry_points.txt), and the kwargs setuptools gets must equal
// `--dump-kwargs`. The hooks are found through PYTHONPATH (python_shims) and
// $ASCEND_SETUP_BINARY, except in the installed case.
//
// Not in the sanitized suite (quickstart.sh): the hooks import the
// instrumented host module into an uninstrumented python.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace test_support;
using ascend_setup::ProcessResult;

namespace {

// The example tree in the in-tree form, its layer package being the one line.
fs::path adopting_tree(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path tree = copy_example_tree(dir);
  adopt_ascend_setup_hooks(tree);
  return tree;
}

// Runs setup.py with setuptools.setup replaced, before setup.py runs, by a
// printer of its kwargs in --dump-kwargs' JSON shape: activate() takes that
// printer for the real setup, so what it prints is what setuptools would get.
// Started from another directory (the tree is setup.py's directory); upstream's
// setup.py then needs its own as the working directory, as pip gives it.
const char* kwargs_printer = R"(
import json, os, runpy, sys, setuptools

def shape(value):
    if isinstance(value, type):
        return value.__module__ + "." + value.__qualname__
    if isinstance(value, dict):
        return {str(k): shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shape(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [shape(v) for v in sorted(value)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    out = {"__class__": shape(type(value))}
    out.update({k: shape(v) for k, v in vars(value).items() if not k.startswith("_")})
    return out

def printer(**kwargs):
    sys.stdout.write(json.dumps(shape(kwargs)))
    return "the distribution"

setuptools.setup = printer
setup_py = sys.argv[1]
sys.argv = ["setup.py", "--name"]
sys.path.insert(0, os.path.dirname(setup_py))
os.chdir(os.path.dirname(setup_py))
globals_ = runpy.run_path(setup_py, run_name="__main__")
assert globals_["dist"] == "the distribution", globals_.get("dist")
)";

class Hooks : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = adopting_tree(dir.path() / "a");
    env = front_end_env(dir.path());
  }

  // `ascend-setup --python PYTHON bdist_wheel` on another copy: the wheel
  // every front end must give.
  std::string reference(const std::string& python = SYSTEM_PYTHON) {
    const fs::path copy = adopting_tree(dir.path() / ("reference-" + std::to_string(++copies)));
    const auto build = run_host({"--python", python, "bdist_wheel"}, copy, env);
    EXPECT_EQ(build.exit_code, 0) << build.err;
    const auto wheels = files_in(copy / "dist", ".whl");
    EXPECT_EQ(wheels.size(), 1u);
    return wheels.empty() ? "" : wheel_summary(wheels[0]);
  }

  std::string only_wheel(const fs::path& directory) {
    const auto wheels = files_in(directory, ".whl");
    EXPECT_EQ(wheels.size(), 1u) << directory;
    return wheels.empty() ? "" : wheel_summary(wheels[0]);
  }

  ProcessResult python(const std::vector<std::string>& argv, const fs::path& cwd) {
    return ascend_setup::run_process({argv, cwd, env, {}});
  }

  TempDir dir;
  fs::path tree;
  Env env;
  int copies = 0;
};

TEST_F(Hooks, SetuptoolsGetsTheKwargsOfDumpKwargs) {
  const ProcessResult dump = run_host({"--python", SYSTEM_PYTHON, "--dump-kwargs"}, tree, env);
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  env["ASCEND_SETUP_LOG_LEVEL"] = "debug";
  const ProcessResult printed =
      python({SYSTEM_PYTHON, "-c", kwargs_printer, (tree / "setup.py").string()}, dir.path());
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(parse_json(printed.out), parse_json(dump.out)) << printed.err;
  // The profile the command chooses, for the tree of setup.py (not the cwd).
  EXPECT_TRUE(contains(printed.err, "profile triton-ascend-3.6.0-in-tree")) << printed.err;
  EXPECT_TRUE(contains(printed.err,
                       "third_party/ascend/build/__init__.py, which names "
                       "ascend_setup.hooks"))
      << printed.err;
  EXPECT_TRUE(contains(printed.err, "ascend_setup.hooks: the tree " + tree.string()))
      << printed.err;
  // The ascend backend once, first.
  const auto backends = parse_json(printed.out)["entry_points"]["triton.backends"];
  EXPECT_EQ(backends[0], "ascend = triton.backends.ascend");
  EXPECT_EQ(backends.size(), 3u) << backends;
}

TEST_F(Hooks, PrepareOrActivateTwiceDoesNoMoreThanOnce) {
  write_file(tree / "setup.py", replace_once(replace_once(read_file(tree / "setup.py"),
                                                          "prepare()\n", "prepare()\nprepare()\n"),
                                             "\nactivate()\n", "\nactivate()\nactivate()\n"));
  env["ASCEND_SETUP_LOG_LEVEL"] = "debug";
  const ProcessResult printed =
      python({SYSTEM_PYTHON, "-c", kwargs_printer, (tree / "setup.py").string()}, dir.path());
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  const std::string once = "ascend_setup.hooks: the tree ";
  EXPECT_EQ(printed.err.find(once), printed.err.rfind(once)) << printed.err;
  EXPECT_TRUE(contains(printed.err, "prepare() ran already for this tree")) << printed.err;
  const std::string defaults = "default TRITON_WHEEL_NAME=";
  EXPECT_EQ(printed.err.find(defaults), printed.err.rfind(defaults)) << printed.err;
  EXPECT_TRUE(contains(printed.err, "activate() ran already; setup() stays rebound once"))
      << printed.err;
  const auto backends = parse_json(printed.out)["entry_points"]["triton.backends"];
  EXPECT_EQ(backends.size(), 3u) << "the layer applied once: " << backends;
}

TEST_F(Hooks, PythonSetupPyBdistWheelEqualsTheCommand_StubLlvm) {
  const std::string expected = reference();
  const ProcessResult build = python({SYSTEM_PYTHON, "setup.py", "bdist_wheel"}, tree);
  ASSERT_EQ(build.exit_code, 0) << build.err;
  EXPECT_EQ(only_wheel(tree / "dist"), expected);
  EXPECT_TRUE(contains(build.err, "ascend-setup: build summary: 8 objects compiled")) << build.err;
  // Again: nothing compiled, the same wheel.
  const ProcessResult again = python({SYSTEM_PYTHON, "setup.py", "bdist_wheel"}, tree);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "build summary: 0 objects compiled")) << again.err;
  EXPECT_EQ(only_wheel(tree / "dist"), expected);
}

// SYSTEM_PYTHON (Debian's) links libpython statically: the host module is an
// extension module of a static interpreter there. A pyenv CPython links a
// shared libpython: the same hooks, the same wheel as the command's.
TEST_F(Hooks, ASharedLibpythonInterpreterGivesTheCommandsWheelToo_StubLlvm) {
  ASSERT_FALSE(
      contains(must_run({"ldd", fs::canonical(SYSTEM_PYTHON).string()}, dir.path()), "libpython"))
      << SYSTEM_PYTHON << " was expected to be a static interpreter";
  std::optional<fs::path> shared;
  for (const fs::path& candidate : found_pythons()) {
    if (contains(must_run({"ldd", fs::canonical(candidate).string()}, dir.path()), "libpython")) {
      shared = candidate;
      break;
    }
  }
  ASSERT_TRUE(shared) << "no CPython with a shared libpython among the served ones";
  const fs::path venv = cached_venv(*shared);
  const std::string venv_python = (venv / "bin/python").string();
  const std::string expected = reference(venv_python);
  const ProcessResult build = python({venv_python, "setup.py", "bdist_wheel"}, tree);
  ASSERT_EQ(build.exit_code, 0) << build.err;
  EXPECT_EQ(only_wheel(tree / "dist"), expected);
  EXPECT_TRUE(contains(expected, "-cp" + std::string(python_version(*shared)).erase(1, 1)))
      << expected;
}

TEST_F(Hooks, PipWheelThroughBuildMetaAndThroughTheLegacyPathEqualTheCommand_StubLlvm) {
  const std::string expected = reference();
  const fs::path out = dir.path() / "pip-out";
  const ProcessResult pep517 =
      python({SYSTEM_PYTHON, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps", "-w",
              out.string(), tree.string()},
             dir.path());
  ASSERT_EQ(pep517.exit_code, 0) << pep517.out << pep517.err;
  EXPECT_EQ(only_wheel(out), expected);

  // No pyproject.toml: pip runs `setup.py egg_info`, then `setup.py
  // bdist_wheel -d DIR`, each in its own process.
  const fs::path legacy_tree = adopting_tree(dir.path() / "legacy");
  fs::remove(legacy_tree / "pyproject.toml");
  const fs::path legacy_out = dir.path() / "legacy-out";
  const ProcessResult legacy =
      python({SYSTEM_PYTHON, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-use-pep517",
              "--no-deps", "-w", legacy_out.string(), legacy_tree.string()},
             dir.path());
  ASSERT_EQ(legacy.exit_code, 0) << legacy.out << legacy.err;
  EXPECT_TRUE(contains(legacy.out + legacy.err, "setup.py egg_info")) << legacy.out;
  EXPECT_EQ(only_wheel(legacy_out), expected);
}

TEST_F(Hooks, PythonMBuildSdistThenWheelEqualsTheCommand_StubLlvm) {
  const std::string expected = reference();
  const fs::path out = dir.path() / "build-out";
  const ProcessResult built =
      python({SYSTEM_PYTHON, "-m", "build", "--no-isolation", "-o", out.string(), tree.string()},
             dir.path());
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
  ASSERT_EQ(files_in(out, ".tar.gz").size(), 1u);
  EXPECT_EQ(only_wheel(out), expected);
}

TEST_F(Hooks, EditableInstallHasTheCommandsMetadataAndEntryPoints_StubLlvm) {
  const std::string expected = reference();
  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv.string()}, dir.path());
  const std::string venv_python = (venv / "bin/python").string();
  const ProcessResult install = python({venv_python, "-m", "pip", "install", "-q",
                                        "--no-build-isolation", "--no-deps", "-e", tree.string()},
                                       dir.path());
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  Env plain = env;
  plain["PYTHONPATH"] = std::nullopt;
  const std::string out = must_run({venv_python, "-c",
                                    "import triton, importlib.metadata as m\n"
                                    "print(triton.backends(), triton._C.libtriton.ir.add(2, 3))\n"
                                    "d = m.distribution('triton_ascend')\n"
                                    "print(d.read_text('entry_points.txt'), end='')\n"
                                    "print(d.read_text('METADATA'))\n"},
                                   dir.path(), plain);
  EXPECT_TRUE(contains(out, "['ascend', 'nvidia', 'amd'] 5\n")) << out;
  // The reference wheel's entry points and METADATA, in that order.
  const std::string entry_points = expected.substr(expected.find("[triton.backends]"));
  EXPECT_TRUE(contains(out, entry_points.substr(0, entry_points.find("\n\n")))) << out;
  const std::string metadata = expected.substr(expected.find("Metadata-Version:"));
  EXPECT_TRUE(contains(out, metadata.substr(0, metadata.find("\n\n")))) << out << "\n" << metadata;
}

// ascend-setup installed into a venv (pip, as a user installs it), its bin
// not on PATH and nothing pointing at the build: the hooks find the host
// module beside the installed package; the warning after a build of a
// checkout names `python -m ascend_setup --restore-sources`, which works.
TEST_F(Hooks, InstalledIntoAVenvTheHooksAndTheRestoreCommandWorkWithoutPath_StubLlvm) {
  const fs::path venv = dir.path() / "venv";
  must_run({SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv.string()}, dir.path());
  const std::string venv_python = (venv / "bin/python").string();
  must_run({venv_python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
            "--no-index", std::string("--config-settings=build-dir=") + BUILD_DIR, SOURCE_DIR},
           dir.path(), env);
  make_git_repo(tree, dir.path());
  env["PYTHONPATH"] = std::nullopt;
  env["ASCEND_SETUP_BINARY"] = std::nullopt;
  ASSERT_FALSE(contains(*env["PATH"], venv.string()));
  const ProcessResult build = python({venv_python, "setup.py", "bdist_wheel"}, tree);
  ASSERT_EQ(build.exit_code, 0) << build.err;
  ASSERT_EQ(files_in(tree / "dist", ".whl").size(), 1u);
  const std::string warning = "`python -m ascend_setup --restore-sources` restores them";
  EXPECT_TRUE(contains(build.err, warning)) << build.err;
  EXPECT_EQ(build.err.find(warning), build.err.rfind(warning)) << "one warning";
  EXPECT_FALSE(contains(build.err, "Traceback")) << build.err;

  const ProcessResult restore =
      python({venv_python, "-m", "ascend_setup", "--restore-sources"}, tree);
  ASSERT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(
      must_run({"git", "status", "--porcelain", "--untracked-files=no"}, tree, git_env(dir.path())),
      "");
}

// A failure of the layer: one line on stderr with the phase, the command's
// exit code (3: a bad profile), no traceback; the exception carries both.
TEST_F(Hooks, ALayerErrorIsOneLineWithThePhaseAndTheCommandsExitCode) {
  write_file(tree / "ascend-setup.toml", "[profile]\nname = 1\n");
  const ProcessResult run = python({SYSTEM_PYTHON, "setup.py", "--name"}, tree);
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_FALSE(contains(run.err, "Traceback")) << run.err;
  EXPECT_TRUE(contains(run.err, "ascend-setup: error: ")) << run.err;
  EXPECT_TRUE(contains(run.err, "(ascend_setup.hooks, while preparing the build)\n")) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;

  const ProcessResult caught = python({SYSTEM_PYTHON, "-c",
                                       "import runpy, sys\n"
                                       "sys.path.insert(0, '.')\n"
                                       "sys.argv = ['setup.py', '--name']\n"
                                       "try:\n"
                                       "    runpy.run_path('setup.py', run_name='__main__')\n"
                                       "except SystemExit as e:\n"
                                       "    print(type(e).__name__, e.code, e.phase)\n"},
                                      tree);
  EXPECT_EQ(caught.out, "LayerError 3 preparing the build\n") << caught.err;
}

// An interpreter whose minor this installation does not serve: one
// ImportError naming the minors served (a manifest that lists another minor only).
TEST_F(Hooks, AnUnservedMinorGetsOneImportErrorNamingTheServedOnes) {
  const fs::path install = dir.path() / "install";
  write_file(install / "bin/ascend-setup", "");
  write_file(install / "libexec/ascend-setup/hosts.txt",
             "3.1 ascend-setup-host-3.1.so\n3.2 ascend-setup-host-3.2.so\n");
  env["ASCEND_SETUP_BINARY"] = (install / "bin/ascend-setup").string();
  const ProcessResult run = python({SYSTEM_PYTHON, "-c", "import ascend_setup.hooks"}, dir.path());
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(contains(run.err, "ImportError: ascend_setup.hooks: ")) << run.err;
  EXPECT_TRUE(contains(run.err, "is CPython " + python_version(SYSTEM_PYTHON) +
                                    "; this ascend-setup serves CPython 3.1, 3.2"))
      << run.err;
}

}  // namespace
