"""The run-time half of `rules/scalar.py`: the statements the generated code spells as calls (`assert`,
the two ends of a `with` block, a call with star-arguments, the check of a branch chosen by types), and what
a variable not assigned on a path holds."""

from __future__ import annotations

import operator

import numpy as np

from ..errors import ChadError, UnknownFunction


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


def merged(named: dict, more: dict) -> dict:
    """A call's keyword arguments: those named, then a `**kwargs` dict's."""
    return {**named, **more}


def spread_call(fn: object, args: tuple, kwargs: dict) -> object:
    """`fn(*args, **kwargs)`: a call with star-arguments of a function run as it is."""
    return fn(*args, **kwargs)


def carries_none(result: object, what: str) -> object:
    """The result of a call chadpy runs as it is on values a derivative flows through: exact where it carries
    none out (None, a str, an int or bool, an array of them); anything else is an error, never a silent zero."""
    if result is None or isinstance(result, (str, bytes, bool, int, np.integer, np.bool_)):
        return result
    if isinstance(result, np.ndarray) and result.dtype.kind in "biu":
        return result
    raise UnknownFunction(
        f"{what} has no derivative rule and no Python source chadpy can read; a value a derivative flows through "
        f"goes into it, and it returned {type(result).__name__}, which may carry one: register its derivative "
        "with chadpy.defvjp, or call it on values no derivative flows through"
    )


def unassigned_read(catch: object) -> tuple:
    """An attempted call given a variable not assigned on its path (`rewrite/tries.py`): Python's
    UnboundLocalError reading it, caught when `catch` takes it (then the attempt's failed outcome)."""
    error = UnboundLocalError("a local variable is read where it is not assigned")
    if isinstance(error, catch):
        return (False, error, None)
    raise error


def exception_classes(*handled: object) -> tuple:
    """The classes a `try` statement's handlers take, one flat tuple (a handler's may be a tuple itself)."""
    return tuple(c for h in handled for c in (exception_classes(*h) if isinstance(h, tuple) else (h,)))


def not_an_array(value: object) -> object:
    """The value of `a` in `a op= b` where a is data of a kind seen only when the code runs (a class's attribute)
    and a derivative flows, or typed as an array of unknown shape the function may not own: a number is not
    updated in place (Python makes a new one), an array or a list would be, and another name may see it."""
    if not isinstance(value, (int, float, complex, np.number, np.bool_, str, tuple)):
        raise ChadError(
            "this augmented assignment updates an array in place that another name or the caller may also hold "
            "(chadpy could not see its kind when it read the function; it is an array here): write `a = a + b` "
            "for a new one, or copy it first (`a = a.copy()`)"
        )
    return value


_IN_PLACE = {
    "add": operator.iadd,
    "sub": operator.isub,
    "mul": operator.imul,
    "truediv": operator.itruediv,
    "pow": operator.ipow,
    "mod": operator.imod,
    "floordiv": operator.ifloordiv,
    "matmul": operator.imatmul,
}


def augmented(name: str, a: object, b: object) -> object:
    """`a op= b` as Python makes it, on data no derivative flows through (an array is updated in place: another
    name holding it sees the change)."""
    return _IN_PLACE[name](a, b)


def read_unassigned(name: str) -> None:
    """A read of a variable not assigned on the path taken: Python's error."""
    raise UnboundLocalError(f"cannot access local variable '{name}' where it is not associated with a value")


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


def on_path(cond: object, taken: bool) -> None:
    """The branch chadpy specialised an `if` to, by the kinds of the values it tests (`y is None` where y is
    None), checked when the code runs (a value typed as never None can be None where it joined an optional one)."""
    if bool(cond) is not taken:
        raise ChadError(
            f"chadpy specialised this `if` to its {'first' if taken else 'other'} branch by the kinds of the values "
            "it tests, but this call takes the other one (an optional value?)"
        )
