"""The run-time half of `rules/scalar.py`: the statements the generated code spells as calls (`assert`,
the two ends of a `with` block, a call with star-arguments)."""

from __future__ import annotations


def enter(cm: object) -> object:
    """`cm.__enter__()` (a `with` statement's start)."""
    return cm.__enter__()


def leave(cm: object) -> None:
    """`cm.__exit__(None, None, None)` (a `with` statement's end, reached without an exception)."""
    cm.__exit__(None, None, None)


def check(cond: object, message: object = None) -> None:
    """`assert cond, message` in generated code (kept even under python -O)."""
    if not cond:
        raise AssertionError(message) if message is not None else AssertionError


def spread_call(fn: object, args: tuple, kwargs: dict) -> object:
    """`fn(*args, **kwargs)`: a call with star-arguments of a function run as it is."""
    return fn(*args, **kwargs)
