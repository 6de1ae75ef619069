"""ascend-setup\x27s Python side: the PEP 517/660 backend (build_meta)."""
