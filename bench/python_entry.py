"""The Python entry ascend-setup replaces, for the bench: what
`python3 setup_ascend.py` does up to setup() (default
environment, setup() captured while setup.py is executed as a module, the
module patched, kwargs rewritten), then prints the kwargs as JSON instead of
calling setup(), as `ascend-setup --dump-kwargs` does.

    python3 bench/python_entry.py TREE
"""
import glob
import hashlib
import importlib.util
import json
import os
import subprocess
import sys

DEFAULTS = {"TRITON_BUILD_WITH_CCACHE": "true", "TRITON_BUILD_WITH_CLANG_LLD": "true",
            "TRITON_BUILD_PROTON": "OFF", "TRITON_WHEEL_NAME": "triton-ascend",
            "TRITON_BUILD_DISTRIBUTED": "OFF", "TRITON_APPEND_CMAKE_ARGS": "-DTRITON_BUILD_UT=OFF"}


def _is_git_repo(root):
    return os.path.exists(os.path.join(root, ".git"))


def _patch_module(mod, root):
    mod.backends = [mod.BackendInstaller.prepare("ascend"), *mod.backends]
    original = mod.get_llvm_package_info

    def get_llvm_package_info():
        info = original()
        digest = hashlib.sha256()
        for patch in sorted(glob.glob(os.path.join(root, "third_party/ascend/patch/llvm_patch_*.patch"))):
            with open(patch, "rb") as f:
                digest.update(f.read())
        return info

    mod.get_llvm_package_info = get_llvm_package_info

    class CMakeBuild(mod.CMakeBuild):
        pass

    class BuildWheel(mod.plugin_bdist_wheel):
        pass

    mod.AscendCMakeBuild, mod.AscendBuildWheel = CMakeBuild, BuildWheel


def _build_setup_kwargs(mod, kwargs, root):
    kwargs = dict(kwargs)
    with open(os.path.join(root, "version.txt")) as f:
        version = f.read().strip()
    if _is_git_repo(root):
        version += "+git" + subprocess.check_output(["git", "rev-parse", "--short=8", "HEAD"],
                                                    cwd=root, text=True).strip()
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    kwargs.update(name=os.environ["TRITON_WHEEL_NAME"], version=version,
                  url="https://gitcode.com/Ascend/triton-ascend/", long_description=readme,
                  long_description_content_type="text/markdown",
                  install_requires=["attrs==24.2.0", "numpy==1.26.4", "pybind11", "triton==3.6.0"],
                  packages=list(mod.get_packages()), package_dir=dict(mod.get_package_dirs()),
                  entry_points=mod.get_entry_points())
    kwargs["cmdclass"] = dict(kwargs["cmdclass"], bdist_wheel=mod.AscendBuildWheel,
                              build_ext=mod.AscendCMakeBuild)
    return kwargs


def main():
    root = os.path.abspath(sys.argv[1])
    os.chdir(root)
    sys.path.insert(0, root)
    sys.argv = [os.path.join(root, "setup.py")]
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
    import setuptools
    real_setup, captured = setuptools.setup, {}
    setuptools.setup = lambda **kwargs: captured.update(kwargs=kwargs)
    try:
        spec = importlib.util.spec_from_file_location("setup_triton", os.path.join(root, "setup.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules["setup_triton"] = mod
        spec.loader.exec_module(mod)
    finally:
        setuptools.setup = real_setup
    _patch_module(mod, root)
    kwargs = _build_setup_kwargs(mod, captured["kwargs"], root)
    print(json.dumps(kwargs, indent=2, default=repr))


if __name__ == "__main__":
    main()
