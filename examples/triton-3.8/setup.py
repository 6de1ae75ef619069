# An upstream-shaped Triton 3.8 setup.py: the 3.8 stand-in written for
# ascend-setup's tests from docs/upstream-contract.md and the 3.8.0 line in
# docs/upstream-lines.md, of the entry form (no third_party/ascend/build/: the
# tree is built through ascend-setup's command, as setup_ascend.py builds it).
# It has every name the Ascend layer touches, with the same signatures and
# observable behaviour (cwd-relative paths, import-time
# packages/package_dir/entry_points, `from setuptools import setup`,
# subprocess.check_call looked up at call time), and builds a small real CMake
# project. As upstream 3.8, it resolves no third-party package itself: CMake
# runs python/build_helpers.py as a process of its own at configure time, and
# this file passes it the cache path, the offline switch and the syspaths.
# When a test makes the tree of the in-tree form (a
# third_party/ascend/build/__init__.py that takes prepare and activate from
# ascend_setup.hooks), it calls prepare() before importing
# python.build_helpers and activate() right before setup(), as the 3.7 tree.
# Downloads are implemented but never needed offline: TRITON_OFFLINE_BUILD=1
# with LLVM_SYSPATH and JSON_SYSPATH set, as a packager runs the real file.
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from distutils.command.clean import clean
from pathlib import Path
from typing import Optional

import pybind11
from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.develop import develop
from setuptools.command.egg_info import egg_info
from setuptools.command.install import install
from setuptools.command.sdist import sdist

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

try:
    from setuptools.command.editable_wheel import editable_wheel
except ImportError:

    class editable_wheel:  # setuptools without PEP 660 support: nothing to override
        pass


sys.path.insert(0, os.path.dirname(__file__))

try:
    from third_party.ascend.build import prepare, activate  # noqa: E402  the in-tree form
except ModuleNotFoundError as error:
    if error.name != "third_party.ascend.build":  # the layer package is there but broken
        raise

    def prepare():  # the entry form: ascend-setup's command applies the layer
        pass

    def activate():
        pass


prepare()

from python.build_helpers import (  # noqa: E402
    BuildHelperArgs, download_and_copy_dependencies, get_base_dir, get_cmake_dir, update_symlink)


def is_git_repo():
    return os.path.isdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".git"))


@dataclass
class Backend:
    name: str
    src_dir: str
    backend_dir: str
    language_dir: Optional[str]
    tools_dir: Optional[str]
    install_dir: str
    is_external: bool


class BackendInstaller:

    @staticmethod
    def prepare(backend_name: str, backend_src_dir: str = None, is_external: bool = False):
        if not is_external:
            root_dir = "third_party"
            assert backend_name in os.listdir(root_dir), \
                f"{backend_name} is requested for install but not present in {root_dir}"
            if is_git_repo():
                try:
                    subprocess.run(["git", "submodule", "update", "--init", f"{backend_name}"],
                                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   cwd=root_dir)
                except subprocess.CalledProcessError:
                    pass
                except FileNotFoundError:
                    pass
            backend_src_dir = os.path.join(root_dir, backend_name)

        backend_path = os.path.join(backend_src_dir, "backend")
        assert os.path.exists(backend_path), f"{backend_path} does not exist!"
        for file in ["compiler.py", "driver.py"]:
            assert os.path.exists(os.path.join(backend_path, file)), \
                f"${file} does not exist in ${backend_path}"

        language_dir = os.path.join(backend_src_dir, "language")
        if not os.path.exists(language_dir):
            language_dir = None
        tools_dir = os.path.join(backend_src_dir, "tools")
        if not os.path.exists(tools_dir):
            tools_dir = None

        install_dir = os.path.join(os.path.dirname(__file__), "python", "triton", "backends", backend_name)
        return Backend(name=backend_name, src_dir=backend_src_dir, backend_dir=backend_path,
                       language_dir=language_dir, tools_dir=tools_dir, install_dir=install_dir,
                       is_external=is_external)

    @staticmethod
    def copy(active):
        return [BackendInstaller.prepare(backend) for backend in active]

    @staticmethod
    def copy_externals():
        backend_dirs = os.getenv("TRITON_PLUGIN_DIRS")
        if backend_dirs is None:
            return []
        backend_dirs = backend_dirs.strip().split(";")
        backend_names = [Path(os.path.join(d, "backend", "name.conf")).read_text().strip() for d in backend_dirs]
        return [
            BackendInstaller.prepare(name, backend_src_dir=src_dir, is_external=True)
            for name, src_dir in zip(backend_names, backend_dirs)
        ]


def check_env_flag(name: str, default: str = "") -> bool:
    return os.getenv(name, default).upper() in ["ON", "1", "YES", "TRUE", "Y"]


def get_build_type():
    if check_env_flag("DEBUG"):
        return "Debug"
    if check_env_flag("REL_WITH_DEB_INFO"):
        return "RelWithDebInfo"
    if check_env_flag("TRITON_REL_BUILD_WITH_ASSERTS"):
        return "TritonRelBuildWithAsserts"
    if check_env_flag("TRITON_BUILD_WITH_O1"):
        return "TritonBuildWithO1"
    return "TritonRelBuildWithAsserts"


def is_offline_build() -> bool:
    return check_env_flag("TRITON_OFFLINE_BUILD")


def get_triton_cache_path():
    user_home = os.getenv("TRITON_HOME") or os.getenv("HOME") or os.getenv("USERPROFILE")
    if not user_home:
        raise RuntimeError("Could not find user home directory")
    return os.path.join(user_home, ".triton")


def get_build_helper_args():
    # What build_helpers.py's command line would say, from this process's environment.
    return BuildHelperArgs(
        cache_path=get_triton_cache_path(), offline_build=is_offline_build(),
        llvm_system_suffix=os.environ.get("TRITON_LLVM_SYSTEM_SUFFIX") or None,
        llvm_syspath=os.environ.get("LLVM_SYSPATH") or None, json_syspath=os.environ.get("JSON_SYSPATH") or None,
        ptxas_path=os.environ.get("TRITON_PTXAS_PATH") or None,
        ptxas_blackwell_path=os.environ.get("TRITON_PTXAS_BLACKWELL_PATH") or None,
        cuobjdump_path=os.environ.get("TRITON_CUOBJDUMP_PATH") or None,
        nvdisasm_path=os.environ.get("TRITON_NVDISASM_PATH") or None,
        cudacrt_path=os.environ.get("TRITON_CUDACRT_PATH") or None,
        cudart_path=os.environ.get("TRITON_CUDART_PATH") or None,
        cupti_include_path=os.environ.get("TRITON_CUPTI_INCLUDE_PATH") or None,
        cupti_lib_path=os.environ.get("TRITON_CUPTI_LIB_PATH") or None,
        cupti_lib_blackwell_path=os.environ.get("TRITON_CUPTI_LIB_BLACKWELL_PATH") or None)


class CMakeClean(clean):

    def initialize_options(self):
        clean.initialize_options(self)
        self.build_temp = get_cmake_dir()


class CMakeBuildPy(build_py):

    def run(self) -> None:
        self.run_command("build_ext")
        return super().run()


class CMakeExtension(Extension):

    def __init__(self, name, path, sourcedir=""):
        Extension.__init__(self, name, sources=[])
        self.sourcedir = os.path.abspath(sourcedir)
        self.path = path


class CMakeBuild(build_ext):

    user_options = build_ext.user_options + [("base-dir=", None, "base directory of Triton")]

    def initialize_options(self):
        build_ext.initialize_options(self)
        self.base_dir = get_base_dir()

    def finalize_options(self):
        build_ext.finalize_options(self)

    def run(self):
        download_and_copy_dependencies(get_build_helper_args())
        try:
            out = subprocess.check_output(["cmake", "--version"])
        except OSError:
            raise RuntimeError("CMake must be installed to build the following extensions: " +
                               ", ".join(e.name for e in self.extensions))
        match = re.search(r"version\s*(?P<major>\d+)\.(?P<minor>\d+)([\d.]+)?", out.decode())
        cmake_major, cmake_minor = int(match.group("major")), int(match.group("minor"))
        if (cmake_major, cmake_minor) < (3, 20):
            raise RuntimeError("CMake >= 3.20 is required")
        for ext in self.extensions:
            self.build_extension(ext)

    def get_pybind11_cmake_args(self):
        return [f"-Dpybind11_INCLUDE_DIR={pybind11.get_include()}",
                f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]

    def get_proton_cmake_args(self):
        return [f"-DTRITON_BUILD_PROTON={'ON' if check_env_flag('TRITON_BUILD_PROTON', 'ON') else 'OFF'}"]

    def build_extension(self, ext):
        lit_dir = shutil.which("lit")
        ninja_dir = shutil.which("ninja")
        extdir = os.path.abspath(os.path.dirname(self.get_ext_fullpath(ext.path)))
        wheeldir = os.path.dirname(extdir)
        cmake_dir = get_cmake_dir()
        python_include_dir = sysconfig.get_path("platinclude")
        cmake_args = [
            "-G", "Ninja",
            "-DCMAKE_MAKE_PROGRAM=" + ninja_dir,  # crashes without ninja, as upstream
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            "-DCMAKE_LIBRARY_OUTPUT_DIRECTORY=" + extdir,
            "-DTRITON_BUILD_PYTHON_MODULE=ON",
            "-DPython3_EXECUTABLE:FILEPATH=" + sys.executable,
            "-DPython3_INCLUDE_DIR=" + python_include_dir,
            "-DTRITON_CODEGEN_BACKENDS=" + ";".join([b.name for b in backends if not b.is_external]),
            "-DTRITON_PLUGIN_DIRS=" + ";".join([b.src_dir for b in backends if b.is_external]),
            "-DTRITON_WHEEL_DIR=" + wheeldir,
        ]
        if lit_dir is not None:
            cmake_args.append("-DLLVM_EXTERNAL_LIT=" + lit_dir)
        cmake_args.extend(self.get_pybind11_cmake_args())
        # The third-party packages are build_helpers.py's, run by CMake: it is told where.
        cmake_args += [
            "-DTRITON_CACHE_PATH=" + get_triton_cache_path(),
            "-DTRITON_OFFLINE_BUILD=" + ("ON" if is_offline_build() else "OFF"),
        ]
        for name in ["TRITON_LLVM_SYSTEM_SUFFIX", "LLVM_SYSPATH", "JSON_SYSPATH"]:
            if os.environ.get(name):
                cmake_args.append(f"-D{name}={os.environ[name]}")
        cmake_args.append("-DTRITON_VERSION=" + TRITON_VERSION)

        cfg = get_build_type()
        build_args = ["--config", cfg]
        cmake_args += ["-DCMAKE_BUILD_TYPE=" + cfg]
        max_jobs = os.getenv("MAX_JOBS", str(2 * os.cpu_count()))
        build_args += ["-j" + max_jobs]

        if check_env_flag("TRITON_BUILD_WITH_CLANG_LLD"):
            cmake_args += [
                "-DCMAKE_C_COMPILER=clang", "-DCMAKE_CXX_COMPILER=clang++", "-DCMAKE_LINKER=lld",
                "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld", "-DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld",
                "-DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld"
            ]
        for name in ["TRITON_BUILD_PROTON", "TRITON_BUILD_WITH_CCACHE", "TRITON_PARALLEL_LINK_JOBS"]:
            if name in os.environ:
                cmake_args.append(f"-D{name}={os.environ[name]}")
        cmake_args += shlex.split(os.getenv("TRITON_APPEND_CMAKE_ARGS", ""))

        env = os.environ.copy()
        subprocess.check_call(["cmake", self.base_dir] + cmake_args, cwd=cmake_dir, env=env)
        subprocess.check_call(["cmake", "--build", "."] + build_args, cwd=cmake_dir)
        # The headers a wheel carries (Version.h among them), next to the extension's _C.
        subprocess.check_call(["cmake", "--install", ".", "--component", "wheel_headers", "--prefix", wheeldir],
                              cwd=cmake_dir)
        subprocess.check_call(["cmake", "--build", ".", "--target", "mlir-doc"], cwd=cmake_dir)


backends = [*BackendInstaller.copy(["nvidia", "amd"]), *BackendInstaller.copy_externals()]


def get_package_dirs():
    yield ("", "python")
    for backend in backends:
        if backend.is_external:
            continue
        yield (f"triton.backends.{backend.name}", backend.backend_dir)
        if backend.language_dir:
            for x in os.listdir(backend.language_dir):
                yield (f"triton.language.extra.{x}", os.path.join(backend.language_dir, x))
        if backend.tools_dir:
            for x in os.listdir(backend.tools_dir):
                yield (f"triton.tools.extra.{x}", os.path.join(backend.tools_dir, x))
    if check_env_flag("TRITON_BUILD_PROTON", "ON"):
        yield ("triton.profiler", "third_party/proton/proton")


def get_packages():
    yield from find_packages(where="python")
    for backend in backends:
        yield f"triton.backends.{backend.name}"
        if backend.language_dir:
            for x in os.listdir(backend.language_dir):
                yield f"triton.language.extra.{x}"
        if backend.tools_dir:
            for x in os.listdir(backend.tools_dir):
                yield f"triton.tools.extra.{x}"
    if check_env_flag("TRITON_BUILD_PROTON", "ON"):
        yield "triton.profiler"


def add_link_to_backends(external_only):
    for backend in backends:
        if external_only and not backend.is_external:
            continue
        update_symlink(backend.install_dir, backend.backend_dir)
        if backend.language_dir:
            for x in os.listdir(backend.language_dir):
                update_symlink(os.path.join(os.path.dirname(__file__), "python", "triton", "language", "extra", x),
                               os.path.join(backend.language_dir, x))
        if backend.tools_dir:
            for x in os.listdir(backend.tools_dir):
                update_symlink(os.path.join(os.path.dirname(__file__), "python", "triton", "tools", "extra", x),
                               os.path.join(backend.tools_dir, x))


def add_link_to_proton():
    proton_dir = os.path.abspath(os.path.join(os.path.dirname(__file__), "third_party", "proton", "proton"))
    update_symlink(os.path.join(os.path.dirname(__file__), "python", "triton", "profiler"), proton_dir)


def add_links(external_only):
    add_link_to_backends(external_only=external_only)
    if not external_only and check_env_flag("TRITON_BUILD_PROTON", "ON"):
        add_link_to_proton()


class plugin_bdist_wheel(bdist_wheel):

    def run(self):
        add_links(external_only=True)
        super().run()

    def get_tag(self):
        tag = super().get_tag()
        if check_env_flag("TRITON_STABLE_ABI"):
            return ("cp312", "abi3", tag[2])
        return tag


class plugin_develop(develop):

    def run(self):
        add_links(external_only=False)
        super().run()


class plugin_editable_wheel(editable_wheel):

    def run(self):
        add_links(external_only=False)
        super().run()


class plugin_egg_info(egg_info):

    def run(self):
        add_links(external_only=True)
        super().run()


class plugin_install(install):

    def run(self):
        add_links(external_only=True)
        super().run()


class plugin_sdist(sdist):

    def run(self):
        for backend in backends:
            if backend.is_external:
                raise RuntimeError("sdist cannot be used with TRITON_PLUGIN_DIRS")
        super().run()


def get_entry_points():
    entry_points = {}
    if check_env_flag("TRITON_BUILD_PROTON", "ON"):
        entry_points["console_scripts"] = ["proton-viewer = triton.profiler.viewer:main"]
    entry_points["triton.backends"] = [f"{b.name} = triton.backends.{b.name}" for b in backends]
    return entry_points


def get_git_commit_hash(length=8):
    try:
        cmd = ["git", "rev-parse", f"--short={length}", "HEAD"]
        return "+git{}".format(subprocess.check_output(cmd, stderr=subprocess.DEVNULL).strip().decode("utf-8"))
    except Exception:
        return ""


def get_git_branch():
    try:
        cmd = ["git", "rev-parse", "--abbrev-ref", "HEAD"]
        return subprocess.check_output(cmd, stderr=subprocess.DEVNULL).strip().decode("utf-8")
    except Exception:
        return ""


def get_git_version_suffix():
    if not is_git_repo():
        return ""
    if get_git_branch().startswith("release"):
        return ""
    return get_git_commit_hash()


def get_triton_version_suffix():
    git_sfx = get_git_version_suffix()
    env_sfx = os.environ.get("TRITON_WHEEL_VERSION_SUFFIX", "")
    if "+" in git_sfx and "+" in env_sfx:  # one "+" per version
        env_sfx = env_sfx.replace("+", "-")
    return git_sfx + env_sfx


TRITON_VERSION = "3.8.0" + get_triton_version_suffix()

activate()

setup(
    name=os.environ.get("TRITON_WHEEL_NAME", "triton"),
    version=TRITON_VERSION,
    author="Philippe Tillet",
    author_email="phil@openai.com",
    description="A language and compiler for custom Deep Learning operations",
    long_description="",
    install_requires=["importlib-metadata; python_version < '3.10'"],
    packages=list(get_packages()),
    package_dir=dict(get_package_dirs()),
    entry_points=get_entry_points(),
    include_package_data=True,
    ext_modules=[CMakeExtension("triton", "triton/_C/")],
    cmdclass={
        "bdist_wheel": plugin_bdist_wheel,
        "build_ext": CMakeBuild,
        "build_py": CMakeBuildPy,
        "clean": CMakeClean,
        "develop": plugin_develop,
        "editable_wheel": plugin_editable_wheel,
        "egg_info": plugin_egg_info,
        "install": plugin_install,
        "sdist": plugin_sdist,
    },
    zip_safe=False,
    keywords=["Compiler", "Deep Learning"],
    url="https://github.com/triton-lang/triton/",
    python_requires=">=3.10,<3.15",
    classifiers=[
        "Development Status :: 4 - Beta",
        "Intended Audience :: Developers",
        "Topic :: Software Development :: Build Tools",
        "License :: OSI Approved :: MIT License",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Programming Language :: Python :: 3.14",
    ],
    test_suite="tests",
    extras_require={
        "build": ["cmake>=3.20,<4.0", "lit"],
        "tests": ["autopep8", "isort", "numpy", "pytest", "pytest-forked", "pytest-xdist", "scipy>=1.7.1", "llnl-hatchet"],
        "tutorials": ["matplotlib", "pandas", "tabulate"],
    },
)
