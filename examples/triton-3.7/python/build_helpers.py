"""Where the build lives: the tree root and the CMake build directory."""
import os
import sys
import sysconfig


def get_base_dir():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))


def get_cmake_dir():
    build_dir = os.environ.get("TRITON_BUILD_DIR")
    if not build_dir:
        plat_name = sysconfig.get_platform()
        python_version = sysconfig.get_python_version()
        tag = f"{plat_name}-{sys.implementation.name}-{python_version}"
        build_dir = os.path.join(get_base_dir(), "build", f"cmake.{tag}")
    os.makedirs(build_dir, exist_ok=True)
    return build_dir
