"""Array helpers shared by the runtime: cotangent dtypes, zero-stride broadcasts and stand-ins, Python
scalars. The array cotangents themselves are `array_cotangents.py`."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .facts import reads_shape_only

Axis = int | tuple[int, ...] | None
IntTuple = tuple[int, ...]


# ====================================================================== helpers


def float_dtype(dtype: Any) -> np.dtype:
    """The cotangent dtype for a primal dtype: floats and complexes keep theirs (float32 stays float32),
    integers and booleans get float64."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def broadcast(d: Any, shape: IntTuple) -> np.ndarray:
    """np.broadcast_to(d, shape), a read-only view; for a 0-d d (a reduction's scalar cotangent) a
    zero-stride array built directly, a third of np.broadcast_to's fixed cost."""
    d = np.asarray(d)
    if d.ndim:
        return np.broadcast_to(d, shape)
    view = np.ndarray(shape, d.dtype, d, 0, (0,) * len(shape))
    view.flags.writeable = False
    return view


_NOTHING = bytes(64)  # the one element of every stand-in (wider than any numeric dtype)


def like(x: np.ndarray) -> np.ndarray:
    """A stand-in for x where only its shape and dtype are read: a read-only zero-stride array of
    x's shape and dtype over zero bytes, so x's memory can be freed (x itself for an object array)."""
    return x if x.dtype.hasobject else _stand_in(x.shape, x.dtype)


@functools.lru_cache(maxsize=1024)  # read-only, so shared: a loop's records make one per shape
def _stand_in(shape: IntTuple, dtype: np.dtype) -> np.ndarray:
    return np.ndarray(shape, dtype, _NOTHING, 0, (0,) * len(shape))


def python_scalar(v: Any) -> float | complex:
    """The cotangent of a scalar primal: a Python float (complex for complex values)."""
    v = np.asarray(v)
    if v.ndim:
        v = v.sum()  # a broadcast cotangent of a scalar operand
    return complex(v) if v.dtype.kind == "c" else float(v)


@reads_shape_only(0)
def element_count(x: Any) -> int:
    """How many elements x has (1 for a number)."""
    return x.size if type(x) is np.ndarray else np.size(x)
