"""The run-time half of tangent rules (`rules/tangents.py`): what forward-mode code calls besides the
primitives themselves."""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..errors import ChadTypeError


def where_nonzero(mask: Any, v: Any) -> Any:
    """v where mask is non-zero, else 0 (the derivative of `safe_divisor` applied to v). A scalar stays one."""
    if type(mask) is float or isinstance(mask, (int, np.floating)) and np.ndim(v) == 0:
        return v if mask != 0 else 0.0  # (not 0.0 * v: v may be nan or inf there)
    return np.where(np.not_equal(mask, 0), v, 0.0)[()]


def broadcast_like(v: Any, like: Any) -> Any:
    """The tangent v given the shape of the array `like`, as a new array (never v itself: a tangent shares
    data only where its value does)."""
    shape = np.shape(like)
    if type(v) is np.ndarray and v.shape == shape:
        return v.copy()
    return np.array(np.broadcast_to(v, shape), dtype=float)


def joined_zeros(x: Any) -> Any:
    """The zero tangent of x where x is one of a join's values that carries derivatives as a float or an array
    (`v > 0.5 or a`: a bool on one path): 0.0 for a number of any kind, `zeros_like_tangent` otherwise."""
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        return 0.0
    return zeros_like_tangent(x)


def zeros_like_tangent(x: Any) -> Any:
    """The zero tangent of x: 0.0 for a number, float zeros for an array, the same structure for tuples, lists,
    dicts and objects, None where no derivative can flow (an int, a str, None)."""
    kind = type(x)
    if kind is float or isinstance(x, np.floating):
        return 0.0
    if kind is np.ndarray:  # an int array's too: it is given a float tangent where it meets one (`x[k] = ks`)
        return np.zeros(x.shape, x.dtype if x.dtype.kind in "fc" else float)
    if kind is tuple:
        return tuple(map(zeros_like_tangent, x))
    if kind is list:
        return list(map(zeros_like_tangent, x))
    if kind is dict:
        return {k: zeros_like_tangent(v) for k, v in x.items()}
    if isinstance(x, tuple):  # a namedtuple
        return kind(*map(zeros_like_tangent, x))
    if hasattr(x, "__dict__") and not isinstance(
        x, (type, BaseException, types.FunctionType, types.BuiltinFunctionType)
    ):
        # an object of a user class: its attributes' zeros
        zero = object.__new__(kind)
        for name, value in vars(x).items():
            object.__setattr__(zero, name, zeros_like_tangent(value))
        return zero
    return None


def part_or_none(pair: Any, k: int) -> Any:
    """Component k of an attempt's completed result (`rewrite/tries.py`), None where the attempt raised."""
    return None if pair is None else pair[k]


def stop_gradient(x: Any) -> Any:
    """x itself; inside differentiated code, a constant: no derivative flows through it."""
    return x


def _is_discrete(x: Any) -> bool:
    """Whether no derivative flows through x (an int, a bool, a str, None, an int array)."""
    if isinstance(x, np.ndarray):
        return x.dtype.kind not in "fc"
    return x is None or isinstance(x, (bool, int, str, np.integer, np.bool_))


def parts_of(x: Any) -> list | None:
    """The parts of a tuple (a namedtuple's too), a list or a dict, in order; None for anything else."""
    if isinstance(x, (tuple, list)):
        return list(x)
    return list(x.values()) if type(x) is dict else None


def _rebuilt(x: Any, parts: list) -> Any:
    """A container like x with these parts."""
    if type(x) is dict:
        return dict(zip(x, parts))
    if isinstance(x, tuple) and type(x) is not tuple:  # a namedtuple
        return type(x)(*parts)
    return type(x)(parts)


def tangent_size(x: Any) -> int:
    """How many unit tangents x has (a gradient taken in forward mode takes one each): one per float, per element
    of a float array, the sum over a tuple's, list's or dict's parts, none for a discrete value."""
    if type(x) is float or isinstance(x, np.floating):
        return 1
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return x.size
    items = parts_of(x)
    if items is not None:
        return sum(map(tangent_size, items))
    if _is_discrete(x):
        return 0
    raise ChadTypeError(
        "a gradient inside differentiated code (or of a derivative chadpy made) is taken with respect to floats, "
        f"float arrays and tuples, lists and dicts of them, not {type(x).__name__}"
    )


def _with_unit(x: Any, dx: Any, i: int) -> tuple[Any, int]:
    """The tangent dx of x with its i-th element (in `tangent_size`'s order) set to 1, and what is left of i
    past x's elements (i - tangent_size(x) if the element is not in x)."""
    size = tangent_size(x)
    if i >= size or size == 0:
        return dx, i - size
    if isinstance(x, np.ndarray):
        dx.reshape(-1)[i] = 1.0  # dx is a fresh array of zeros
        return dx, -1
    items = parts_of(x)
    if items is None:
        return 1.0, -1
    parts = []
    for item, d in zip(items, parts_of(dx)):
        if i >= 0:
            d, i = _with_unit(item, d, i)
        parts.append(d)
    return _rebuilt(dx, parts), -1


def unit_tangents(args: tuple, k: int, i: int) -> tuple:
    """Zero tangents of the arguments, but for element i of argument k, which is 1 (a unit tangent)."""
    out = tuple(map(zeros_like_tangent, args))
    return (*out[:k], _with_unit(args[k], out[k], i)[0], *out[k + 1 :])


def from_parts(x: Any, parts: list) -> Any:
    """A gradient with respect to x from its parts, one per element of x (in `tangent_size`'s order): the
    structure of x, None where x is discrete."""
    position = 0

    def rebuilt(x: Any) -> Any:
        nonlocal position
        items = parts_of(x)
        if items is not None:
            return _rebuilt(x, [rebuilt(item) for item in items])
        if _is_discrete(x):
            return None
        start, position = position, position + tangent_size(x)
        return np.array(parts[start:position], float).reshape(x.shape) if isinstance(x, np.ndarray) else parts[start]

    return rebuilt(x)


def from_columns(out: Any, x: Any, columns: list) -> Any:
    """A Jacobian of a value like `out` with respect to x from its columns, one per element of x: the output's axes,
    then x's."""
    shape = np.shape(out) + np.shape(x)
    if not shape:
        return columns[0]
    return np.stack([np.asarray(c, dtype=float) for c in columns], axis=-1).reshape(shape)


def columns_ct(d: Any, out: Any, x: Any) -> dict:
    """The cotangent of `from_columns(out, x, columns)`'s columns: each column's part of d."""
    flat = np.asarray(d, dtype=float).reshape(np.shape(out) + (-1,))
    scalar = np.ndim(out) == 0
    return {k: float(flat[..., k]) if scalar else flat[..., k] for k in range(flat.shape[-1])}


def filled_at(dx: Any, x: Any, key: Any) -> Any:
    """The tangent of container x with a part that had none (None: its value carried no derivative, `{'a':
    np.zeros(3)}`) given zeros at `key`, in place (the tangent is the forward code's own): `x[key][i] = v` is about
    to write a derivative into it."""
    if dx[key] is None:
        dx[key] = zeros_like_tangent(x[key])
    return dx
