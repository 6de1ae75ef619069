"""The build backend of ascend-setup itself (the root pyproject.toml):
``pip install --no-build-isolation <checkout>`` and ``pip wheel`` of it.

Runs CMake (configure, build, install into a staging directory) and packs
what ``cmake --install`` installs into one wheel: ``bin/ascend-setup`` as a
script, the host modules and their manifest under ``libexec/ascend-setup``
and the docs as data (both relative to the environment's prefix, where the
launcher looks: ``<bin>/../libexec/ascend-setup``), the ``ascend_setup``
package at the root, and ``<name>-<version>.dist-info/sbom.cdx.json``, a
CycloneDX 1.5 SBOM of the libraries linked in (the build directory's
``linked-libraries.json``, the versions ``--host-version`` prints). Only
the standard library: it runs offline with Debian's packages (and Debian's
source packages, for the static libgit2, libcurl, libarchive and zlib).

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
import json
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


# The SBOM's property naming the newer Debian version (a security update) of a
# library when the build links an older one; scripts/check-wheel-policy.py
# refuses such a wheel for a release.
NEWER_DEBIAN_VERSION = "ascend-setup:newer-debian-version"


def _purl_part(text):
    """A purl's version or qualifier value: percent-encoded but for . - _ ~"""
    return "".join(c if c.isascii() and (c.isalnum() or c in ".-_~") else
                   "".join("%%%02X" % b for b in c.encode()) for c in text)


def _sbom(build, version):
    """The wheel's CycloneDX 1.5 SBOM, from the build directory's record of the
    libraries it links (linked-libraries.json, written by CMake: the versions
    --host-version prints)."""
    path = os.path.join(build, "linked-libraries.json")
    try:
        with open(path, encoding="utf-8") as record:
            linked = json.load(record)
    except (OSError, ValueError) as error:
        raise SystemExit("project_build: cannot read %s (%s): reconfigure the build directory"
                         % (path, error))
    distro = linked.get("distro") or {}
    how = {"source": "built from Debian's source package", "archive": "Debian's static archive",
           "system": "the system's shared library"}
    components = []
    for library in linked["libraries"]:
        component = {"type": "library", "bom-ref": library["name"], "name": library["name"],
                     "version": library["version"]}
        properties = [{"name": "ascend-setup:linked",
                       "value": how.get(library["origin"], library["origin"])}]
        if library["debian_source"] and library["debian_version"] and distro.get("id"):
            component["purl"] = "pkg:deb/%s/%s@%s?distro=%s" % (
                distro["id"], library["debian_source"], _purl_part(library["debian_version"]),
                _purl_part("%s-%s" % (distro["id"], distro.get("version", ""))))
            properties.append({"name": "ascend-setup:debian-version",
                               "value": library["debian_version"]})
        if library["newer_debian_version"]:
            properties.append({"name": NEWER_DEBIAN_VERSION,
                               "value": library["newer_debian_version"]})
        component["properties"] = properties
        components.append(component)
    return {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "version": 1,
        "metadata": {"component": {"type": "application", "bom-ref": "ascend-setup",
                                   "name": "ascend-setup", "version": version}},
        "components": components,
        "dependencies": [{"ref": "ascend-setup",
                          "dependsOn": [c["bom-ref"] for c in components]}],
    }


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
            add(dist_info + "/sbom.cdx.json",
                (json.dumps(_sbom(build, version), indent=2) + "\n").encode())
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
