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
TRITON_STABLE_ABI=1) here, then the whole build with a recording cmake in
compare_layer_builds.py beside this script (--stub-llvm and --stub-json name
the LLVM and JSON packages the builds are given; --only kwargs|build runs one
of the two comparisons, --variant only the combinations whose label holds its
text).
"""
import argparse
import itertools
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from compare_layer_builds import (LINE380_VARIANTS, compare_builds,
                                  make_copy, patched_files, run)

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

MERGED_PATCH = r"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("setup_ascend_entry", "setup_ascend.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module._apply_triton_ascend_patch()
"""


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
    return failures + compare_builds(tree, binary, base_env, args)


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