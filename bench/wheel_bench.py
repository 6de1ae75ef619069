"""The no-op bdist_wheel with a libtriton-sized extension, side by side in one
run (bench/run wheel):

  ascend-setup          ascend-setup bdist_wheel (native writer: unchanged
                        entries copied from the previous wheel, the rest
                        deflated by libdeflate on every core; hard links into
                        the bdist directory)
  ascend-setup/wheelpkg the same with ASCEND_SETUP_NATIVE_WHEEL=0 (the wheel
                        package's WheelFile and setuptools' copies)
  python3 setup.py      upstream's own `python3 setup.py bdist_wheel` on its
                        own copy of the same tree (the packing the Python
                        entry uses)

Each tree is built once, then its built extension (build/lib*/triton/_C/
libtriton.so, where build_ext puts it) is replaced by a 389 MiB file made of
system libraries (libLLVM and friends: compressible as a debug-info libtriton
is, about 3.3 : 1), one bdist_wheel packs it once, and then: a no-op
bdist_wheel (median of BENCH_RUNS, runs alternating), and one after editing a
Python file. Wall time and peak RSS (/usr/bin/time: the largest process of
the run) and the wheel's size; ratios against python3 setup.py. Targets:
wall <= 0.25, peak <= 150 MB, wheel <= 1.02 x.

Then the no-op's pack phase alone (the native writer's wall and CPU time, from
its info line) side by side with `sha256sum` of the files it packs (the bdist
directory, kept by one more run with --keep-temp) and with `openssl dgst
-sha256` (OpenSSL, the SHA-256 the writer uses: SHA instructions where the
CPU has them; Debian 12's sha256sum has its own portable code): wall time,
CPU time per packed byte, and the ratios. Target: both <= 1.5 x sha256sum.

    python3 bench/wheel_bench.py --binary build/ascend-setup [--runs 3]
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "triton-3.6")
SIZE = 389 << 20
SOURCES = ["/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
           "/usr/lib/llvm-14/lib/libclang-cpp.so.14", "/usr/lib/x86_64-linux-gnu/libclang-14.so.14.0.6",
           "/usr/lib/x86_64-linux-gnu/libz3.so.4", "/usr/lib/x86_64-linux-gnu/libx265.so.199"]
# setup_ascend.py's defaults (bench/python_entry.py), for upstream's own run.
DEFAULTS = {"TRITON_BUILD_WITH_CCACHE": "true", "TRITON_BUILD_WITH_CLANG_LLD": "true",
            "TRITON_BUILD_PROTON": "OFF", "TRITON_APPEND_CMAKE_ARGS": "-DTRITON_BUILD_UT=OFF"}


def big_extension(path):
    """SIZE bytes of system libraries, in a fixed order."""
    written = 0
    with open(path + ".tmp", "wb") as out:
        while written < SIZE:
            for source in SOURCES:
                if not os.path.exists(source):
                    continue
                with open(source, "rb") as f:
                    while written < SIZE:
                        block = f.read(min(1 << 20, SIZE - written))
                        if not block:
                            break
                        out.write(block)
                        written += len(block)
    os.replace(path + ".tmp", path)


def run(argv, cwd, env):
    """(wall seconds, peak RSS in MB) of one run; exits on failure."""
    report = os.path.join(tempfile.gettempdir(), f"wheel-bench-time-{os.getpid()}")
    result = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", report] + argv, cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({result.returncode}):\n{result.stderr.decode()[-4000:]}")
    with open(report) as f:
        wall, rss = f.read().split()[-2:]
    os.remove(report)
    return float(wall), int(rss) / 1024.0, result.stderr.decode()


PACK_LINE = re.compile(r"wheel \S+: (\d+) entries, (\d+) compressed, (\d+) reused from the "
                       r"previous wheel, (\d+) deflate threads? \(([\d.]+) s, ([\d.]+) s of CPU\)")


def pack_figures(err):
    """(entries, compressed, reused, threads, wall s, CPU s) of the native writer's info line."""
    found = PACK_LINE.findall(err)
    if not found:
        sys.exit("no pack line in ascend-setup's log:\n" + err[-2000:])
    e, c, r, t, wall, cpu = found[-1]
    return int(e), int(c), int(r), int(t), float(wall), float(cpu)


def timed(argv):
    """(wall, user + system CPU seconds) of one run of argv, its output dropped."""
    report = os.path.join(tempfile.gettempdir(), f"wheel-bench-hash-{os.getpid()}")
    subprocess.run(["/usr/bin/time", "-f", "%e %U %S", "-o", report] + argv,
                   stdout=subprocess.DEVNULL, check=True)
    with open(report) as f:
        wall, user, system = f.read().split()[-3:]
    os.remove(report)
    return float(wall), float(user) + float(system)


def wheel_of(tree):
    dist = os.path.join(tree, "dist")
    wheels = [w for w in os.listdir(dist) if w.endswith(".whl")]
    if len(wheels) != 1:
        sys.exit(f"{dist}: {wheels}")
    return os.path.join(dist, wheels[0])


def extension_of(tree):
    build = os.path.join(tree, "build")
    for name in sorted(os.listdir(build)):
        candidate = os.path.join(build, name, "triton", "_C", "libtriton.so")
        if name.startswith("lib") and os.path.exists(candidate):
            return candidate
    sys.exit(f"no built libtriton.so under {build}")


def pack_versus_sha256(tree, command, packs, runs):
    """The no-op's pack phase against sha256sum (and openssl) of the files it packs."""
    argv, run_env = command
    run(argv + ["--keep-temp"], tree, run_env)
    bdists = glob.glob(os.path.join(tree, "build", "bdist.*", "wheel"))
    if len(bdists) != 1:
        sys.exit(f"no kept bdist directory under {tree}/build: {bdists}")
    files = sorted(os.path.join(root, name) for root, _, names in os.walk(bdists[0])
                   for name in names if os.path.isfile(os.path.join(root, name)))
    packed = sum(os.path.getsize(f) for f in files)
    hashers = {"sha256sum": ["sha256sum"] + files,
               "openssl dgst -sha256": ["openssl", "dgst", "-sha256"] + files}
    figures = {}
    for label, hasher in hashers.items():
        timed(hasher)  # the page cache warm, as for the pack
        measured = [timed(hasher) for _ in range(runs)]
        figures[label] = (statistics.median(w for w, _ in measured),
                          statistics.median(c for _, c in measured))
    entries, compressed, reused, threads, _, _ = packs[-1]
    figures["no-op pack phase"] = (statistics.median(p[4] for p in packs),
                                   statistics.median(p[5] for p in packs))
    base_wall, base_cpu = figures["sha256sum"]
    print(f"\nno-op pack phase vs hashing the {len(files)} packed files ({packed / 2**20:.0f} MiB; "
          f"{entries} entries, {reused} reused, {compressed} compressed; {threads} threads; "
          f"median of {runs})")
    print(f"{'':24}{'wall s':>9}{'CPU s':>9}{'CPU ns/B':>10}{'wall/sha256sum':>16}"
          f"{'CPU/B/sha256sum':>17}")
    for label in ("no-op pack phase", "sha256sum", "openssl dgst -sha256"):
        wall, cpu = figures[label]
        print(f"{label:24}{wall:9.3f}{cpu:9.3f}{cpu / packed * 1e9:10.3f}"
              f"{wall / base_wall:16.2f}{cpu / base_cpu:17.2f}")
    shutil.rmtree(bdists[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", help="work in this directory and keep it")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="wheel-bench-")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ)
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "IS_MANYLINUX", "SOURCE_DATE_EPOCH",
                 "ASCEND_SETUP_LOG_LEVEL", "ASCEND_SETUP_NATIVE_WHEEL"):
        env.pop(name, None)
    env.update({"LLVM_SYSPATH": os.path.join(ROOT, "examples", "stub-llvm"),
                "TRITON_OFFLINE_BUILD": "1", "TRITON_HOME": os.path.join(work, "home"),
                "MAX_JOBS": env.get("MAX_JOBS", "2"),
                # python3 on PATH is the interpreter running the bench (as in the tests)
                "PATH": os.path.dirname(sys.executable) + ":" + env.get("PATH", "/usr/bin:/bin")})
    python_env = dict(env, **DEFAULTS)
    ignore = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__")
    trees = {}
    commands = {
        "ascend-setup": ([os.path.abspath(args.binary), "bdist_wheel"], env),
        "ascend-setup/wheelpkg": ([os.path.abspath(args.binary), "bdist_wheel"],
                                  dict(env, ASCEND_SETUP_NATIVE_WHEEL="0")),
        "python3 setup.py": ([sys.executable, "setup.py", "bdist_wheel"], python_env),
    }
    print(f"work: {work}; {os.cpu_count()} cores; extension {SIZE >> 20} MiB", flush=True)
    for label in commands:
        tree = os.path.join(work, label.replace("/", "-").replace(" ", "-"))
        if not os.path.exists(tree):
            shutil.copytree(EXAMPLE, tree, symlinks=True, ignore=ignore)
        argv, run_env = commands[label]
        wall, _, _ = run(argv, tree, run_env)
        print(f"{label}: first build {wall:.1f} s", flush=True)
        big_extension(extension_of(tree))
        wall, rss, _ = run(argv, tree, run_env)
        print(f"{label}: first pack of the {SIZE >> 20} MiB extension {wall:.1f} s, "
              f"peak {rss:.0f} MB, wheel {os.path.getsize(wheel_of(tree)) / 1e6:.1f} MB", flush=True)
        trees[label] = tree

    def table(title, results):
        base_wall, base_rss, base_size = results["python3 setup.py"]
        print(f"\n{title}")
        print(f"{'':24}{'wall s':>9}{'peak MB':>10}{'wheel MB':>10}{'wall/py':>9}{'wheel/py':>10}")
        for label, (wall, rss, size) in results.items():
            print(f"{label:24}{wall:9.2f}{rss:10.0f}{size / 1e6:10.1f}"
                  f"{wall / base_wall:9.2f}{size / base_size:10.3f}")

    samples = {label: [] for label in commands}
    packs = []
    for _ in range(args.runs):
        for label, (argv, run_env) in commands.items():
            wall, rss, err = run(argv, trees[label], run_env)
            samples[label].append((wall, rss))
            if label == "ascend-setup":
                summary = [line for line in err.splitlines() if "build summary" in line]
                packs.append(pack_figures(err))
    table(f"no-op bdist_wheel (median of {args.runs})",
          {label: (statistics.median(w for w, _ in s), max(r for _, r in s),
                   os.path.getsize(wheel_of(trees[label]))) for label, s in samples.items()})
    print("ascend-setup's summary:\n  " + "\n  ".join(summary))
    pack_versus_sha256(trees["ascend-setup"], commands["ascend-setup"], packs, args.runs)

    results = {}
    for label, (argv, run_env) in commands.items():
        init = os.path.join(trees[label], "python", "triton", "__init__.py")
        with open(init, "a") as f:
            f.write("# an edit\n")
        wall, rss, err = run(argv, trees[label], run_env)
        results[label] = (wall, rss, os.path.getsize(wheel_of(trees[label])))
        if label == "ascend-setup":
            summary = [line for line in err.splitlines() if "build summary" in line]
    table("bdist_wheel after editing python/triton/__init__.py", results)
    print("ascend-setup's summary:\n  " + "\n  ".join(summary))
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
