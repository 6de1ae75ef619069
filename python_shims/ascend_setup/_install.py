"""Where this installation of ascend-setup keeps its launcher and its host modules.

One rule for every Python part of ascend-setup (the PEP 517 backend, the hooks,
``python -m ascend_setup``): the launcher is ``$ASCEND_SETUP_BINARY``, else the
one installed with this package (``<prefix>/bin/ascend-setup``, or the
environment's scripts directory), else ``ascend-setup`` on PATH; the host
modules are where that launcher looks for them, ``libexec/ascend-setup``
beside it or beside its directory.
"""

import importlib.util
import os
import shutil
import sys
import sysconfig


def binary():
    """The ascend-setup launcher to run."""
    explicit = os.environ.get("ASCEND_SETUP_BINARY")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    # <prefix>/lib/pythonX.Y/site-packages/ascend_setup -> <prefix>/bin
    candidates = [
        os.path.join(here, os.pardir, os.pardir, os.pardir, os.pardir, "bin", "ascend-setup"),
        os.path.join(sysconfig.get_path("scripts"), "ascend-setup"),
    ]
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    found = shutil.which("ascend-setup")
    if found:
        return found
    raise RuntimeError(
        "no ascend-setup binary (set ASCEND_SETUP_BINARY, or install ascend-setup into this "
        "environment)"
    )


def host_directory():
    """The directory of the host modules and their manifest, hosts.txt (the launcher's rule)."""
    launcher = os.path.realpath(binary())
    bin_directory = os.path.dirname(launcher)
    for candidate in (
        os.path.join(bin_directory, "libexec", "ascend-setup"),
        os.path.join(os.path.dirname(bin_directory), "libexec", "ascend-setup"),
    ):
        if os.path.isfile(os.path.join(candidate, "hosts.txt")):
            return candidate
    raise ImportError(
        "no host modules next to %s (libexec/ascend-setup/hosts.txt is missing): reinstall "
        "ascend-setup" % launcher
    )


def _served(directory):
    """hosts.txt: {"3.11": "ascend-setup-host-3.11.so", ...}."""
    hosts = {}
    with open(os.path.join(directory, "hosts.txt"), encoding="utf-8") as manifest:
        for line in manifest:
            fields = line.split()
            if len(fields) >= 2 and not line.startswith("#"):
                hosts[fields[0]] = fields[1]
    return hosts


def load_host():
    """The host module of this interpreter's minor, imported into this interpreter.

    Raises ImportError naming the minors this installation serves when it
    serves none of this interpreter's.
    """
    loaded = sys.modules.get("ascend_setup._host")
    if loaded is not None:
        return loaded
    directory = host_directory()
    hosts = _served(directory)
    version = "%d.%d" % sys.version_info[:2]
    served = ", ".join(sorted(hosts, key=lambda v: tuple(int(p) for p in v.split("."))))
    what = None
    if sys.implementation.name != "cpython":
        what = "a %s interpreter" % sys.implementation.name
    elif sysconfig.get_config_var("Py_GIL_DISABLED"):
        what = "a free-threaded CPython %s" % version
    elif version not in hosts:
        what = "CPython %s" % version
    if what is not None:
        raise ImportError(
            "ascend_setup.hooks: %s is %s; this ascend-setup serves CPython %s: run setup.py with "
            "one of those, or rebuild ascend-setup with -DASCEND_SETUP_PYTHONS=%s"
            % (sys.executable, what, served, sys.executable),
            name="ascend_setup._host",
        )
    path = os.path.join(directory, hosts[version])
    spec = importlib.util.spec_from_file_location("_ascend_setup_host", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["ascend_setup._host"] = module
    return module
