"""A CI matrix of four builds of the example tree, with the shared compile cache
against without it: four checkout directories (at different depths), four
HOMEs (each with its own copy of the LLVM package under .triton), four empty
local ccache directories, and, for the shared cache, one redis-server on
loopback. Each build is a cold bdist_wheel with debug info (REL_WITH_DEB_INFO),
one after the other (a CI matrix runs them on separate machines; this one has
few cores). Prints, side by side, the compiler runs of each job (ccache's
misses from the build's stats log; without the cache every object compiled)
and its wall time.
"""
import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time

from download_bench import free_port, wait_for_port  # the loopback helpers, one home

JOBS = 4


def job(work, root, binary, mode, index, url):
    base = os.path.join(work, mode, f"job{index}")
    parent = os.path.join(base, *[f"d{i}" for i in range(index + 1)])
    tree = os.path.join(parent, "triton")
    shutil.copytree(os.path.join(root, "examples", "triton-3.6"), tree)
    home = os.path.join(base, "home")
    llvm = os.path.join(home, ".triton", "llvm", "llvm-stub")
    shutil.copytree(os.path.join(root, "examples", "stub-llvm"), llvm)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCACHE_", "ASCEND_SETUP_", "DISTCC"))}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "CFLAGS", "CXXFLAGS"):
        env.pop(name, None)
    env.update({"HOME": home, "TRITON_HOME": home, "LLVM_SYSPATH": llvm, "TRITON_OFFLINE_BUILD": "1",
                "CCACHE_DIR": os.path.join(base, "ccache"), "REL_WITH_DEB_INFO": "1",
                "SOURCE_DATE_EPOCH": "1700000000"})
    if url:
        env["ASCEND_SETUP_COMPILE_CACHE"] = url
    start = time.monotonic()
    result = subprocess.run([binary, "--python", "/usr/bin/python3", "bdist_wheel"], cwd=tree, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit(f"{mode} job {index} failed:\n{result.stderr[-3000:]}")
    objects = int(re.search(r"build summary: (\d+) objects compiled", result.stderr).group(1))
    cache = re.search(r"compile cache (\d+) hits \((\d+) local, (\d+) remote\), (\d+) misses", result.stderr)
    compiler_runs = int(cache.group(4)) if cache else objects
    remote_hits = int(cache.group(3)) if cache else 0
    return {"objects": objects, "compiler_runs": compiler_runs, "remote_hits": remote_hits, "wall": wall}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not shutil.which("redis-server") or not shutil.which("ccache"):
        raise SystemExit("compile-cache bench: needs redis-server and ccache")
    work = tempfile.mkdtemp(prefix="ascend-setup-cache-bench-")
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                              "--appendonly", "no", "--dir", work],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if not wait_for_port(port, 10):
            raise SystemExit("compile-cache bench: redis-server did not start")
        results = {"without": [], "with": []}
        for index in range(JOBS):
            results["without"].append(job(work, root, args.binary, "without", index, None))
        for index in range(JOBS):
            results["with"].append(job(work, root, args.binary, "with", index, f"redis://127.0.0.1:{port}"))
        print(f"CI matrix: {JOBS} cold builds of the example tree (4 directories, 4 HOMEs, empty local "
              f"ccache each), -g")
        print(f"{'job':<6}{'compiler runs':>28}{'remote hits':>14}{'wall s':>22}")
        print(f"{'':<6}{'without':>14}{'shared':>14}{'shared':>14}{'without':>11}{'shared':>11}")
        for index in range(JOBS):
            a, b = results["without"][index], results["with"][index]
            print(f"{index + 1:<6}{a['compiler_runs']:>14}{b['compiler_runs']:>14}{b['remote_hits']:>14}"
                  f"{a['wall']:>11.1f}{b['wall']:>11.1f}")
        total = lambda mode, key: sum(r[key] for r in results[mode])
        print(f"{'all':<6}{total('without', 'compiler_runs'):>14}{total('with', 'compiler_runs'):>14}"
              f"{total('with', 'remote_hits'):>14}{total('without', 'wall'):>11.1f}{total('with', 'wall'):>11.1f}")
    finally:
        os.killpg(redis.pid, 15)
        redis.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
