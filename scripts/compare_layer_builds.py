"""The build comparison of compare-with-setup-ascend.py, for triton-ascend's
3.8.0 entry (setup_ascend.py importing python.build_helpers): their `python
setup_ascend.py bdist_wheel` and `ascend-setup bdist_wheel`, each on a fresh
clone with its own TRITON_HOME and a recording cmake first on PATH
(`--version`: 3.28.3; a configure call also runs python/build_helpers.py
write_thirdparty_cmake_vars as the 3.8 CMakeLists.txt does, so upstream's
helper must resolve every package without a download; every call succeeds
otherwise) and tests/stand_ins/auditwheel. The kwargs comparison's six
variants (LINE380_VARIANTS) plus TRITON_APPEND_CMAKE_ARGS naming
-DTRITON_GSAN_CLANGXX, each with (a) LLVM_SYSPATH the stub LLVM, offline, and
(b) LLVM_SYSPATH unset, online, the Ascend LLVM package already in the cache
(its name and URL from their _get_ascend_llvm_package_info; a bin/clang++ in
it); and with (a), ASCENDNPU_IR_TAG set and set empty. JSON_SYSPATH is the
stub JSON always. Compared, tree and cache paths normalised: the configure
call whole, the build and install calls, what upstream's helper wrote, the
cache afterwards, the wheel (name, members, modes, bytes) and the sources the
build left. Reported, not counted, beyond the above:
-DTRITON_PARALLEL_LINK_JOBS and the build calls' -j (ascend-setup's job
sizing, when the environment sets neither), its fetch lock in the cache, a
wheel where setuptools refuses their version (the +ci7 dev build), and no
-DASCENDNPU_IR_TAG= for an empty ASCENDNPU_IR_TAG (their layer passes it;
doc/upgrading.md lists it among the deliberate differences). With
TRITON_BUILD_TD on, the stand-in distributed part is a clone of its own: their
_ensure_distributed_submodule() (which checks out 7786ae06) is replaced by a
no-op and ascend-setup gets its profile with that clone's HEAD as the pin.

The copies of TREE both comparisons work on (make_copy: a clone, or the
tracked files alone as a source archive holds them) and the files they
compare (patched_files) are here too; the entry script imports them.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))

NESTED = "third_party/ascend/AscendNPU-IR"


def run(argv, cwd, env):
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)


def copy_tracked(source, dest):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=source, capture_output=True,
                           check=True).stdout.split(b"\0")
    for name in filter(None, files):
        path = os.path.join(source, name.decode())
        if os.path.isfile(path):
            target = os.path.join(dest, name.decode())
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(path, target)


def make_copy(source, dest, archive, distributed):
    nested = os.path.exists(os.path.join(source, NESTED, ".git"))
    if archive:
        copy_tracked(source, dest)
        if nested:
            copy_tracked(os.path.join(source, NESTED), os.path.join(dest, NESTED))
    else:
        subprocess.run(["git", "clone", "-q", "--no-checkout", source, dest], check=True)
        subprocess.run(["git", "-C", dest, "checkout", "-q", "HEAD", "--", "."],
                       check=False, capture_output=True)
        subprocess.run(["git", "-C", dest, "reset", "-q"], check=True)
        if nested:  # the nested checkout as a repository of its own, as a submodule's
            shutil.rmtree(os.path.join(dest, NESTED), ignore_errors=True)
            subprocess.run(["git", "clone", "-q", os.path.join(source, NESTED),
                            os.path.join(dest, NESTED)], check=True)
    if distributed:
        root = os.path.join(dest, "third_party/ascend/Triton-distributed-ascend/python/triton_dist")
        for sub in ("", "layers", "layers/nested"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
            open(os.path.join(root, sub, "__init__.py"), "w").close()
        open(os.path.join(root, "layers/nested/ops.pyi"), "w").close()


def patched_files(tree):
    files = {}
    for base in ("CMakeLists.txt", "bin", "include", "lib", "python", NESTED):
        top = os.path.join(tree, base)
        walk = [(tree, [], [base])] if os.path.isfile(top) else os.walk(top)
        for dirpath, _, names in walk:
            if ("__pycache__" in dirpath or "/build" in dirpath[len(tree):]
                    or "/.git" in dirpath[len(tree):]):
                continue
            for name in names:
                path = os.path.join(dirpath, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    with open(path, "rb") as handle:
                        files[os.path.relpath(path, tree)] = handle.read()
    return files


# ---------------------------------------------------------------------------
# The 3.8.0 entry (TecJesh/triton-ascend 1828d56): setup_ascend.py imports
# python.build_helpers, where upstream resolves its packages, run by CMake as
# a process of its own; the layer resolves the Ascend LLVM itself and adds
# -DLLVM_SYSPATH, -DTRITON_GSAN_CLANGXX and -DTRITON_VERSION to the configure
# call.

LINE380_VARIANTS = [
    ("default", {}),
    ("IS_MANYLINUX=1", {"IS_MANYLINUX": "1"}),
    ("SUFFIX=rc1", {"TRITON_WHEEL_VERSION_SUFFIX": "rc1"}),
    ("SUFFIX=+ci7", {"TRITON_WHEEL_VERSION_SUFFIX": "+ci7"}),
    ("TD=ON", {"TRITON_BUILD_TD": "ON"}),
    ("STABLE_ABI=1", {"TRITON_STABLE_ABI": "1"}),
]
# Build variants beyond those: the user's GSan compiler (with each LLVM), the
# AscendNPU IR tag set and set empty (with the given LLVM).
BUILD_VARIANTS = [("GSAN given", {"TRITON_APPEND_CMAKE_ARGS": "-DTRITON_GSAN_CLANGXX=/x"}, True),
                  ("IR_TAG=v1.2", {"ASCENDNPU_IR_TAG": "v1.2"}, False),
                  ("IR_TAG empty", {"ASCENDNPU_IR_TAG": ""}, False)]
DISTRIBUTED = "third_party/ascend/Triton-distributed-ascend"
PIN_380 = "7786ae06d5cf16fc232d3ccfeb4a18f5d6a9e26e"

# cmake for the builds: `--version` says 3.28.3; every other call is appended
# to $CMAKE_RECORD as a JSON line and succeeds. A configure call also runs
# what the 3.8 CMakeLists.txt runs at configure time (python/build_helpers.py
# write_thirdparty_cmake_vars with the call's values, the last -D of a name
# winning) and fails when it fails: upstream's helper must find its packages
# without a download.
RECORDING_CMAKE = r"""#!PYTHON
import json, os, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("cmake version 3.28.3")
    sys.exit(0)
entry = {"argv": args}
status = 0
if not {"--build", "--install", "-E", "-P"} & set(args):
    values = {}
    for arg in args:
        if arg.startswith("-D"):
            name, _, value = arg[2:].partition("=")
            values[name.split(":")[0]] = value
    home = os.environ.get("TRITON_HOME") or os.environ["HOME"]
    output = os.path.join(os.getcwd(), "thirdparty-vars.cmake")
    helper = [values.get("Python3_EXECUTABLE", sys.executable),
              os.path.join(args[0], "python", "build_helpers.py"), "write_thirdparty_cmake_vars",
              "--triton-cache-path", values.get("TRITON_CACHE_PATH") or os.path.join(home, ".triton")]
    if values.get("TRITON_OFFLINE_BUILD", "OFF").upper() in ("ON", "1", "YES", "TRUE", "Y"):
        helper.append("--triton-offline-build")
    helper += ["--triton-llvm-system-suffix", values.get("TRITON_LLVM_SYSTEM_SUFFIX", ""),
               "--llvm-syspath", values.get("LLVM_SYSPATH", ""),
               "--json-syspath", values.get("JSON_SYSPATH", ""),
               "--output", output, "--packages", "llvm", "json"]
    done = subprocess.run(helper, capture_output=True, text=True, timeout=600)
    status = done.returncode
    vars_text = open(output).read() if os.path.exists(output) else None
    entry["helper"] = {"status": status, "output": (done.stdout + done.stderr).strip(),
                       "vars": vars_text}
with open(os.environ["CMAKE_RECORD"], "a") as record:
    record.write(json.dumps(entry) + "\n")
sys.exit(status)
"""

# Their Ascend LLVM package for this machine, by their own function.
THEIR_PACKAGE = r"""
import importlib.util, json, pathlib
spec = importlib.util.spec_from_file_location("setup_ascend", "setup_ascend.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(module._get_ascend_llvm_package_info(pathlib.Path("."))))
"""

# Their entry as `python setup_ascend.py ARGS` runs it, with
# _ensure_distributed_submodule() replaced: it checks out 7786ae06 in the
# distributed clone, a commit only the real server has (ascend-setup is
# given that clone's HEAD as its pin instead, so both use the stand-in as it is).
THEIR_BUILD_DISTRIBUTED = r"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("setup_ascend", "setup_ascend.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
def held_as_it_is():
    print("@@PIN@@ their _ensure_distributed_submodule skipped", file=sys.stderr)
module._ensure_distributed_submodule = held_as_it_is
sys.argv = ["setup_ascend.py"] + sys.argv[1:]
module.main()
"""


def their_llvm_package(tree, base_env):
    with tempfile.TemporaryDirectory() as work:
        copy = os.path.join(work, "tree")
        make_copy(tree, copy, True, False)
        env = {k: v for k, v in base_env.items() if k != "TRITON_LLVM_SYSTEM_SUFFIX"}
        done = run([sys.executable, "-c", THEIR_PACKAGE], copy, env)
        if done.returncode != 0:
            raise SystemExit("their _get_ascend_llvm_package_info failed: " + done.stderr[-1500:])
        return json.loads(done.stdout.splitlines()[-1])


def cache_llvm_package(home, package, stub_llvm):
    """The Ascend package already fetched, as upstream's helper leaves it: the
    stub's files, a bin/clang++ (the package's GSan compiler) and version.txt
    holding its URL."""
    target = os.path.join(home, ".triton", "llvm", package["name"])
    shutil.copytree(stub_llvm, target)
    os.makedirs(os.path.join(target, "bin"), exist_ok=True)
    clang = os.path.join(target, "bin", "clang++")
    with open(clang, "w") as handle:
        handle.write("#!/bin/sh\nexit 0\n")
    os.chmod(clang, 0o755)
    with open(os.path.join(target, "version.txt"), "w") as handle:
        handle.write(package["url"])


def pin_distributed_clone(tree_copy, work):
    """The stand-in distributed part made a clone of its own; returns a copy
    of the profile ascend-setup uses (the tree's ascend-setup.toml, else the
    built-in 3.8.0 one) whose pin is its HEAD."""
    clone = os.path.join(tree_copy, DISTRIBUTED)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_AUTHOR_NAME="Ref", GIT_AUTHOR_EMAIL="ref@example.com",
               GIT_COMMITTER_NAME="Ref", GIT_COMMITTER_EMAIL="ref@example.com",
               GIT_AUTHOR_DATE="2026-12-06T12:00:00Z", GIT_COMMITTER_DATE="2026-12-06T12:00:00Z")
    for argv in (["init", "-q", "-b", "master"], ["add", "-A"], ["commit", "-qm", "stand-in"]):
        subprocess.run(["git", *argv], cwd=clone, env=env, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    source = os.path.join(tree_copy, "ascend-setup.toml")
    if not os.path.exists(source):
        source = os.path.join(HERE, "..", "profiles", "triton-ascend-3.8.0.toml")
    with open(source) as handle:
        text = handle.read()
    assert text.count(f'pin = "{PIN_380}"') == 1, "the 3.8.0 profile's pin moved"
    profile = os.path.join(work, "pinned-3.8.0.toml")
    with open(profile, "w") as handle:
        handle.write(text.replace(f'pin = "{PIN_380}"', f'pin = "{head}"'))
    return profile


def cache_listing(home):
    root = os.path.join(home, ".triton")
    listing = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            kind = ("-> " + os.readlink(path) if os.path.islink(path)
                    else "dir" if os.path.isdir(path) else "file")
            listing[os.path.relpath(path, root)] = kind
    return listing


def wheel_entries(dist):
    wheels = sorted(glob.glob(os.path.join(dist, "*.whl")))
    if len(wheels) != 1:
        return None, {}
    with zipfile.ZipFile(wheels[0]) as wheel:
        return os.path.basename(wheels[0]), {
            info.filename: (info.external_attr >> 16, wheel.read(info))
            for info in wheel.infolist()}


class BuildSide:
    """One side's build (their setup_ascend.py or ascend-setup) on a fresh
    clone with its own TRITON_HOME, under work/<name>/."""

    def __init__(self, name, work, tree, env, stub_llvm, package, distributed):
        self.root = os.path.join(work, name)
        self.tree = os.path.join(self.root, "tree")
        self.home = os.path.join(self.root, "home")
        os.makedirs(self.home)
        make_copy(tree, self.tree, False, distributed)
        if package:
            cache_llvm_package(self.home, package, stub_llvm)
        self.env = dict(env, TRITON_HOME=self.home,
                        CMAKE_RECORD=os.path.join(self.root, "cmake.jsonl"))
        self.stub_llvm = stub_llvm

    def build(self, argv):
        self.result = run(argv, self.tree, self.env)
        self.calls = []
        if os.path.exists(self.env["CMAKE_RECORD"]):
            with open(self.env["CMAKE_RECORD"]) as record:
                self.calls = [self.norm(json.loads(line)) for line in record]
        self.wheel, self.entries = wheel_entries(os.path.join(self.tree, "dist"))
        self.cache = self.norm(cache_listing(self.home))
        # The sources as the build left them (its egg-info is no source).
        self.files = {k: v for k, v in patched_files(self.tree).items() if ".egg-info/" not in k}

    def norm(self, value):
        text = json.dumps(value)
        for path, name in ((self.tree, "TREE"), (self.home, "HOME"), (self.stub_llvm, "STUB_LLVM")):
            text = text.replace(path, name)
        return json.loads(text)

    def configure(self):
        calls = [c for c in self.calls if not {"--build", "--install"} & set(c["argv"])]
        return calls[0] if len(calls) == 1 else None

    def others(self):
        return [c["argv"] for c in self.calls if {"--build", "--install"} & set(c["argv"])]

    def logged(self, name):
        """The value ascend-setup's log says it chose for `name`, else None."""
        found = re.search(r"info: " + name + r"=(\d+):", self.result.stderr)
        return found.group(1) if found else None


def defined(args, name):
    values = [a.split("=", 1)[1] for a in args if a.split("=", 1)[0].split(":")[0] == "-D" + name]
    return values[-1] if values else None


def ascend_tail(args):
    start = next((i for i, a in enumerate(args)
                  if a.startswith(("-DASCENDNPU_IR_TAG=", "-DLLVM_MAJOR_VERSION_"))), len(args))
    return args[start:]


def record_lines(text, skip):
    """A wheel's RECORD without its own line, entry_points.txt's and `skip`'s."""
    return sorted(line for line in text.decode().splitlines()
                  if line.split(",")[0] not in skip and not line.split(",")[0].endswith(
                      ("/RECORD", "/entry_points.txt")))


def compare_wheels(theirs, ours):
    """Differences (counted) and ascend-setup's additions (reported) between
    the two sides' wheels."""
    differences, additions = [], []
    if theirs.wheel is None or ours.wheel is None:
        return [f"wheels: theirs {theirs.wheel}, ours {ours.wheel}"], additions
    if theirs.wheel != ours.wheel:
        differences.append(f"wheel name: theirs {theirs.wheel}, ours {ours.wheel}")
    nested = {k for k in set(ours.entries) - set(theirs.entries)
              if k.startswith("triton_dist/") and k.count("/") > 1 and k.endswith(".pyi")}
    if nested:
        additions.append(f"{len(nested)} .pyi of nested triton_dist packages")
    for name in sorted((set(theirs.entries) | set(ours.entries)) - nested):
        mine, their = ours.entries.get(name), theirs.entries.get(name)
        if mine is None or their is None:
            only = "ours" if their is None else "theirs"
            differences.append(f"wheel member {name} only in {only}")
        elif mine[0] != their[0]:
            differences.append(f"wheel member {name}: mode {oct(their[0])} theirs, "
                               f"{oct(mine[0])} ours")
        elif mine[1] == their[1]:
            continue
        elif name.endswith("/entry_points.txt") and sorted(mine[1].splitlines()) == sorted(
                their[1].splitlines()):
            additions.append("entry_points.txt in setup()'s order")
        elif not name.endswith("/RECORD") or (record_lines(mine[1], nested)
                                               != record_lines(their[1], nested)):
            differences.append(f"wheel member {name}: other bytes")
    return differences, additions


def compare_cmake_calls(theirs, ours, env, label):
    """The configure call whole, then the build and install calls: differences
    (counted; each differing configure argument printed) and ascend-setup's
    additions (reported)."""
    differences, additions = [], []
    theirs_args, ours_args = theirs.configure()["argv"], list(ours.configure()["argv"])
    # ascend-setup's job sizing: TRITON_PARALLEL_LINK_JOBS and MAX_JOBS where unset.
    link_arg = f"-DTRITON_PARALLEL_LINK_JOBS={ours.logged('TRITON_PARALLEL_LINK_JOBS')}"
    if ("TRITON_PARALLEL_LINK_JOBS" not in env and link_arg in ours_args
            and link_arg not in theirs_args):
        ours_args.remove(link_arg)
        additions.append(link_arg)
    # An empty ASCENDNPU_IR_TAG is passed by their layer only (doc/upgrading.md).
    if (env.get("ASCENDNPU_IR_TAG") == "" and "-DASCENDNPU_IR_TAG=" in theirs_args
            and "-DASCENDNPU_IR_TAG=" not in ours_args):
        theirs_args = [a for a in theirs_args if a != "-DASCENDNPU_IR_TAG="]
        additions.append("no empty -DASCENDNPU_IR_TAG= (theirs passes one)")
    theirs_version, ours_version = (defined(theirs_args, "TRITON_VERSION"),
                                    defined(ours_args, "TRITON_VERSION"))
    if theirs_version.count("+") > 1 and ours_version.count("+") == 1:
        additions.append(f"a PEP 440 version {ours_version} (theirs {theirs_version})")
        last = max(i for i, a in enumerate(ours_args) if a.startswith("-DTRITON_VERSION="))
        ours_args[last] = "-DTRITON_VERSION=" + theirs_version
    if theirs_args != ours_args:
        differences.append("configure call")
        for index in range(max(len(theirs_args), len(ours_args))):
            pair = [(x[index] if index < len(x) else None) for x in (theirs_args, ours_args)]
            if pair[0] != pair[1]:
                print(f"  {label}: configure argument {index}: theirs {pair[0]!r},"
                      f" ours {pair[1]!r}")
    theirs_others, ours_others = theirs.others(), ours.others()
    jobs = ours.logged("MAX_JOBS")
    if jobs and "MAX_JOBS" not in env:
        upstream_jobs = f"-j{2 * os.cpu_count()}"  # upstream's default
        theirs_others = [["-jN" if a == upstream_jobs else a for a in c] for c in theirs_others]
        ours_others = [["-jN" if a == f"-j{jobs}" else a for a in c] for c in ours_others]
        if f"-j{jobs}" != upstream_jobs:
            additions.append(f"-j{jobs} for their {upstream_jobs} (MAX_JOBS)")
    if theirs_others != ours_others:
        differences.append(f"cmake build/install calls: theirs {theirs_others}, ours {ours_others}")
    if theirs.configure().get("helper") != ours.configure().get("helper"):
        differences.append(f"upstream's helper: theirs {theirs.configure().get('helper')}, "
                           f"ours {ours.configure().get('helper')}")
    return differences, additions


def compare_cache(theirs, ours):
    """The cache both builds leave: ascend-setup's fetch lock reported."""
    locks = {k for k in set(ours.cache) - set(theirs.cache)
             if os.path.basename(k).startswith(".") and k.endswith(".lock")}
    ours_cache = {k: v for k, v in ours.cache.items() if k not in locks}
    differences = [f"cache {k}: theirs {theirs.cache.get(k)}, ours {ours_cache.get(k)}"
                   for k in sorted(set(theirs.cache) | set(ours_cache))
                   if theirs.cache.get(k) != ours_cache.get(k)]
    return differences, [f"its fetch lock {', '.join(sorted(locks))} in the cache"] if locks else []


def compare_build(tree, binary, base_env, label, variant_env, package, args, work):
    """Their `setup_ascend.py bdist_wheel` and `ascend-setup bdist_wheel` with
    the recording cmake: the cmake calls, what upstream's helper resolved, the
    cache, the wheel and the sources left. One line; returns 1 when anything
    but ascend-setup's additions differs."""
    distributed = variant_env.get("TRITON_BUILD_TD") == "ON"
    stub = os.path.abspath(args.stub_llvm)
    env = {k: v for k, v in base_env.items()
           if k not in ("LLVM_SYSPATH", "TRITON_OFFLINE_BUILD", "JSON_SYSPATH", "MAX_JOBS",
                        "PYTHONPATH", "VIRTUAL_ENV", "CMAKE_RECORD")}
    env.update(variant_env, PATH=os.path.join(work, "bin") + os.pathsep + env.get("PATH", ""),
               JSON_SYSPATH=os.path.abspath(args.stub_json), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL="/dev/null")
    if not package:  # (a) the user's LLVM, offline
        env.update(LLVM_SYSPATH=stub, TRITON_OFFLINE_BUILD="1")
    theirs, ours = (BuildSide(name, work, tree, env, stub, package, distributed)
                    for name in ("theirs", "ours"))
    their_argv = [sys.executable, "setup_ascend.py", "bdist_wheel"]
    our_argv = [binary, "--python", sys.executable, "bdist_wheel"]
    if distributed:
        pin_distributed_clone(theirs.tree, theirs.root)
        their_argv = [sys.executable, "-c", THEIR_BUILD_DISTRIBUTED, "bdist_wheel"]
        our_argv[3:3] = ["--profile", pin_distributed_clone(ours.tree, ours.root)]
    theirs.build(their_argv)
    ours.build(our_argv)
    configured = theirs.configure()
    theirs_version = defined(configured["argv"], "TRITON_VERSION") if configured else ""
    # Their dev version with a "+" suffix has two "+": setuptools' egg_info
    # refuses it after build_ext, so their wheel is never made.
    refused = (theirs.result.returncode != 0 and theirs_version.count("+") > 1
               and "InvalidVersion" in theirs.result.stderr)
    if ((theirs.result.returncode != 0 and not refused) or ours.result.returncode != 0
            or not theirs.configure() or not ours.configure()):
        print(f"{label}: could not build: theirs rc {theirs.result.returncode}, "
              f"{len(theirs.calls)} cmake calls\n{theirs.result.stderr[-2000:]}\n"
              f"ours rc {ours.result.returncode}, {len(ours.calls)} cmake calls\n"
              f"{ours.result.stderr[-2000:]}")
        return 1
    differences, additions = compare_cmake_calls(theirs, ours, env, label)
    for found in (compare_cache(theirs, ours),
                  ([], [f"a wheel (their egg_info stops: "
                        f"{theirs.result.stderr.strip().splitlines()[-1].split(': ', 1)[-1]})"])
                  if refused else compare_wheels(theirs, ours)):
        differences += found[0]
        additions += found[1]
    if theirs.files != ours.files:
        differing = sorted(k for k in set(theirs.files) | set(ours.files)
                           if theirs.files.get(k) != ours.files.get(k))
        differences.append("sources left " + ", ".join(differing[:5]))
    if distributed and "@@PIN@@" not in theirs.result.stderr:
        differences.append("their distributed step was not replaced")
    print(f"{label}: {'equal' if not differences else 'DIFFER in ' + '; '.join(differences)}"
          f" (Ascend arguments: {' '.join(ascend_tail(theirs.configure()['argv']))};"
          f" wheel {theirs.wheel or ours.wheel}, {len(theirs.entries or ours.entries)} members;"
          f" ascend-setup adds {', '.join(dict.fromkeys(additions)) or 'nothing'})")
    return int(bool(differences))


def compare_builds(tree, binary, base_env, args):
    """Every build combination (each variant with the LLVM given, then with
    their Ascend LLVM package cached), each in a temporary directory whose
    bin/ holds the recording cmake and the stand-in auditwheel; returns the
    number that differ."""
    failures = 0
    package = their_llvm_package(tree, base_env)
    builds = [(name, variant_env, llvm) for llvm in (None, package)
              for name, variant_env, both in [v + (True,) for v in LINE380_VARIANTS]
              + BUILD_VARIANTS if both or llvm is None]
    for name, variant_env, llvm in builds:
        label = f"build {name}, LLVM {'cached ' + llvm['name'] if llvm else 'given (LLVM_SYSPATH)'}"
        if args.variant not in label:
            continue
        with tempfile.TemporaryDirectory() as work:
            os.makedirs(os.path.join(work, "bin"))
            cmake = os.path.join(work, "bin", "cmake")
            with open(cmake, "w") as handle:
                handle.write(RECORDING_CMAKE.replace("PYTHON", sys.executable, 1))
            os.chmod(cmake, 0o755)
            shutil.copy2(os.path.join(HERE, "..", "tests", "stand_ins", "auditwheel"),
                         os.path.join(work, "bin", "auditwheel"))
            failures += compare_build(tree, binary, base_env, label, variant_env, llvm, args, work)
    return failures
