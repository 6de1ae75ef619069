"""Where the build lives and the third-party packages it needs (upstream 3.8's shape).

Imported by setup.py and run by CMake as a script of its own at configure time
(`build_helpers.py write_thirdparty_cmake_vars ...`): it imports nothing from
setup.py and finds the tree as its parent's parent. Downloads are implemented
but never needed offline: TRITON_OFFLINE_BUILD with LLVM_SYSPATH and
JSON_SYSPATH set, as a packager runs the real file.
"""
import argparse
import hashlib
import json
import os
import platform
import shutil
import sys
import sysconfig
import tarfile
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


def get_base_dir():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))


def get_cmake_dir():
    # A Path, as upstream's (its setup.py joins it with "/").
    build_dir = os.environ.get("TRITON_BUILD_DIR")
    if not build_dir:
        plat_name = sysconfig.get_platform()
        python_version = sysconfig.get_python_version()
        tag = f"{plat_name}-{sys.implementation.name}-{python_version}"
        build_dir = os.path.join(get_base_dir(), "build", f"cmake.{tag}")
    cmake_dir = Path(build_dir)
    cmake_dir.mkdir(parents=True, exist_ok=True)
    return cmake_dir


@dataclass
class BuildHelperArgs:
    cache_path: str
    offline_build: bool
    llvm_system_suffix: Optional[str] = None
    llvm_syspath: Optional[str] = None
    json_syspath: Optional[str] = None
    ptxas_path: Optional[str] = None
    ptxas_blackwell_path: Optional[str] = None
    cuobjdump_path: Optional[str] = None
    nvdisasm_path: Optional[str] = None
    cudacrt_path: Optional[str] = None
    cudart_path: Optional[str] = None
    cupti_include_path: Optional[str] = None
    cupti_lib_path: Optional[str] = None
    cupti_lib_blackwell_path: Optional[str] = None


def open_url(url):
    request = urllib.request.Request(url, headers={"User-Agent": "triton-build-helpers"})
    return urllib.request.urlopen(request, timeout=300)


def update_symlink(link_path, source_path):
    source_path = Path(source_path)
    link_path = Path(link_path)
    if link_path.is_symlink():
        link_path.unlink()
    elif link_path.exists():
        shutil.rmtree(link_path)
    link_path.absolute().parent.mkdir(parents=True, exist_ok=True)
    print(f"creating symlink: {link_path} -> {source_path}", file=sys.stderr)
    link_path.symlink_to(source_path.absolute(), target_is_directory=True)


@dataclass
class Package:
    package: str
    name: str
    url: str
    include_flag: str
    lib_flag: str
    syspath_var_name: str
    sym_name: Optional[str] = None
    sha256: Optional[str] = None  # the archive's expected digest, when its info file gives one


def get_json_package_info():
    with open(os.path.join(get_base_dir(), "cmake", "json-version.txt")) as version_file:
        version = version_file.read().strip()
    url = f"https://github.com/nlohmann/json/releases/download/{version}/include.zip"
    return Package("json", "", url, "JSON_INCLUDE_DIR", "", "JSON_SYSPATH")


def is_linux_os(os_id):
    if os.path.exists("/etc/os-release"):
        with open("/etc/os-release") as f:
            return f'ID="{os_id}"' in f.read()
    return False


def _llvm_system_suffix(helper_args):
    # The suffix of the prebuilt LLVM for this machine; None: no prebuilt one.
    if helper_args.llvm_system_suffix:
        return helper_args.llvm_system_suffix
    system = platform.system()
    arch = {"x86_64": "x64", "arm64": "arm64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    if system == "Darwin":
        return f"macos-{arch}"
    if system != "Linux":
        return None
    if arch == "arm64":
        return "almalinux-arm64" if is_linux_os("almalinux") else "ubuntu-arm64"
    if arch == "x64":
        major, minor = platform.libc_ver()[1].split(".")[:2]  # crashes on musl, as upstream
        return "ubuntu-x64" if (int(major), int(minor)) > (2, 28) else "almalinux-x64"
    return None


def get_llvm_package_info(helper_args):
    system_suffix = _llvm_system_suffix(helper_args)
    if system_suffix is None:  # user-configured: LLVM_SYSPATH names it
        return Package("llvm", "LLVM-C.lib", "", "LLVM_INCLUDE_DIRS", "LLVM_LIBRARY_DIR", "LLVM_SYSPATH")
    with open(os.path.join(get_base_dir(), "cmake", "llvm-info.json")) as info_file:
        info = json.load(info_file)
    name = f"llvm-{info['llvm_hash'][:8]}-{system_suffix}-{info['build_number']}"
    url = f"https://oaitriton.blob.core.windows.net/public/llvm-builds/{name}.tar.gz"
    return Package("llvm", name, url, "LLVM_INCLUDE_DIRS", "LLVM_LIBRARY_DIR", "LLVM_SYSPATH",
                   sym_name=f"llvm-{system_suffix}", sha256=info.get("sha256sum", {}).get(system_suffix))


def _sha_check_disabled():
    return os.environ.get("TRITON_UNSAFE_DISABLE_SHA_CHECK", "").upper() in ["ON", "1", "YES", "TRUE", "Y"]


def _download_and_extract(url, output_dir, expected_sha256=None):
    # The archive is read whole into a temporary file, its digest checked, then unpacked.
    os.makedirs(output_dir, exist_ok=True)
    print(f"downloading and extracting {url} ...")
    with tempfile.TemporaryFile() as archive:
        digest = hashlib.sha256()
        with open_url(url) as response:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                archive.write(chunk)
        if expected_sha256 and digest.hexdigest() != expected_sha256:
            if not _sha_check_disabled():
                raise RuntimeError(f"{url} failed checksum validation: expected {expected_sha256}, "
                                   f"got {digest.hexdigest()}")
            print(f"warning: {url}'s checksum differs; TRITON_UNSAFE_DISABLE_SHA_CHECK is set", file=sys.stderr)
        archive.seek(0)
        if url.endswith(".zip"):
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(path=output_dir)
        else:
            with tarfile.open(fileobj=archive, mode="r:*") as tarred:
                # The "data" filter where this Python has it (3.12, 3.11.4): nothing outside output_dir.
                safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                tarred.extractall(path=output_dir, **safe)


def _syspath_override(package, helper_args):
    return {"LLVM_SYSPATH": helper_args.llvm_syspath, "JSON_SYSPATH": helper_args.json_syspath}.get(
        package.syspath_var_name)


def _get_thirdparty_package_cmake_vars(package, helper_args):
    package_root_dir = os.path.join(helper_args.cache_path, package.package)
    package_dir = os.path.join(package_root_dir, package.name)
    override = _syspath_override(package, helper_args)
    if override:
        package_dir = override
    version_file_path = os.path.join(package_dir, "version.txt")
    input_defined = bool(override)
    input_compatible = os.path.exists(version_file_path) and Path(version_file_path).read_text() == package.url
    if helper_args.offline_build and not input_defined:
        raise RuntimeError(f"Requested an offline build but {package.syspath_var_name} is not set")
    if not helper_args.offline_build and not input_defined and not input_compatible:
        shutil.rmtree(package_root_dir, ignore_errors=True)
        _download_and_extract(package.url, package_root_dir, package.sha256)
        Path(version_file_path).write_text(package.url)
    if package.sym_name is not None:
        update_symlink(os.path.join(package_root_dir, package.sym_name), package_dir)
    cmake_vars = {}
    if package.include_flag:
        cmake_vars[package.include_flag] = os.path.join(package_dir, "include")
    if package.lib_flag:
        cmake_vars[package.lib_flag] = os.path.join(package_dir, "lib")
    if package.syspath_var_name:
        cmake_vars[package.syspath_var_name] = package_dir
    return cmake_vars


def get_thirdparty_cmake_vars(packages: list[str], helper_args):
    cmake_vars = {}
    for name in packages:
        if name == "llvm":
            package = get_llvm_package_info(helper_args)
        elif name == "json":
            package = get_json_package_info()
        else:
            raise ValueError(f"unknown third-party package: {name}")
        cmake_vars.update(_get_thirdparty_package_cmake_vars(package, helper_args))
    return cmake_vars


def _cmake_string(value):
    return str(value).replace("\\", "/").replace('"', '\\"')


def write_thirdparty_cmake_vars(output, packages, helper_args):
    cmake_vars = get_thirdparty_cmake_vars(packages, helper_args)
    lines = []
    for key in sorted(cmake_vars):
        lines += [f'if(NOT DEFINED {key} OR "${{{key}}}" STREQUAL "")',
                  f'  set({key} "{_cmake_string(cmake_vars[key])}")', "endif()"]
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text("\n".join(lines) + "\n")


def _download_and_copy(name, src_path, dst_path, version, url, helper_args):
    dst_path = os.path.join(get_base_dir(), "third_party", "nvidia", "backend", dst_path)
    version_file = os.path.join(os.path.dirname(dst_path), f".{name}-version")
    if os.path.exists(dst_path) and os.path.exists(version_file) and Path(version_file).read_text() == version:
        return
    cache = os.path.join(helper_args.cache_path, "nvidia", name, version)
    _download_and_extract(url, cache)
    os.makedirs(os.path.dirname(dst_path), exist_ok=True)
    shutil.copy(os.path.join(cache, src_path), dst_path)
    Path(version_file).write_text(version)


def download_and_copy_dependencies(helper_args):
    # The NVIDIA tools the nvidia backend ships (a small version of upstream's:
    # ptxas, cuobjdump, nvdisasm); none offline, none whose path is given.
    if helper_args.offline_build:
        return
    with open(os.path.join(get_base_dir(), "cmake", "nvidia-toolchain-version.json")) as f:
        versions = json.load(f)
    system = platform.system().lower()
    arch = platform.machine()
    given = {"ptxas": helper_args.ptxas_path, "cuobjdump": helper_args.cuobjdump_path,
             "nvdisasm": helper_args.nvdisasm_path}
    for tool, path in given.items():
        if path:
            continue
        version = versions[tool]
        archive = f"cuda_nvcc-{system}-{arch}-{version}-archive"
        _download_and_copy(
            name=tool, src_path=f"{archive}/bin/{tool}", dst_path=f"bin/{tool}", version=version,
            url=f"https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/{system}-{arch}/{archive}.tar.xz",
            helper_args=helper_args)


_PATH_OPTIONS = ["llvm_syspath", "json_syspath", "ptxas_path", "ptxas_blackwell_path", "cuobjdump_path",
                 "nvdisasm_path", "cudacrt_path", "cudart_path", "cupti_include_path", "cupti_lib_path",
                 "cupti_lib_blackwell_path"]


def add_common_args(parser):
    parser.add_argument("--triton-cache-path", required=True)
    parser.add_argument("--triton-offline-build", action="store_true")
    parser.add_argument("--triton-llvm-system-suffix", default="")
    for option in _PATH_OPTIONS:
        parser.add_argument("--" + option.replace("_", "-"), default="")


def normalize_parsed_args(parsed):
    def value(name):
        text = getattr(parsed, name)
        return text if text else None

    paths = {name: os.path.abspath(value(name)) if value(name) else None for name in _PATH_OPTIONS}
    return BuildHelperArgs(cache_path=os.path.abspath(parsed.triton_cache_path),
                           offline_build=parsed.triton_offline_build,
                           llvm_system_suffix=value("triton_llvm_system_suffix"), **paths)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Triton's build helpers")
    commands = parser.add_subparsers(dest="command", required=True)
    add_common_args(commands.add_parser("download_and_copy_dependencies"))
    write_vars = commands.add_parser("write_thirdparty_cmake_vars")
    add_common_args(write_vars)
    write_vars.add_argument("--output", required=True)
    write_vars.add_argument("--packages", nargs="+", choices=["llvm", "json"], required=True)
    parsed = parser.parse_args(argv)
    helper_args = normalize_parsed_args(parsed)
    try:
        if parsed.command == "download_and_copy_dependencies":
            download_and_copy_dependencies(helper_args)
        else:
            write_thirdparty_cmake_vars(parsed.output, parsed.packages, helper_args)
    except RuntimeError as error:  # the one line CMake shows
        raise SystemExit(f"build_helpers.py: {error}")


if __name__ == "__main__":
    main()
