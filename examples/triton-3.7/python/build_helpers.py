"""Where the build lives: the tree root and the CMake build directory."""
import os
import sys
import sysconfig
from pathlib import Path


def get_base_dir():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))


def get_cmake_dir():
    # A Path, as upstream's: the 3.7.0 line's setup.py joins it with "/".
    build_dir = os.environ.get("TRITON_BUILD_DIR")
    if not build_dir:
        plat_name = sysconfig.get_platform()
        python_version = sysconfig.get_python_version()
        tag = f"{plat_name}-{sys.implementation.name}-{python_version}"
        build_dir = os.path.join(get_base_dir(), "build", f"cmake.{tag}")
    cmake_dir = Path(build_dir)
    cmake_dir.mkdir(parents=True, exist_ok=True)
    return cmake_dir
