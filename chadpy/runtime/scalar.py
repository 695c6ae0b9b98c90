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


def unassigned_read(catch: object) -> tuple:
    """An attempted call given a variable not assigned on its path (`rewrite/tries.py`): Python's
    UnboundLocalError reading it, caught when `catch` takes it (then the attempt's failed outcome)."""
    error = UnboundLocalError("a local variable is read where it is not assigned")
    if isinstance(error, catch):
        return (False, error, None)
    raise error


class _Unassigned:
    """The value of a variable read on a path where it is not assigned (after an `if` that assigns it on one
    side, a `try` body that raised first): using it raises Python's UnboundLocalError, as reading it does in
    the plain call. Inference gives it no type (bottom), so a branch's join ignores it."""

    def _raise(self, *args: object) -> None:
        raise UnboundLocalError("a local variable is used where it is not assigned")

    __bool__ = __float__ = __int__ = __index__ = __len__ = __iter__ = __array__ = __getitem__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _raise
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = _raise

    def __repr__(self) -> str:
        return "unassigned"


UNASSIGNED = _Unassigned()
