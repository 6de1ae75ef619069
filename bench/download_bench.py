"""The LLVM download, three ways, printed side by side in one run (bench/run download).

A package of --megabytes (default 120) of incompressible data, tar.gz, is
served by nginx (Debian's nginx-light) started here on 127.0.0.1 with
`limit_rate 2500k` per connection (the artifact server's 2.5 MB/s). Each way
ends with the package unpacked in a fresh cache directory:

1. ascend-setup: the built binary runs `build_ext` on a copy of the example
   tree whose profile points the LLVM URL at nginx (LLVM_SYSPATH and
   TRITON_OFFLINE_BUILD unset); its override fetches the package with the
   downloader (8 range requests) and unpacks it; a cmake stand-in that only
   answers --version then ends the run (no compile is timed).
2. upstream's way, written here as upstream's get_thirdparty_packages does it:
   urllib.request.urlopen(url, timeout=300) streamed into tarfile.open(mode="r|*").
3. the maintainers' way: `curl -fL -C - --retry 5 --connect-timeout 30
   --max-time 1000 -o <tmp> URL`, then `tar -xzf`.

Then the resumed case: ascend-setup is SIGKILLed once 40% has arrived and run
again; nginx's access log gives the bytes sent to both runs together, against
the package's size. Targets: ascend-setup <= 0.2 x curl's wall time; resumed
<= 1.15 x the package's bytes.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

UPSTREAM_URL = "https://triton-ascend-artifacts.obs.myhuaweicloud.com/llvm-builds/{name}.tar.gz"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.02)
    return False


class Nginx:
    def __init__(self, work, www, limit_rate):
        self.dir = os.path.join(work, "nginx")
        os.makedirs(self.dir)
        self.port = free_port()
        temps = "".join(f"  {t}_temp_path {self.dir}/{t}_temp;\n"
                        for t in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        conf = (f"daemon off;\nmaster_process off;\npid {self.dir}/nginx.pid;\n"
                f"error_log {self.dir}/error.log warn;\nevents {{ worker_connections 256; }}\n"
                "http {\n  log_format bytes '$status $body_bytes_sent';\n"
                f"  access_log {self.dir}/access.log bytes;\n{temps}"
                f"  server {{\n    listen 127.0.0.1:{self.port};\n    root {www};\n"
                f"    limit_rate {limit_rate};\n  }}\n}}\n")
        with open(os.path.join(self.dir, "nginx.conf"), "w") as f:
            f.write(conf)
        self.process = subprocess.Popen(
            ["/usr/sbin/nginx", "-p", self.dir, "-e", f"{self.dir}/error.log",
             "-c", f"{self.dir}/nginx.conf"], start_new_session=True)
        if not wait_for_port(self.port, 10):
            self.stop()
            sys.exit("nginx did not start: " + open(f"{self.dir}/error.log").read())

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def bytes_sent(self):
        total = 0
        with open(f"{self.dir}/access.log") as f:
            for line in f:
                total += int(line.split()[1])
        return total

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def make_package(www, name, megabytes):
    source = os.path.join(www, "..", "package-source")
    os.makedirs(os.path.join(source, name, "lib"))
    os.makedirs(os.path.join(source, name, "include", "llvm", "Config"))
    with open(os.path.join(source, name, "include", "llvm", "Config", "llvm-config.h"), "w") as f:
        f.write("#define LLVM_VERSION_MAJOR 22\n")
    with open(os.path.join(source, name, "lib", "payload.bin"), "wb") as f:
        for _ in range(megabytes):
            f.write(os.urandom(1 << 20))
    tarball = os.path.join(www, name + ".tar.gz")
    subprocess.run(["tar", "-czf", tarball, "-C", source, name], check=True)
    return tarball


class AscendSetupRun:
    """ascend-setup build_ext on a copy of the example tree, its LLVM URL at nginx."""

    def __init__(self, root, binary, work, base_url, name):
        self.binary = os.path.abspath(binary)
        self.tree = os.path.join(work, "tree")
        shutil.copytree(os.path.join(root, "examples", "triton-3.6"), self.tree, symlinks=True)
        with open(os.path.join(root, "profiles", "triton-ascend-3.6.0.toml")) as f:
            profile = f.read()
        for old, new in [('name = "llvm-{rev}-{patch_hash}-{suffix}"', f'name = "{name}"'),
                         (UPSTREAM_URL, base_url + "/{name}.tar.gz")]:
            assert old in profile, old
            profile = profile.replace(old, new, 1)
        self.profile = os.path.join(work, "profile.toml")
        with open(self.profile, "w") as f:
            f.write(profile)
        bin_dir = os.path.join(work, "bin")
        os.makedirs(bin_dir)
        with open(os.path.join(bin_dir, "cmake"), "w") as f:
            f.write("#!/bin/sh\ncase \"$1\" in --version) echo 'cmake version 3.25.1' ;; "
                    "*) exit 1 ;; esac\n")
        os.chmod(os.path.join(bin_dir, "cmake"), 0o755)
        self.env = dict(os.environ)
        for var in ("LLVM_SYSPATH", "TRITON_OFFLINE_BUILD", "VIRTUAL_ENV", "http_proxy",
                    "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
            self.env.pop(var, None)
        self.env["PATH"] = bin_dir + ":/usr/bin:" + os.environ["PATH"]  # Debian python3 (pybind11)
        self.env["MAX_JOBS"] = "2"
        # The NVIDIA tools upstream's download_and_copy_dependencies fetches are
        # not the subject (the newer layer skips them): given, so not fetched.
        for tool in ("PTXAS", "CUOBJDUMP", "NVDISASM"):
            self.env[f"TRITON_{tool}_PATH"] = "/bin/true"

    def start(self, home):
        env = dict(self.env, TRITON_HOME=home, ASCEND_SETUP_LOG_LEVEL="warn")
        return subprocess.Popen([self.binary, "--profile", self.profile, "build_ext"],
                                cwd=self.tree, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)


def check_unpacked(package_dir, url, megabytes):
    size = os.path.getsize(os.path.join(package_dir, "lib", "payload.bin"))
    assert size == megabytes << 20, (package_dir, size)
    version = os.path.join(package_dir, "version.txt")
    if os.path.exists(version):
        assert open(version).read() == url


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--megabytes", type=int, default=120)
    parser.add_argument("--limit-rate", default="2500k")
    args = parser.parse_args()
    name = "llvm-bench"
    work = tempfile.mkdtemp(prefix="download-bench-")
    nginx = None
    try:
        www = os.path.join(work, "www")
        os.makedirs(www)
        tarball = make_package(www, name, args.megabytes)
        size = os.path.getsize(tarball)
        nginx = Nginx(work, www, args.limit_rate)
        url = nginx.url(name + ".tar.gz")
        base = url.rsplit("/", 1)[0]
        run = AscendSetupRun(os.path.abspath(args.root), args.binary, work, base, name)
        print(f"package: {size / 1e6:.1f} MB tar.gz, nginx limit_rate {args.limit_rate} per "
              f"connection, 127.0.0.1", flush=True)

        # 1. ascend-setup.
        home = os.path.join(work, "home-ascend")
        start = time.monotonic()
        process = run.start(home)
        _, err = process.communicate(timeout=3600)
        ours = time.monotonic() - start
        if not os.path.isdir(os.path.join(home, ".triton", "llvm", name)):
            sys.exit("ascend-setup did not fetch the package:\n" + err)
        check_unpacked(os.path.join(home, ".triton", "llvm", name), url, args.megabytes)

        # 2. upstream's way: urllib streamed into tarfile.
        target = os.path.join(work, "home-upstream", ".triton", "llvm")
        os.makedirs(target)
        start = time.monotonic()
        with urllib.request.urlopen(url, timeout=300) as response:
            with tarfile.open(fileobj=response, mode="r|*") as archive:
                archive.extractall(path=target)
        upstream = time.monotonic() - start
        check_unpacked(os.path.join(target, name), url, args.megabytes)

        # 3. the maintainers' way: curl -C - into a temporary file, then tar.
        target = os.path.join(work, "home-curl", ".triton", "llvm")
        os.makedirs(target)
        temporary = os.path.join(work, "curl.tar.gz")
        start = time.monotonic()
        subprocess.run(["curl", "-fsSL", "-C", "-", "--retry", "5", "--connect-timeout", "30",
                        "--max-time", "1000", "-o", temporary, url], check=True)
        subprocess.run(["tar", "-xzf", temporary, "-C", target], check=True)
        curl = time.monotonic() - start
        check_unpacked(os.path.join(target, name), url, args.megabytes)

        print(f"{'way':<44}{'wall s':>9}{'/ curl':>9}")
        for label, seconds in [("ascend-setup (downloader, 8 ranges)", ours),
                               ("upstream (urllib open_url + tarfile)", upstream),
                               ("maintainers (curl -C -, then tar)", curl)]:
            print(f"{label:<44}{seconds:>9.2f}{seconds / curl:>9.3f}")
        print(f"target: ascend-setup <= 0.2 x curl: {'met' if ours <= 0.2 * curl else 'MISSED'}")

        # 4. Resumed after a SIGKILL at 40%.
        sent_before = nginx.bytes_sent()
        home = os.path.join(work, "home-resume")
        state = os.path.join(home, ".triton", "llvm", f".{name}.download.part.state")
        process = run.start(home)
        done = 0
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and process.poll() is None and done < 0.4 * size:
            time.sleep(0.05)
            try:
                with open(state) as f:
                    done = sum(segment[2] for segment in json.load(f)["segments"])
            except (OSError, ValueError, KeyError):
                done = 0
        process.send_signal(signal.SIGKILL)
        process.wait()
        killed_at = done
        start = time.monotonic()
        process = run.start(home)
        process.communicate(timeout=3600)
        rerun = time.monotonic() - start
        check_unpacked(os.path.join(home, ".triton", "llvm", name), url, args.megabytes)
        fetched = nginx.bytes_sent() - sent_before
        print(f"resumed after SIGKILL at {killed_at / size:.0%}: bytes sent in all "
              f"{fetched / 1e6:.1f} MB = {fetched / size:.3f} x the package "
              f"(target <= 1.15: {'met' if fetched <= 1.15 * size else 'MISSED'}); "
              f"rerun {rerun:.2f} s")
    finally:
        if nginx:
            nginx.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
