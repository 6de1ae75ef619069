"""PEP 517 / PEP 660 build backend: ``build-backend = "ascend_setup.build_meta"``.

Every hook runs the ``ascend-setup`` binary on the source tree (the front end's
cwd) with ``--python sys.executable``, so the wheel is built and tagged for the
interpreter of the front end's environment, with the same native interception
as ``ascend-setup bdist_wheel``. The binary is found by _install.binary():
``$ASCEND_SETUP_BINARY``, else the one installed with this package
(``<prefix>/bin/ascend-setup``), else ``ascend-setup`` on PATH.

``config_settings`` reach setup.py as with setuptools' backend:
``--global-option`` before the command, ``--build-option`` after it (wheels),
``editable-mode``/``editable_mode`` as ``editable_wheel --mode``.
"""

import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile

from . import _install

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

# What a build leaves in the tree: never part of an sdist.
_BUILD_OUTPUTS = {"build", "dist", ".git", "__pycache__", ".eggs"}


def _binary():
    """The ascend-setup launcher to run (_install.py's rule)."""
    try:
        return _install.binary()
    except RuntimeError as error:
        raise RuntimeError("ascend_setup.build_meta: %s" % error) from None


def _options(config_settings, key):
    """A config_settings value (a string or a list of strings) as arguments."""
    value = (config_settings or {}).get(key) or []
    if isinstance(value, str):
        value = [value]
    args = []
    for item in value:
        args.extend(shlex.split(item))
    return args


def _run(command, config_settings, *, build_options=False):
    argv = [_binary(), "--python", sys.executable, "--"]
    argv += _options(config_settings, "--global-option") + command
    if build_options:
        argv += _options(config_settings, "--build-option")
    # setup.py's own output goes to stderr: a front end may read stdout.
    result = subprocess.run(argv, stdout=sys.stderr)
    if result.returncode != 0:
        raise SystemExit(
            "ascend_setup.build_meta: `%s` exited with %d" % (shlex.join(argv), result.returncode)
        )


def _single(directory, suffix):
    found = [name for name in os.listdir(directory) if name.endswith(suffix)]
    if len(found) != 1:
        raise SystemExit(
            "ascend_setup.build_meta: expected one *%s in %s, found %s" % (suffix, directory, found)
        )
    return found[0]


def _build_into(target_directory, command, suffix, config_settings, build_options):
    os.makedirs(target_directory, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".ascend-setup-", dir=target_directory) as scratch:
        _run(command + ["--dist-dir", scratch], config_settings, build_options=build_options)
        name = _single(scratch, suffix)
        os.replace(os.path.join(scratch, name), os.path.join(target_directory, name))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return ["wheel"]


def get_requires_for_build_editable(config_settings=None):
    return get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    with tempfile.TemporaryDirectory(prefix=".ascend-setup-", dir=metadata_directory) as scratch:
        _run(["dist_info", "--output-dir", scratch], config_settings)
        name = _single(scratch, ".dist-info")
        shutil.move(os.path.join(scratch, name), os.path.join(metadata_directory, name))
    return name


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build_into(wheel_directory, ["bdist_wheel"], ".whl", config_settings, True)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    command = ["editable_wheel"]
    settings = config_settings or {}
    mode = settings.get("editable-mode") or settings.get("editable_mode")
    if mode:
        command += ["--mode", mode]
    return _build_into(wheel_directory, command, ".whl", config_settings, True)


def _tree_files(root):
    """The tree's source files: git's list in a checkout, else every file but build outputs."""
    if os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(os.path.join(root, ".git")):
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, stdout=subprocess.PIPE, check=True,
        ).stdout.decode()
        return sorted(p for p in listed.split("\0") if p and os.path.isfile(os.path.join(root, p)))
    files = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(
            d for d in subdirs if d not in _BUILD_OUTPUTS and not d.endswith(".egg-info")
        )
        for name in sorted(names):
            files.append(os.path.relpath(os.path.join(directory, name), root))
    return files


def build_sdist(sdist_directory, config_settings=None):
    """setuptools' sdist through the Ascend layer, completed with every source
    file of the tree the layer needs to build the wheel again (CMake project,
    version.txt, third_party/ascend and its patches, pyproject.toml)."""
    name = _build_into(
        sdist_directory, ["sdist", "--formats", "gztar"], ".tar.gz", config_settings, False
    )
    path = os.path.join(sdist_directory, name)
    base = name[: -len(".tar.gz")]
    with tempfile.TemporaryDirectory(prefix=".ascend-setup-", dir=sdist_directory) as scratch:
        with tarfile.open(path) as archive:
            archive.extractall(scratch)
        top = os.path.join(scratch, base)
        root = os.getcwd()
        for relative in _tree_files(root):
            target = os.path.join(top, relative)
            if not os.path.lexists(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(os.path.join(root, relative), target, follow_symlinks=False)
        with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as archive:
            archive.add(top, arcname=base)
        os.replace(path + ".part", path)
    return name
