"""ascend-setup's Python side.

- ``ascend_setup.build_meta``: the PEP 517/660 backend (the ``ascend-setup`` command per hook);
- ``ascend_setup.hooks``: ``prepare()`` and ``activate()``, the in-tree hooks served natively;
- ``python -m ascend_setup``: the launcher for this interpreter.
"""
