"""Backends are linked or installed here as subpackages."""
