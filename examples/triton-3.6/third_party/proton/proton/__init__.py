"""Proton profiler (stand-in)."""
