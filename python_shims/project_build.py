"""The build backend of ascend-setup itself (the root pyproject.toml):
``pip install --no-build-isolation <checkout>`` and ``pip wheel`` of it.

Runs CMake (configure, build, install into a staging directory) and packs
what ``cmake --install`` installs into one wheel: ``bin/ascend-setup`` as a
script, the host modules and their manifest under ``libexec/ascend-setup``
and the docs as data (both relative to the environment's prefix, where the
launcher looks: ``<bin>/../libexec/ascend-setup``), the ``ascend_setup``
package at the root. Only the standard library: it runs offline with Debian's
packages (and Debian's source packages, for the static libgit2, libcurl,
libarchive and zlib).

The build is portable by default (``-DASCEND_SETUP_PORTABLE=ON``: every
dependency and the C++ runtime linked in, scripts/build-static-deps.sh run
first), and the wheel is ``py3-none-manylinux_2_34_<arch>``: one wheel for
every CPython the build found, on any glibc >= 2.34
(scripts/check-wheel-policy.py checks it). A build linked with the system's
libraries (``portable=0``, or a build directory configured without it) gives
``py3-none-linux_<arch>``, for this machine only.

config_settings: ``build-dir`` (default ``<checkout>/build/pip``; an existing,
configured build directory is built as it is), ``build-type`` (default
Release), ``portable`` ("0" for a build linked with the system's libraries),
``static-deps`` (default ``<build-dir>/static-deps``). A cross build is a
``build-dir`` configured beforehand with a toolchain file (doc/portable.md);
its wheel is tagged for the target's architecture.
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

NAME = "ascend_setup"


def _version():
    with open("CMakeLists.txt", encoding="utf-8") as cmake_lists:
        match = re.search(r"project\(\s*ascend-setup\s+VERSION\s+([0-9.]+)", cmake_lists.read())
    if not match:
        raise SystemExit("project_build: no project(ascend-setup VERSION ...) in CMakeLists.txt")
    return match.group(1)


# The policy the portable build is made for: glibc 2.34 (AlmaLinux 9, the
# release image; Debian 12 has 2.36), checked by scripts/check-wheel-policy.py.
PORTABLE_POLICY = "manylinux_2_34"


def _cache(build):
    with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as cache:
        return cache.read()


def _tag(build):
    """The build's target, not this interpreter's: a cross build (a build-dir
    configured with cmake/toolchains/) packs another architecture."""
    cache = _cache(build)
    arch = re.search(r"^ASCEND_SETUP_WHEEL_ARCH:INTERNAL=(\S+)$", cache, re.M)
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    if arch:
        platform = "linux_" + arch.group(1)
    if re.search(r"^ASCEND_SETUP_PORTABLE:BOOL=(ON|TRUE|1)$", cache, re.M):
        platform = PORTABLE_POLICY + "_" + platform.split("_", 1)[1]
    return "py3-none-" + platform


def _cmake(args):
    print("project_build: cmake " + " ".join(args), file=sys.stderr, flush=True)
    subprocess.run(["cmake"] + args, check=True, stdout=sys.stderr)


def _stage(config_settings, staging):
    """Builds and installs into `staging`; returns the build directory."""
    settings = config_settings or {}
    build = os.path.abspath(settings.get("build-dir") or os.path.join("build", "pip"))
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        options = ["-DCMAKE_BUILD_TYPE=" + settings.get("build-type", "Release"),
                   "-DASCEND_SETUP_TESTS=OFF", "-DASCEND_SETUP_BENCH=OFF"]
        if settings.get("portable", "1") != "0":
            deps = os.path.abspath(settings.get("static-deps") or os.path.join(build, "static-deps"))
            print("project_build: scripts/build-static-deps.sh " + deps, file=sys.stderr, flush=True)
            subprocess.run(["bash", os.path.join("scripts", "build-static-deps.sh"), deps],
                           check=True, stdout=sys.stderr)
            options += ["-DASCEND_SETUP_PORTABLE=ON", "-DASCEND_SETUP_STATIC_DEPS=" + deps]
        _cmake(["-S", ".", "-B", build] + generator + options)
    _cmake(["--build", build, "--target", "ascend-setup"])
    _cmake(["--install", build, "--prefix", staging])
    return build


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: ascend-setup\nVersion: %s\n"
            "Summary: The build entry of triton-ascend: upstream Triton's setup.py with the "
            "Ascend layer, and the ascend_setup.build_meta PEP 517 backend\n" % version)


def _members(staging, data_dir):
    """(archive name, file) for everything cmake --install put in `staging`."""
    members = []
    for directory, subdirs, names in os.walk(staging):
        subdirs.sort()
        for name in sorted(names):
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, staging)
            parts = relative.split(os.sep)
            if NAME in parts[:-1]:  # the Python package, wherever CMake put it
                arcname = "/".join(parts[parts.index(NAME):])
            elif parts[0] == "bin":
                arcname = data_dir + "/scripts/" + "/".join(parts[1:])
            else:
                arcname = data_dir + "/data/" + "/".join(parts)
            members.append((arcname, path))
    return members


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    data_dir = "%s-%s.data" % (NAME, version)
    with tempfile.TemporaryDirectory(prefix="ascend-setup-stage-") as staging:
        build = _stage(config_settings, staging)
        tag = _tag(build)
        name = "%s-%s-%s.whl" % (NAME, version, tag)
        records = []
        os.makedirs(wheel_directory, exist_ok=True)
        part = os.path.join(wheel_directory, name + ".part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as wheel:
            def add(arcname, data, mode=0o644):
                info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                wheel.writestr(info, data)
                records.append(_record_line(arcname, data))

            for arcname, path in _members(staging, data_dir):
                with open(path, "rb") as source:
                    add(arcname, source.read(), os.stat(path).st_mode & 0o777)
            add(dist_info + "/METADATA", _metadata(version).encode())
            add(dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: ascend-setup project_build\n"
                                       "Root-Is-Purelib: false\nTag: %s\n" % tag).encode())
            record = "\n".join(records + [dist_info + "/RECORD,,"]) + "\n"
            wheel.writestr(zipfile.ZipInfo(dist_info + "/RECORD", (1980, 1, 1, 0, 0, 0)), record)
        os.replace(part, os.path.join(wheel_directory, name))
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The checkout's committed files (git ls-files), else every file but build/."""
    base = "%s-%s" % (NAME, _version())
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, check=True).stdout.decode()
        files = sorted(f for f in listed.split("\0") if f and os.path.isfile(f))
    except (OSError, subprocess.CalledProcessError):
        files = []
        for directory, subdirs, names in os.walk("."):
            subdirs[:] = sorted(d for d in subdirs if d not in ("build", ".git", "__pycache__"))
            files += [os.path.relpath(os.path.join(directory, n)) for n in sorted(names)]
    os.makedirs(sdist_directory, exist_ok=True)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for relative in files:
            archive.add(relative, arcname=base + "/" + relative, recursive=False)
    os.replace(path + ".part", path)
    return os.path.basename(path)
