// The PEP 517/660 backend ascend_setup.build_meta through the real front ends
// (pip wheel, python -m build: sdist then the wheel from the sdist, pip install
// -e) on a copy of the example tree whose pyproject.toml opts in. The backend
// is importable through PYTHONPATH (python_shims) and runs the built launcher
// ($ASCEND_SETUP_BINARY); every wheel is compared with `ascend-setup bdist_wheel`'s.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

using namespace test_support;

namespace {

const char* opt_in =
    "[build-system]\nrequires = [\"setuptools>=40.8.0\", \"wheel\"]\n"
    "build-backend = \"ascend_setup.build_meta\"\n";

// The text of a wheel's member whose name ends with `suffix`, when RECORD
// lists it with its digest; else "".
std::string wheel_member(const fs::path& wheel, const std::string& suffix) {
  return must_run({SYSTEM_PYTHON, "-c",
                   "import sys, zipfile\n"
                   "wheel = zipfile.ZipFile(sys.argv[1])\n"
                   "names = [n for n in wheel.namelist() if n.endswith(sys.argv[2])]\n"
                   "record = [n for n in wheel.namelist() if n.endswith('.dist-info/RECORD')]\n"
                   "listed = wheel.read(record[0]).decode().splitlines() if record else []\n"
                   "if names and any(l.startswith(names[0] + ',sha256=') for l in listed):\n"
                   "    sys.stdout.write(wheel.read(names[0]).decode())\n",
                   wheel.string(), suffix},
                  wheel.parent_path());
}

// A copy of `wheel` at `copy` whose member ending with `suffix` holds `text`.
void replace_wheel_member(const fs::path& wheel, const fs::path& copy, const std::string& suffix,
                          const std::string& text) {
  must_run({SYSTEM_PYTHON, "-c",
            "import sys, zipfile\n"
            "with zipfile.ZipFile(sys.argv[1]) as old, zipfile.ZipFile(sys.argv[2], 'w') as new:\n"
            "    for info in old.infolist():\n"
            "        data = old.read(info)\n"
            "        if info.filename.endswith(sys.argv[3]):\n"
            "            data = sys.argv[4].encode()\n"
            "        new.writestr(info, data)\n",
            wheel.string(), copy.string(), suffix, text},
           wheel.parent_path());
}

// "library: NAME VERSION (...)" lines of --host-version: NAME -> VERSION.
std::map<std::string, std::string> host_version_libraries(const std::string& out) {
  std::map<std::string, std::string> libraries;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string tag, name, version;
    if (words >> tag >> name >> version && tag == "library:") {
      libraries[name] = version;
    }
  }
  return libraries;
}

class Backend : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = copy_example_tree(dir.path());
    write_file(tree / "pyproject.toml", opt_in);
    env = front_end_env(dir.path());
    // The reference: ascend-setup itself, on a second copy.
    fs::create_directories(dir.path() / "reference");
    const fs::path reference_tree = copy_example_tree(dir.path() / "reference");
    write_file(reference_tree / "pyproject.toml", opt_in);
    const auto build = run_host({"bdist_wheel"}, reference_tree, env);
    ASSERT_EQ(build.exit_code, 0) << build.err;
    const auto wheels = files_in(reference_tree / "dist", ".whl");
    ASSERT_EQ(wheels.size(), 1u);
    reference = wheel_summary(wheels[0]);
  }

  std::string run(const std::vector<std::string>& argv) { return must_run(argv, dir.path(), env); }

  TempDir dir;
  fs::path tree;
  Env env;
  std::string reference;
};

TEST_F(Backend, PipWheelAndPythonMBuildGiveTheAscendWheel_StubLlvm) {
  const fs::path out = dir.path() / "pip-out";
  run({SYSTEM_PYTHON, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w",
       out.string(), tree.string()});
  auto wheels = files_in(out, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheel_summary(wheels[0]), reference);

  // sdist, then the wheel from the unpacked sdist (no git, no build dir).
  const fs::path built = dir.path() / "build-out";
  run({SYSTEM_PYTHON, "-m", "build", "--no-isolation", "-o", built.string(), tree.string()});
  const auto sdists = files_in(built, ".tar.gz");
  ASSERT_EQ(sdists.size(), 1u);
  const std::string listing = run({"tar", "tzf", sdists[0].string()});
  for (const char* needed : {"/setup.py", "/pyproject.toml", "/version.txt", "/CMakeLists.txt",
                             "/README.md", "/third_party/ascend/", "/PKG-INFO"}) {
    EXPECT_TRUE(contains(listing, needed)) << needed << " missing from the sdist:\n" << listing;
  }
  EXPECT_FALSE(contains(listing, "/build/")) << listing;
  wheels = files_in(built, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheel_summary(wheels[0]), reference);
}

TEST_F(Backend, ConfigSettingsReachSetupPyAsWithSetuptools) {
  const fs::path out = dir.path() / "out";
  // --build-option goes after bdist_wheel: a build tag in the wheel's name.
  run({SYSTEM_PYTHON, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
       "--config-settings=--build-option=--build-number=7", "-w", out.string(), tree.string()});
  const auto wheels = files_in(out, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheels[0].filename().string().rfind("triton_ascend-3.6.0-7-", 0), 0u) << wheels[0];
}

TEST_F(Backend, EditableInstallRegistersAscendFirstAndLinksTheBackends_StubLlvm) {
  const fs::path venv = dir.path() / "venv";
  run({SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv.string()});
  const std::string python = (venv / "bin/python").string();
  run({python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "-e",
       tree.string()});
  Env plain = env;
  plain["PYTHONPATH"] = std::nullopt;
  const std::string out =
      must_run({python, "-c",
                "import triton, importlib.metadata as m\n"
                "print(triton.backends(), triton._C.libtriton.ir.add(2, 3))\n"
                "print([e.name for e in m.entry_points(group='triton.backends')])\n"
                "print(triton.__file__)\n"},
               dir.path(), plain);
  EXPECT_EQ(out, "['ascend', 'nvidia', 'amd'] 5\n['ascend', 'nvidia', 'amd']\n" +
                     (tree / "python/triton/__init__.py").string() + "\n");
  // What develop links (add_links(external_only=False)): the backends into the tree.
  EXPECT_TRUE(fs::is_symlink(tree / "python/triton/backends/ascend"));
}

// `python -m build` of a git checkout: the sdist has no .git, yet the wheel
// built from it must be the checkout's (version with +git<HEAD>).
TEST(BackendOfACheckout, WheelFromTheSdistKeepsTheCheckoutsVersion_StubLlvm) {
  TempDir dir;
  const fs::path tree = copy_example_tree(dir.path());
  write_file(tree / "pyproject.toml", opt_in);
  const std::string head = make_git_repo(tree, dir.path());
  Env env = offline_env(dir.path());
  env["MAX_JOBS"] = "2";
  env["PYTHONPATH"] = PYTHON_SHIMS;
  env["ASCEND_SETUP_BINARY"] = ASCEND_SETUP_BINARY;
  // The reference: ascend-setup bdist_wheel in a clone (same HEAD, same branch).
  const fs::path clone = dir.path() / "clone";
  must_run({"git", "clone", "-q", tree.string(), clone.string()}, dir.path(), git_env(dir.path()));
  const auto build = run_host({"bdist_wheel"}, clone, env);
  ASSERT_EQ(build.exit_code, 0) << build.err;
  const auto reference = files_in(clone / "dist", ".whl");
  ASSERT_EQ(reference.size(), 1u);
  EXPECT_TRUE(contains(reference[0].filename().string(), "+git" + head.substr(0, 8)))
      << reference[0];

  const fs::path built = dir.path() / "build-out";
  must_run({SYSTEM_PYTHON, "-m", "build", "--no-isolation", "-o", built.string(), tree.string()},
           dir.path(), env);
  const auto sdists = files_in(built, ".tar.gz");
  ASSERT_EQ(sdists.size(), 1u);
  EXPECT_FALSE(contains(must_run({"tar", "tzf", sdists[0].string()}, dir.path()), "/.git/"));
  const auto wheels = files_in(built, ".whl");
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_EQ(wheel_summary(wheels[0]), wheel_summary(reference[0]));
}

// ascend-setup's own wheel (python_shims/project_build.py, packing this
// build) judged as auditwheel's manylinux_2_34 policy judges a wheel
// (scripts/check-wheel-policy.py: every ELF's NEEDED and symbol versions,
// libpython refused, the tags): a portable build (the quick start's test
// mode) passes and is tagged for the policy; one linked with the system's
// libraries is tagged linux_<arch> and fails it on those libraries.
// Then cibuildwheel's route with that wheel: the tree's pyproject.toml names
// ascend-setup as a build requirement, and pip builds WITH build isolation, its requirements
// installed from a local wheel directory into a fresh environment:
// ascend-setup's own wheel (this build, packed by python_shims/project_build.py),
// Debian's setuptools and wheel wheels, and Debian's pybind11 repacked as a
// wheel (the example's setup.py imports it; PyPI is out of reach here: the
// stand-in is the package's own files). Nothing of the checkout is on the
// path: the backend and the launcher come from the installed wheel.
TEST_F(Backend,
       ItsOwnWheelPassesThePolicyAndBuildsWithIsolationFromAWheelDirectory_StandInPybind11Wheel) {
  const fs::path wheels = dir.path() / "wheels";
  run({SYSTEM_PYTHON, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
       std::string("--config-settings=build-dir=") + BUILD_DIR, "-w", wheels.string(), SOURCE_DIR});
  const auto own = files_in(wheels, ".whl");
  ASSERT_EQ(own.size(), 1u);
  const std::string name = own[0].filename().string();
  EXPECT_EQ(name.rfind("ascend_setup-", 0), 0u) << name;
  const auto check = ascend_setup::run_process(
      {{SYSTEM_PYTHON, std::string(SOURCE_DIR) + "/scripts/check-wheel-policy.py", own[0].string()},
       dir.path(),
       {},
       {}});
  if (PORTABLE_BUILD) {
    EXPECT_TRUE(contains(name, "-py3-none-manylinux_2_34_")) << name;
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    EXPECT_TRUE(contains(check.out, "against manylinux_2_34_x86_64: ok")) << check.out;
  } else {
    EXPECT_TRUE(contains(name, "-py3-none-linux_")) << name;
    EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
    EXPECT_TRUE(contains(check.err, "libgit2.so")) << check.err;
  }
  // Its SBOM (in RECORD): the libraries linked, at the versions --host-version
  // prints; the portable build's named by their Debian source packages.
  const std::string sbom_text = wheel_member(own[0], ".dist-info/sbom.cdx.json");
  ASSERT_FALSE(sbom_text.empty()) << "no sbom.cdx.json listed in RECORD";
  auto sbom = parse_json(sbom_text);
  EXPECT_EQ(sbom["bomFormat"], "CycloneDX");
  EXPECT_EQ(sbom["specVersion"], "1.5");
  EXPECT_EQ(sbom["metadata"]["component"]["name"], "ascend-setup");
  const auto host_version = run_host({"--host-version"}, dir.path(), env);
  ASSERT_EQ(host_version.exit_code, 0) << host_version.err;
  const auto printed = host_version_libraries(host_version.out);
  for (const char* library : {"libgit2", "libcurl", "libarchive", "zlib"}) {
    SCOPED_TRACE(library);
    ASSERT_TRUE(printed.count(library)) << host_version.out;
    bool listed = false;
    for (const auto& component : sbom["components"]) {
      if (component["name"] != library) {
        continue;
      }
      listed = true;
      EXPECT_EQ(component["type"], "library");
      EXPECT_EQ(component["version"], printed.at(library)) << host_version.out;
      if (PORTABLE_BUILD) {
        EXPECT_EQ(component.value("purl", "").rfind("pkg:deb/debian/", 0), 0u) << component;
        EXPECT_TRUE(contains(component.value("purl", ""), "?distro=debian-12")) << component;
      }
    }
    EXPECT_TRUE(listed) << sbom_text;
  }
  // A release refuses a library older than Debian's newer version, unless
  // ASCEND_SETUP_ALLOW_OLDER_STATIC=1 allows it: a doctored SBOM whose
  // libgit2 alone is older.
  const std::string newer = "ascend-setup:newer-debian-version";
  for (auto& component : sbom["components"]) {
    auto& properties = component["properties"];
    for (auto it = properties.begin(); it != properties.end();) {
      it = (*it)["name"] == newer ? properties.erase(it) : it + 1;
    }
    if (component["name"] == "libgit2") {
      properties.push_back({{"name", newer}, {"value", "99:1.0-1"}});
    }
  }
  const fs::path doctored = dir.path() / "doctored" / name;
  fs::create_directories(doctored.parent_path());
  replace_wheel_member(own[0], doctored, ".dist-info/sbom.cdx.json", sbom.dump(2));
  const std::string policy = std::string(SOURCE_DIR) + "/scripts/check-wheel-policy.py";
  const auto refused =
      ascend_setup::run_process({{SYSTEM_PYTHON, policy, doctored.string()},
                                 dir.path(),
                                 {{"ASCEND_SETUP_ALLOW_OLDER_STATIC", std::nullopt}},
                                 {}});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "sbom.cdx.json: libgit2 " + printed.at("libgit2")))
      << refused.err;
  EXPECT_TRUE(contains(refused.err, "older than Debian's newer version 99:1.0-1")) << refused.err;
  const auto allowed = ascend_setup::run_process({{SYSTEM_PYTHON, policy, doctored.string()},
                                                  dir.path(),
                                                  {{"ASCEND_SETUP_ALLOW_OLDER_STATIC", "1"}},
                                                  {}});
  EXPECT_FALSE(contains(allowed.err, "older than Debian's newer version ")) << allowed.err;
  EXPECT_TRUE(contains(allowed.err,
                       "check-wheel-policy: libgit2 older than Debian's newer "
                       "versions, allowed by ASCEND_SETUP_ALLOW_OLDER_STATIC=1\n"))
      << allowed.err;
  if (PORTABLE_BUILD) {
    EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  }
  for (const auto& debian : files_in("/usr/share/python-wheels", ".whl")) {
    const std::string name = debian.filename().string();
    if (name.rfind("setuptools-", 0) == 0 || name.rfind("wheel-", 0) == 0) {
      fs::copy_file(debian, wheels / name);
    }
  }
  run({SYSTEM_PYTHON, "-c",
       "import os, sys, zipfile, hashlib, base64, pybind11\n"
       "package = os.path.dirname(pybind11.__file__)\n"
       "info = 'pybind11-%s.dist-info' % pybind11.__version__\n"
       "name = os.path.join(sys.argv[1], 'pybind11-%s-py3-none-any.whl' % pybind11.__version__)\n"
       "records = []\n"
       "with zipfile.ZipFile(name, 'w') as wheel:\n"
       "    def add(arcname, data):\n"
       "        wheel.writestr(arcname, data)\n"
       "        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=')\n"
       "        records.append('%s,sha256=%s,%d' % (arcname, digest.decode(), len(data)))\n"
       "    for root, dirs, files in os.walk(package):\n"
       "        dirs[:] = [d for d in dirs if d != '__pycache__']\n"
       "        for f in files:\n"
       "            path = os.path.join(root, f)\n"
       "            add('pybind11/' + os.path.relpath(path, package), open(path, 'rb').read())\n"
       "    add(info + '/METADATA', ('Metadata-Version: 2.1\\nName: pybind11\\nVersion: %s\\n'\n"
       "                             % pybind11.__version__).encode())\n"
       "    add(info + '/WHEEL', b'Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: "
       "py3-none-any\\n')\n"
       "    wheel.writestr(info + '/RECORD', '\\n'.join(records + [info + '/RECORD,,']) + '\\n')\n",
       wheels.string()});
  write_file(
      tree / "pyproject.toml",
      "[build-system]\nrequires = [\"setuptools\", \"wheel\", \"ascend-setup\", \"pybind11\"]\n"
      "build-backend = \"ascend_setup.build_meta\"\n");
  Env isolated = env;
  isolated["PYTHONPATH"] = std::nullopt;
  isolated["ASCEND_SETUP_BINARY"] = std::nullopt;
  isolated["PATH"] = base_path();
  isolated["ASCEND_SETUP_LOG_LEVEL"] = "debug";  // names the host module it ran
  const fs::path out = dir.path() / "out";
  const auto build = ascend_setup::run_process(
      {{SYSTEM_PYTHON, "-m", "pip", "wheel", "-v", "--no-index", "--find-links", wheels.string(),
        "--no-deps", "-w", out.string(), tree.string()},
       dir.path(),
       isolated,
       {}});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  // The host module of the wheel installed into pip's build environment.
  EXPECT_TRUE(contains(build.out + build.err, "pip-build-env-")) << build.out << build.err;
  EXPECT_TRUE(contains(build.out + build.err, "/libexec/ascend-setup/ascend-setup-host-"))
      << build.out << build.err;
  const auto built = files_in(out, ".whl");
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(wheel_summary(built[0]), reference);
}

}  // namespace
