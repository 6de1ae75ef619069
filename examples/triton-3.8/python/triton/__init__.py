"""Triton (test stand-in): the package layout of upstream, a small real core."""
__version__ = "3.8.0"

from ._C import libtriton  # noqa: E402,F401  the compiled extension


def backends():
    return libtriton.backends()
