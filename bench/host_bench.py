"""ascend-setup's own cost, printed side by side in one run (bench/run host).

1. The host's work: `ascend-setup --dump-kwargs` (launcher, host start, profile,
   interpreter, setup.py, overrides, kwargs rewrite, JSON) against the Python
   entry it replaces (bench/python_entry.py: setup_ascend.py's main() up to
   setup(), kwargs printed as JSON), and against the irreducible part: a plain
   python3 executing the same setup.py with setuptools.setup stubbed, both on
   Debian's libpython3.X.so (bench/python_on_libpython) and as /usr/bin/python3
   (built with LTO and PGO: its shared library runs Python code about 20%
   slower). The host runs in /usr/bin/python3 itself, as an extension module
   (its executable carries the interpreter: src/base/launch/launcher.hpp), so
   the last line is its irreducible part. On a copy of the tree (its .git
   included, build outputs left out); one warm-up run of each first, so that
   both keep setup.py's compiled code as a developer's second run does (the
   entry in __pycache__, the host in build/ascend-setup; PYTHONDONTWRITEBYTECODE
   is unset for every command). Runs alternate; medians are compared. The
   ratio host / Python entry is the target (<= 0.85 wall). BENCH_INSTRUCTIONS=1
   adds instruction counts (valgrind's callgrind: the launcher up to its exec
   and the interpreter it execs, every thread; child processes such as
   setup.py's git calls counted for neither), which the machine's noise does
   not blur.
2. On the example tree only (a real triton-ascend tree cannot build offline):
   a first `ascend-setup bdist_wheel` against a rebuild with nothing changed,
   with the number of recompiled objects and of source files given a new mtime.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The wall ratio host / Python entry the host must stay under.
TARGET = 0.85

STUB_SETUP = """
import os, runpy, sys, setuptools
setuptools.setup = lambda **kwargs: None
tree = sys.argv[1]
os.chdir(tree)
sys.path.insert(0, tree)
sys.argv = ["setup.py", "--name"]
runpy.run_path("setup.py", run_name="setup")
"""


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv, cwd, env):
    """Wall time and CPU time (user + system) of one run."""
    cpu = cpu_of_children()
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{argv[0]} failed ({result.returncode}):\n{result.stderr.decode()}")
    return elapsed, cpu_of_children() - cpu


def instructions(argv, cwd, env):
    """Instructions of the command's own process (callgrind), across exec: the
    part before an exec is dumped to a file of its own (--dump-before=execv;
    callgrind's summary at exit counts only the last program). The forked
    children's dumps (setup.py's git calls, before their exec) are other pids'."""
    with tempfile.TemporaryDirectory(prefix="ascend-setup-callgrind-") as out:
        err = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p",
                              "--dump-before=execv", "--trace-children=yes",
                              "--trace-children-skip=*/git,*/git-*,*/sh,*/uname"]
                             + argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True).stderr
        main_pid = err.split("==", 2)[1]
        total = 0
        for name in os.listdir(out):
            if name == f"cg.{main_pid}" or name.startswith(f"cg.{main_pid}."):
                with open(os.path.join(out, name)) as f:
                    total += sum(int(line.split()[1]) for line in f if line.startswith("totals:"))
        return total


def mtimes(root, want):
    found = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if want(os.path.join(directory, d), True)]
        for name in files:
            path = os.path.join(directory, name)
            if want(path, False):
                found[path] = os.lstat(path).st_mtime_ns
    return found


def changed(before, after):
    return sum(1 for path, stamp in after.items() if before.get(path) != stamp)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--tree", required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--python-on-libpython", required=True)
    parser.add_argument("--no-example", dest="example", action="store_false",
                        help="a real tree (BENCH_TREE): no first build and rebuild timing")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    work = tempfile.mkdtemp(prefix="ascend-setup-bench-")
    try:
        tree = os.path.join(work, "tree")
        shutil.copytree(args.tree, tree, symlinks=True,
                        ignore=lambda d, names: [n for n in names if n in ("build", "dist", "__pycache__")
                                                 or n.endswith(".egg-info")])
        env = dict(os.environ)
        for name in ("VIRTUAL_ENV", "ASCEND_SETUP_LOG_LEVEL", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"):
            env.pop(name, None)
        env.update({
            "LLVM_SYSPATH": env.get("LLVM_SYSPATH", os.path.join(root, "examples", "stub-llvm")),
            "TRITON_OFFLINE_BUILD": "1",
            "TRITON_HOME": os.path.join(work, "home"),
            "MAX_JOBS": str(os.cpu_count()),
        })
        # The Ascend defaults, so that both runs see the same environment.
        for name, value in (("TRITON_BUILD_WITH_CCACHE", "true"), ("TRITON_BUILD_WITH_CLANG_LLD", "true"),
                            ("TRITON_BUILD_PROTON", "OFF"), ("TRITON_WHEEL_NAME", "triton-ascend"),
                            ("TRITON_BUILD_DISTRIBUTED", "OFF"),
                            ("TRITON_APPEND_CMAKE_ARGS", "-DTRITON_BUILD_UT=OFF")):
            env.setdefault(name, value)

        python_entry = os.path.join(root, "bench", "python_entry.py")
        commands = {
            "ascend-setup --dump-kwargs": [args.binary, "--python", "/usr/bin/python3", "--dump-kwargs"],
            "python3 setup_ascend.py-like entry (python_entry.py)": ["/usr/bin/python3", python_entry, tree],
            "python3 on libpython3.X.so, setup() stubbed":
                [args.python_on_libpython, "/usr/bin/python3", "-c", STUB_SETUP, tree],
            "/usr/bin/python3 (LTO+PGO), setup() stubbed": ["/usr/bin/python3", "-c", STUB_SETUP, tree],
        }
        for argv in commands.values():  # warm-up: compiled setup.py kept by both
            timed(argv, tree, env)
        runs = {label: [] for label in commands}
        for _ in range(args.runs):
            for label, argv in commands.items():
                runs[label].append(timed(argv, tree, env))
        median = lambda label, i: statistics.median(run[i] for run in runs[label])
        counts = {}
        if os.environ.get("BENCH_INSTRUCTIONS") == "1" and shutil.which("valgrind"):
            counts = {label: instructions(argv, tree, env) for label, argv in commands.items()}
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print(f"host's own work: {args.tree}, {args.runs} alternating runs each (medians), "
              f"load average {load} at the end, {os.cpu_count()} cores")
        print(f"  {'':52} {'wall ms':>9} {'cpu ms':>9}" + (f" {'instructions':>14}" if counts else ""))
        for label in commands:
            print(f"  {label:52} {median(label, 0) * 1000:9.1f} {median(label, 1) * 1000:9.1f}"
                  + (f" {counts[label]:14,d}" if counts else ""))
        host, entry, same, lto = commands
        for base in (entry, same, lto):
            line = (f"  ratio host / {base.split(',')[0]}: wall {median(host, 0) / median(base, 0):.3f}, "
                    f"cpu {median(host, 1) / median(base, 1):.3f}")
            if counts:
                line += f", instructions {counts[host] / counts[base]:.3f}"
            print(line)
        wall = median(host, 0) / median(entry, 0)
        print(f"  target: host / Python entry <= {TARGET:.2f} wall: {wall:.3f}, "
              f"{'met' if wall <= TARGET else 'NOT met'}")
        if not args.example:
            return

        is_source = lambda path, is_dir: not (is_dir and os.path.basename(path) in
                                              ("build", "dist", ".git")) and ".egg-info" not in path
        is_build = lambda path, is_dir: is_dir or path.endswith(".o")
        (first, _) = timed([args.binary, "--python", "/usr/bin/python3", "bdist_wheel"], tree, env)
        sources = mtimes(tree, is_source)
        objects = mtimes(os.path.join(tree, "build"), is_build)
        (again, _) = timed([args.binary, "--python", "/usr/bin/python3", "bdist_wheel"], tree, env)
        print(f"bdist_wheel of {args.tree} in a fresh copy ({len(objects)} objects)")
        print(f"  {'':44} {'wall':>9} {'objects compiled':>17} {'sources touched':>16}")
        print(f"  {'first build':44} {first:8.2f}s {len(objects):17d} {'-':>16}")
        print(f"  {'rebuild, nothing changed':44} {again:8.2f}s "
              f"{changed(objects, mtimes(os.path.join(tree, 'build'), is_build)):17d} "
              f"{changed(sources, mtimes(tree, is_source)):16d}")
        print(f"  ratio rebuild / first build: {again / first:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
