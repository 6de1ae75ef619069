#!/usr/bin/env python3
"""Compares ascend-setup with the maintainers' Python layer on a real
triton-ascend checkout, in every combination of IS_MANYLINUX,
TRITON_WHEEL_VERSION_SUFFIX and TRITON_BUILD_TD that triton-ascend's CI uses
(and, for the in-tree layer, TRITON_LLVM_SYSTEM_SUFFIX): the kwargs setup()
would get, and the files the source patches leave (a nested checkout's
included); on a 3.8.0 tree, also the whole build.

  scripts/compare-with-setup-ascend.py TREE [--ascend-setup BIN]
      [--stub-llvm DIR] [--stub-json DIR] [--only kwargs|build] [--variant TEXT]

TREE holds setup_ascend.py (the merged entry: 3.6.0, or 3.8.0 when it imports
python.build_helpers) or the in-tree layer (3.7.0:
third_party/ascend/build/setup_patch.py, whose activate() hands setup() its
kwargs). Run it with the interpreter ascend-setup is to use (Debian's
/usr/bin/python3 here): both sides run setup.py with it. Nothing in TREE is
changed: each run works on copies under a temporary directory (`git clone` of
TREE for the checkout case, the files alone for the source-archive case).
With TRITON_BUILD_TD on, the distributed part's server is out of reach offline
and setup_ascend.py pins a commit only the real server has, so the kwargs of
those combinations are taken from a source archive with a stand-in
triton_dist package (both entries use the directory as it is there); the
patches are always compared on checkouts (setup_ascend.py cannot patch a
source archive: it runs `git checkout --`). What ascend-setup does on purpose
beyond setup_ascend.py is reported, not counted: the EggInfo command
(entry_points.txt in setup()'s order), the README's content type, package_data
for every triton_dist subpackage (setuptools applies an entry to its own
package only, so the merged wheel drops nested .pyi files), and a valid
version where setup_ascend.py's is not PEP 440 (a "+" suffix on a +git one:
ascend-setup follows upstream's rule). Prints one line per combination and
exits 1 when anything else differs.

The 3.8.0 entry: the kwargs and patches in six variants (default,
IS_MANYLINUX=1, suffix rc1, suffix +ci7, TRITON_BUILD_TD=ON,
TRITON_STABLE_ABI=1), then the build: their `python setup_ascend.py
bdist_wheel` and `ascend-setup bdist_wheel`, each on a fresh clone with its
own TRITON_HOME and a recording cmake first on PATH (`--version`: 3.28.3; a
configure call also runs python/build_helpers.py write_thirdparty_cmake_vars
as the 3.8 CMakeLists.txt does, so upstream's helper must resolve every
package without a download; every call succeeds otherwise) and
tests/stand_ins/auditwheel. Those six variants plus TRITON_APPEND_CMAKE_ARGS
naming -DTRITON_GSAN_CLANGXX, each with (a) LLVM_SYSPATH the stub LLVM,
offline, and (b) LLVM_SYSPATH unset, online, the Ascend LLVM package already
in the cache (its name and URL from their _get_ascend_llvm_package_info; a
bin/clang++ in it); and with (a), ASCENDNPU_IR_TAG set and set empty.
JSON_SYSPATH is the stub JSON always. Compared, tree and
cache paths normalised: the configure call whole, the build and install
calls, what upstream's helper wrote, the cache afterwards, the wheel (name,
members, modes, bytes) and the sources the build left. Reported, not counted,
beyond the above: -DTRITON_PARALLEL_LINK_JOBS and the build calls' -j
(ascend-setup's job sizing, when the environment sets neither), its fetch
lock in the cache, a wheel where setuptools refuses their version (the +ci7
dev build), and no -DASCENDNPU_IR_TAG= for an empty ASCENDNPU_IR_TAG (their
layer passes it; doc/upgrading.md lists it among the deliberate differences). With TRITON_BUILD_TD on, the stand-in distributed part is a
clone of its own: their _ensure_distributed_submodule() (which checks out
7786ae06) is replaced by a no-op and ascend-setup gets its profile with that
clone's HEAD as the pin.
"""
import argparse
import glob
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Runs setup_ascend.py's main() with setuptools.setup replaced by a printer of
# its kwargs in ascend-setup's --dump-kwargs JSON shape.
MERGED_DUMP = r"""
import json, runpy, sys, setuptools

def shape(value):
    if isinstance(value, type):
        module = "setup" if value.__module__ == "setup_triton" else value.__module__
        return module + "." + value.__qualname__
    if isinstance(value, dict):
        return {str(k): shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [shape(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    out = {"__class__": shape(type(value))}
    out.update({k: shape(v) for k, v in vars(value).items()})
    return out

def dump(**kwargs):
    print("@@KWARGS@@" + json.dumps(shape(kwargs)))
    sys.exit(0)

setuptools.setup = dump
sys.argv = ["setup_ascend.py", "--name"]
runpy.run_path("setup_ascend.py", run_name="__main__")
"""

# The in-tree layer: `python setup.py --name` with setuptools.setup replaced
# before setup.py runs, so that activate() wraps the printer.
IN_TREE_DUMP = MERGED_DUMP.split("setuptools.setup = dump")[0] + r"""
setuptools.setup = dump
sys.argv = ["setup.py", "--name"]
sys.path.insert(0, ".")
runpy.run_path("setup.py", run_name="__main__")
"""

# Their 3.7.0 layer runs `git checkout --` on every file a patch names,
# before applying it, inside the nested checkout too; git refuses a file the
# patch adds ("pathspec ... did not match"), so their own build fails there.
# The comparison restores only the files that exist (their 3.8.0 line's fix:
# tracked files only) and reports how many it left out.
IN_TREE_PATCH = r"""
import os, sys
sys.path.insert(0, ".")
from third_party.ascend.build import setup_patch
restore = setup_patch.checkout_file
def checkout_existing(files, *, cwd=None):
    kept = [f for f in files if os.path.exists(os.path.join(str(cwd or "."), f))]
    if len(kept) != len(files):
        print("@@SKIPPED@@ %d" % (len(files) - len(kept)), file=sys.stderr)
    if kept:
        restore(kept, cwd=cwd)
setup_patch.checkout_file = checkout_existing
setup_patch._apply_triton_ascend_patch()
"""

NESTED = "third_party/ascend/AscendNPU-IR"

MERGED_PATCH = r"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("setup_ascend_entry", "setup_ascend.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module._apply_triton_ascend_patch()
"""


def run(argv, cwd, env):
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)


# ascend-setup's own additions to setup_ascend.py's kwargs.
ADDITIONS = {("cmdclass", "egg_info"): "setup.EggInfo",
             ("cmdclass", "sdist"): "setup.Sdist",
             ("long_description_content_type",): "text/markdown"}


def normalise(kwargs, tree):
    """Paths of the copy become TREE; a command class is named by its own name
    (setup_ascend.py defines its subclasses inside a function), and so is an
    extension's class (setup.py is module `setup` there, `__main__` in
    ascend-setup, as `python setup.py` runs it)."""
    kwargs = json.loads(json.dumps(kwargs, sort_keys=True).replace(tree, "TREE"))
    commands = kwargs.get("cmdclass") or {}
    for key, value in commands.items():
        commands[key] = value.rsplit(".", 1)[-1]
    for extension in kwargs.get("ext_modules") or []:
        if isinstance(extension, dict) and "__class__" in extension:
            extension["__class__"] = extension["__class__"].rsplit(".", 1)[-1]
    return kwargs


def drop_additions(merged, ours):
    """Removes ADDITIONS from `ours` where `merged` has the upstream value."""
    noted = []
    for path, value in ADDITIONS.items():
        holder = ours
        for key in path[:-1]:
            holder = holder.get(key, {})
        if holder.get(path[-1]) == value.rsplit(".", 1)[-1] or holder.get(path[-1]) == value:
            source = merged
            for key in path[:-1]:
                source = source.get(key, {})
            if source.get(path[-1]) != holder.get(path[-1]):
                noted.append(".".join(path))
                if path[-1] in source:
                    holder[path[-1]] = source[path[-1]]
                else:
                    del holder[path[-1]]
    data = ours.get("package_data") or {}
    nested = [name for name in data if name.startswith("triton_dist.")]
    if nested and "triton_dist." not in json.dumps(merged.get("package_data")):
        noted.append("package_data of %d triton_dist subpackages" % len(nested))
        for name in nested:
            del data[name]
    if merged.get("version", "").count("+") > 1 and ours.get("version", "").count("+") == 1:
        noted.append("a PEP 440 version (merged: %s)" % merged["version"])
        ours["version"] = merged["version"]
    return noted


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


def compare_setup(tree, binary, env, label, archive, distributed, layers):
    """setup()'s kwargs (on a copy: a source archive when `archive`) and the
    patched files (on checkouts) of their layer and ascend-setup under `env`:
    one line; returns 1 when anything but ADDITIONS differs."""
    dump_layer, patch_layer = layers
    with tempfile.TemporaryDirectory() as work:
        merged, ours = os.path.join(work, "merged"), os.path.join(work, "ours")
        for dest in (merged, ours):
            make_copy(tree, dest, archive, distributed)
        patch_merged_tree, patch_ours_tree = (os.path.join(work, "pm"), os.path.join(work, "po"))
        for dest in (patch_merged_tree, patch_ours_tree):
            make_copy(tree, dest, False, False)
        merged_run = run([sys.executable, "-c", dump_layer], merged, env)
        # The interpreter running this script for both (else python3 on PATH).
        ours_run = run([binary, "--python", sys.executable, "--dump-kwargs"], ours, env)
        if "@@KWARGS@@" not in merged_run.stdout or ours_run.returncode != 0:
            print(f"{label}: could not run: merged rc {merged_run.returncode}\n"
                  f"{merged_run.stderr[-2000:]}\nours rc {ours_run.returncode}\n"
                  f"{ours_run.stderr[-2000:]}")
            return 1
        merged_kwargs = normalise(
            json.loads(merged_run.stdout.split("@@KWARGS@@", 1)[1].splitlines()[0]), merged)
        ours_kwargs = normalise(json.loads(ours_run.stdout), ours)
        additions = drop_additions(merged_kwargs, ours_kwargs)
        differing = sorted(k for k in set(merged_kwargs) | set(ours_kwargs)
                           if merged_kwargs.get(k) != ours_kwargs.get(k))

        patch_merged = run([sys.executable, "-c", patch_layer], patch_merged_tree, env)
        patch_ours = run([binary, "--apply-patches"], patch_ours_tree, env)
        if patch_merged.returncode != 0 or patch_ours.returncode != 0:
            print(f"{label}: patching failed: merged {patch_merged.stderr[-1500:]}"
                  f" ours {patch_ours.stderr[-1500:]}")
            return 1
        before = patched_files(tree)
        merged_files = patched_files(patch_merged_tree)
        ours_files = patched_files(patch_ours_tree)
        file_diff = sorted(k for k in set(merged_files) | set(ours_files)
                           if merged_files.get(k) != ours_files.get(k))
        changed = sorted(k for k in ours_files if before.get(k) != ours_files[k])
        skipped = sum(int(line.split()[1]) for line in patch_merged.stderr.splitlines()
                      if line.startswith("@@SKIPPED@@"))
        if skipped:
            additions.append(f"(their restore of {skipped} file(s) a patch adds skipped)")
        mode = next((line for line in patch_ours.stderr.splitlines() if "build:" in line), "")
        mode = mode.split("Ascend patches (")[-1].split("):")[0]
        print(f"{label}: kwargs {'equal' if not differing else 'DIFFER in ' + ', '.join(differing)}"
              f" (version {ours_kwargs.get('version')}, {len(ours_kwargs.get('packages', []))}"
              f" packages; ascend-setup adds {', '.join(additions) or 'nothing'});"
              f" patched files {'equal' if not file_diff else 'DIFFER: ' + ', '.join(file_diff[:5])}"
              f" ({len(changed)} changed; {mode})")
        for key in differing[:3]:
            print(f"  {key}: merged {json.dumps(merged_kwargs.get(key))[:300]}")
            print(f"  {key}: ours   {json.dumps(ours_kwargs.get(key))[:300]}")
        return int(bool(differing or file_diff))


def run_older_lines(tree, binary, base_env, in_tree):
    """The 3.6.0 merged entry and the 3.7.0 in-tree layer: the kwargs and
    patched files in every combination of the three switches."""
    layers = (IN_TREE_DUMP, IN_TREE_PATCH) if in_tree else (MERGED_DUMP, MERGED_PATCH)
    combos = [c + (None,) for c in itertools.product([None, "1"], [None, "rc1", "+ci7"],
                                                     ["OFF", "ON"])]
    if in_tree:
        combos += [(None, None, "OFF", "ubuntu-arm64"), ("1", None, "OFF", "almalinux-x64")]
    failures = 0
    for manylinux, suffix, td, llvm_suffix in combos:
        env = dict(base_env, TRITON_BUILD_TD=td)
        if llvm_suffix:
            env["TRITON_LLVM_SYSTEM_SUFFIX"] = llvm_suffix
        if manylinux:
            env["IS_MANYLINUX"] = manylinux
        if suffix:
            env["TRITON_WHEEL_VERSION_SUFFIX"] = suffix
        archive = td == "ON"  # for the kwargs; patches always on checkouts
        label = (f"IS_MANYLINUX={manylinux or '-'} SUFFIX={suffix or '-'} TD={td}"
                 f"{' LLVM_SUFFIX=' + llvm_suffix if llvm_suffix else ''}"
                 f" ({'source archive' if archive else 'git checkout'})")
        failures += compare_setup(tree, binary, env, label, archive, td == "ON", layers)
    return failures


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
ON_VALUES = ("ON", "1", "YES", "TRUE", "Y")

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


def run_line380(tree, binary, base_env, args):
    failures = 0
    if args.only != "build":
        layers = (MERGED_DUMP, MERGED_PATCH)
        for name, variant_env in LINE380_VARIANTS:
            archive = variant_env.get("TRITON_BUILD_TD") == "ON"
            label = f"kwargs {name} ({'source archive' if archive else 'git checkout'})"
            if args.variant not in label:
                continue
            failures += compare_setup(tree, binary, dict(base_env, **variant_env), label, archive,
                                      archive, layers)
    if args.only == "kwargs":
        return failures
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


def layer_line(tree):
    """"in-tree" (3.7.0), "3.8.0" (setup_ascend.py importing python.build_helpers)
    or "merged" (the 3.6.0 entry)."""
    if os.path.isfile(os.path.join(tree, "third_party/ascend/build/setup_patch.py")):
        return "in-tree"
    with open(os.path.join(tree, "setup_ascend.py"), encoding="utf-8") as entry:
        if re.search(r"^import python\.build_helpers\b", entry.read(), re.M):
            return "3.8.0"
    return "merged"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree")
    parser.add_argument("--ascend-setup", default=os.path.join(HERE, "..", "build", "ascend-setup"))
    parser.add_argument("--stub-llvm", default=os.path.join(HERE, "..", "examples", "stub-llvm"),
                        help="3.8.0: the LLVM given as LLVM_SYSPATH")
    parser.add_argument("--stub-json", default=os.path.join(HERE, "..", "examples", "stub-json"),
                        help="3.8.0: the JSON package given as JSON_SYSPATH")
    parser.add_argument("--only", choices=["kwargs", "build"],
                        help="3.8.0: one of the two comparisons")
    parser.add_argument("--variant", default="",
                        help="3.8.0: only the combinations whose label holds this text")
    args = parser.parse_args()
    tree = os.path.abspath(args.tree)
    binary = os.path.abspath(args.ascend_setup)
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("TRITON_", "IS_MANYLINUX", "ASCEND_SETUP", "ASCENDNPU_IR_TAG"))}
    base_env.update({"LLVM_SYSPATH": "/nonexistent-llvm", "TRITON_OFFLINE_BUILD": "1"})
    line = layer_line(tree)
    if line != "3.8.0":
        failures = run_older_lines(tree, binary, base_env, line == "in-tree")
    else:
        failures = run_line380(tree, binary, base_env, args)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
