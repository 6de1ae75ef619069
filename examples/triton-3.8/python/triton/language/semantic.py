"""Semantic analysis of Triton programs (stand-in)."""


def _check(cond, message):
    if not cond:
        raise ValueError(message)


def binary_op_type(lhs, rhs):
    _check(lhs == rhs, f"incompatible types {lhs} and {rhs}")
    return lhs


def cast(value, dtype):
    return (value, dtype)


def device_assert(cond, msg=""):
    _check(cond, msg)
