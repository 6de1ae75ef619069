"""The Ascend layer as the maintainers' in-tree hooks, served natively.

A triton-ascend tree of the in-tree form adopts them with one line: its layer
package, ``third_party/ascend/build/__init__.py``, becomes::

    from ascend_setup.hooks import prepare, activate

setup.py keeps calling ``prepare()`` near its top and ``activate()`` right
before ``setup(...)``. Every front end that runs setup.py (``python3 setup.py
bdist_wheel``, ``pip wheel``, ``pip install [-e]``, ``python -m build``) then
builds with ascend-setup's native layer, in its own interpreter, through the
host module of that interpreter's minor: the same profile, overrides, kwargs,
patches, downloads, job counts and wheel as ``ascend-setup bdist_wheel``.

- ``prepare()``: the tree (the directory of the calling setup.py) is made
  ready: the Ascend defaults in ``os.environ``, the job counts, the
  distributed part, the NPUIR build when the profile and the command ask for
  it. A second call does nothing more.
- ``activate()``: ``setup`` in the caller's globals, and ``setuptools.setup``,
  become a wrapper that applies the layer and calls the real
  ``setuptools.setup`` (as it was when ``activate()`` ran) once; it returns the
  Distribution and sets ``dist`` in the caller's globals.

Settings come from the environment and ``ascend-setup.toml``; ``sys.argv`` is
setuptools'. Under the ``ascend-setup`` command these hooks are never
imported: the command applies the layer itself, once. An interpreter whose
minor has no host module gets an ImportError naming the minors served.
"""

import sys

from . import _install

__all__ = ["LayerError", "activate", "prepare"]


class LayerError(SystemExit):
    """The layer stopped the build.

    ``code`` is the exit code the ``ascend-setup`` command gives for the same
    failure (doc: exit codes), ``phase`` says where it was, ``message`` what
    happened; the message is already on stderr as one line.
    """

    def __init__(self, message, phase, code):
        super().__init__(code)
        self.message = message
        self.phase = phase

    def __str__(self):
        return "ascend-setup: %s (while %s)" % (self.message, self.phase)


_host = _install.load_host()
_host.hooks_init(LayerError)


def _setup_py_globals():
    """The globals of the setup.py that called the hook (through any wrappers)."""
    frame = sys._getframe(2)
    first = frame.f_globals
    while frame is not None:
        if frame.f_globals.get("__name__") == "__main__" and "__file__" in frame.f_globals:
            return frame.f_globals
        frame = frame.f_back
    return first


def prepare():
    """Ready the tree for the build: defaults, job counts, distributed part, NPUIR."""
    _host.hooks_prepare(_setup_py_globals())


def activate():
    """Rebind ``setup`` so that setup.py's ``setup(...)`` builds with the native layer."""
    _host.hooks_activate(_setup_py_globals())
