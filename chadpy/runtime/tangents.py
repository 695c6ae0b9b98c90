"""The run-time half of tangent rules (`rules/tangents.py`): what forward-mode code calls besides the
primitives themselves."""

from __future__ import annotations

from typing import Any

import numpy as np


def where_nonzero(mask: Any, v: Any) -> Any:
    """v where mask is non-zero, else 0 (the derivative of `safe_divisor` applied to v). A scalar stays one."""
    if type(mask) is float or isinstance(mask, (int, np.floating)) and np.ndim(v) == 0:
        return v if mask != 0 else 0.0 * v
    return np.where(np.not_equal(mask, 0), v, 0.0)[()]


def broadcast_like(v: Any, like: Any) -> Any:
    """The tangent v given the shape of the array `like`, as a new array (never v itself: a tangent shares
    data only where its value does)."""
    shape = np.shape(like)
    if type(v) is np.ndarray and v.shape == shape:
        return v.copy()
    return np.array(np.broadcast_to(v, shape), dtype=float)


def zeros_like_tangent(x: Any) -> Any:
    """The zero tangent of x: 0.0 for a number, float zeros for an array, the same structure for tuples, lists,
    dicts and objects, None where no derivative can flow (an int, a str, None)."""
    kind = type(x)
    if kind is float or isinstance(x, np.floating):
        return 0.0
    if kind is np.ndarray:
        return np.zeros(x.shape) if x.dtype.kind in "fc" else None
    if kind is tuple:
        return tuple(map(zeros_like_tangent, x))
    if kind is list:
        return list(map(zeros_like_tangent, x))
    if kind is dict:
        return {k: zeros_like_tangent(v) for k, v in x.items()}
    if isinstance(x, tuple):  # a namedtuple
        return kind(*map(zeros_like_tangent, x))
    if hasattr(x, "__dict__") and not callable(x):  # an object of a user class: its attributes' zeros
        zero = object.__new__(kind)
        for name, value in vars(x).items():
            object.__setattr__(zero, name, zeros_like_tangent(value))
        return zero
    return None


def part_or_none(pair: Any, k: int) -> Any:
    """Component k of an attempt's completed result (`rewrite/tries.py`), None where the attempt raised."""
    return None if pair is None else pair[k]
