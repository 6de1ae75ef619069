"""``python -m ascend_setup [OPTIONS] [SETUP.PY ARGUMENTS]``: ascend-setup for this interpreter.

The launcher installed with this package, run without the environment's
``bin`` on PATH and serving this interpreter (``--python sys.executable``
unless given), e.g. ``python -m ascend_setup --restore-sources``.
"""

import os
import sys

from . import _install


def main():
    args = sys.argv[1:]
    host_options = args[: args.index("--")] if "--" in args else args
    argv = [_install.binary()]
    if not any(arg == "--python" or arg.startswith("--python=") for arg in host_options):
        argv += ["--python", sys.executable]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv + args)


if __name__ == "__main__":
    main()
