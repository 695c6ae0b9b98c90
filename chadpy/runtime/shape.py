"""The run-time halves of the shape operations' rules (`rules/shape.py`): each moves the cotangent
back where the operation moved the elements, summing where one was copied (`numpy.py` says what
every `*_ct` function accepts)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .array_cotangents import dense, ndarray_of, unbroadcast
from .arrays import Axis, IntTuple
from .cotangents import Zero, tuple_part
from .facts import reads_shape_only
from .numpy import as_cotangent_of, linear


@reads_shape_only(1)
@linear
def transpose_ct(d: Any, x: Any, axes: Sequence[int] | None = None) -> Any:
    """Cotangent of `x` in `np.transpose(x, axes)`: transpose back by the inverse permutation."""
    d = ndarray_of(d)
    if axes is None:
        return d.T
    return np.transpose(d, np.argsort([a % d.ndim for a in axes]))


@reads_shape_only(1)
@linear
def reshape_ct(d: Any, x: Any) -> Any:
    """Cotangent of `x` in `np.reshape(x, ...)` (also ravel/flatten/squeeze/expand_dims)."""
    return as_cotangent_of(ndarray_of(d).reshape(np.shape(x)), x)


@reads_shape_only(1)
@linear
def concatenate_ct(d: Any, xs: Sequence[Any], axis: int | None = 0) -> Any:
    """Cotangent of the sequence `xs` in `np.concatenate(xs, axis)`, as the sparse dict {i: ct of xs[i]}."""
    d = ndarray_of(d)
    out: dict[int, Any] = {}
    start = 0
    if axis is None:  # concatenation of the raveled inputs
        flat = d.reshape(-1)
        for i, x in enumerate(xs):
            n = int(np.size(x))
            out[i] = flat[start : start + n].reshape(np.shape(x))
            start += n
        return out
    ax = axis % d.ndim
    lead = (slice(None),) * ax
    for i, x in enumerate(xs):
        n = np.shape(x)[ax]
        out[i] = d[(*lead, slice(start, start + n))]  # a view: fine, cotangents are never mutated
        start += n
    return out


@linear
def stack_ct(d: Any, xs: Sequence[Any], axis: int = 0) -> Any:
    """Cotangent of the sequence `xs` in `np.stack(xs, axis)`, as the sparse dict {i: ct of xs[i]}."""
    d = ndarray_of(d)
    lead = (slice(None),) * (axis % d.ndim)
    return {i: as_cotangent_of(d[(*lead, i)], x) for i, x in enumerate(xs)}


def gathered(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The transposed derivative `name(d, x, *args)` of `y = fn(x, *args)` for an `fn` that only moves,
    copies and zero-fills x's elements (`np.tile`, `np.take`, `np.pad`, `np.diag`, `np.triu`): `fn` of x's
    positions (numbered from 1; a 0 in the result is a filled zero) says where each element of y came from,
    and the cotangents of all the copies of an element are summed (`np.bincount`). O(size of y + size of x)."""

    @linear
    def ct(d: Any, x: Any, *args: Any) -> Any:
        xa = np.asarray(x)
        where = np.asarray(fn(np.arange(1, xa.size + 1).reshape(xa.shape), *args))
        dd = np.broadcast_to(ndarray_of(d), where.shape)
        g = np.bincount(where.reshape(-1), weights=dd.reshape(-1), minlength=xa.size + 1)[1:]
        return as_cotangent_of(g.reshape(xa.shape).astype(dd.dtype if dd.dtype.kind == "f" else np.float64), x)

    ct.__name__ = ct.__qualname__ = name
    return ct


tile_ct = gathered(np.tile, "tile_ct")
repeat_ct = gathered(np.repeat, "repeat_ct")
take_ct = gathered(np.take, "take_ct")
take_along_axis_ct = gathered(np.take_along_axis, "take_along_axis_ct")
diag_ct = gathered(np.diag, "diag_ct")
diagonal_ct = gathered(np.diagonal, "diagonal_ct")
triu_ct = gathered(np.triu, "triu_ct")
tril_ct = gathered(np.tril, "tril_ct")
roll_ct = gathered(np.roll, "roll_ct")
rot90_ct = gathered(np.rot90, "rot90_ct")
_diagonal_sum_ct = gathered(np.diagonal, "_diagonal_sum_ct")


@linear
def trace_ct(d: Any, x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Cotangent of `x` in `np.trace(x, offset, axis1, axis2)`: d on each element of the diagonal."""
    return _diagonal_sum_ct(ndarray_of(d)[..., None], x, offset, axis1, axis2)


@linear
def swapaxes_ct(d: Any, x: Any, axis1: int, axis2: int) -> Any:
    """Cotangent of `x` in `np.swapaxes(x, axis1, axis2)`: swapped back (a view)."""
    return np.swapaxes(ndarray_of(d), axis1, axis2)


@linear
def moveaxis_ct(d: Any, x: Any, source: Any, destination: Any) -> Any:
    """Cotangent of `x` in `np.moveaxis(x, source, destination)`: moved back (a view)."""
    return np.moveaxis(ndarray_of(d), destination, source)


@linear
def flip_ct(d: Any, x: Any, axis: Axis = None) -> Any:
    """Cotangent of `x` in `np.flip(x, axis)` (and `fliplr`, `flipud`): flipped back (a view)."""
    return as_cotangent_of(np.flip(ndarray_of(d), axis), x)


@linear
def broadcast_to_ct(d: Any, x: Any, shape: Any = None) -> Any:
    """Cotangent of `x` in `np.broadcast_to(x, shape)`: summed over the broadcast axes."""
    return unbroadcast(ndarray_of(d), x)


@linear
def sort_ct(d: Any, x: Any, axis: int | None = -1) -> Any:
    """Cotangent of `x` in `np.sort(x, axis)`: d put back through the permutation a stable sort of x makes
    (tied elements are equal, so any order of theirs sorts x; the stable one is chadpy's)."""
    xa = np.asarray(x)
    d = ndarray_of(d)
    if axis is None:
        g = np.empty(xa.size, d.dtype)
        g[np.argsort(xa, axis=None, kind="stable")] = d
        return as_cotangent_of(g.reshape(xa.shape), x)
    g = np.empty(xa.shape, d.dtype)
    np.put_along_axis(g, np.argsort(xa, axis=axis, kind="stable"), d, axis=axis)
    return g


def _joined_ct(d: Any, xs: Sequence[Any], parts: Sequence[IntTuple], axis: int) -> dict[int, Any]:
    """{i: cotangent of xs[i]} for the concatenation along `axis` of the xs reshaped to `parts`."""
    d = ndarray_of(d)
    lead = (slice(None),) * axis
    out: dict[int, Any] = {}
    start = 0
    for i, (x, shape) in enumerate(zip(xs, parts)):
        out[i] = as_cotangent_of(d[(*lead, slice(start, start + shape[axis]))].reshape(np.shape(x)), x)
        start += shape[axis]
    return out


@linear
def vstack_ct(d: Any, xs: Sequence[Any]) -> Any:
    """Cotangent of the sequence `xs` in `np.vstack(xs)` (rows: 1-D parts are rows)."""
    return _joined_ct(d, xs, [np.shape(np.atleast_2d(x)) for x in xs], 0)


@linear
def hstack_ct(d: Any, xs: Sequence[Any]) -> Any:
    """Cotangent of the sequence `xs` in `np.hstack(xs)` (along axis 1, or 0 for 1-D parts)."""
    parts = [np.shape(np.atleast_1d(x)) for x in xs]
    return _joined_ct(d, xs, parts, 0 if len(parts[0]) == 1 else 1)


@linear
def column_stack_ct(d: Any, xs: Sequence[Any]) -> Any:
    """Cotangent of the sequence `xs` in `np.column_stack(xs)` (1-D parts are columns)."""
    return _joined_ct(d, xs, [np.shape(x) + (1,) if np.ndim(x) < 2 else np.shape(x) for x in xs], 1)


@linear
def split_ct(d: Any, parts: Sequence[Any], x: Any, axis: int = 0) -> Any:
    """Cotangent of `x` in `parts = np.split(x, ..., axis)` (or `np.array_split`): the parts' cotangents
    (a list's: {k: ct}) joined back along the axis, zeros for the parts that got none."""
    cts = [dense(tuple_part(d, k, Zero), part) for k, part in enumerate(parts)]
    return as_cotangent_of(np.concatenate(cts, axis=axis), x)


@linear
def meshgrid_ct(d: Any, k: int, indexing: str, *xs: Any) -> Any:
    """Cotangent of `xs[k]` in `np.meshgrid(*xs, indexing=indexing)`: output k is xs[k] along its own axis
    (with "xy", the first two axes are swapped) broadcast along the others, so its cotangent is summed
    over the others."""
    shape = [int(np.size(x)) for x in xs]
    axis = k
    if indexing == "xy" and len(xs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        axis = {0: 1, 1: 0}.get(k, k)
    g = dense(tuple_part(d, k, Zero), np.empty(shape))
    g = np.sum(g, axis=tuple(a for a in range(len(shape)) if a != axis))
    return as_cotangent_of(np.asarray(g).reshape(np.shape(xs[k])), xs[k])


def partition_order(y: Any, x: Any, kth: Any, axis: int | None = -1) -> np.ndarray:
    """Where each element of `y = np.partition(x, kth, axis)` comes from along the axis (x raveled for axis None):
    the permutation `numpy.partition_ct` puts the cotangent back through, so a tangent taken through it is the
    transpose of that rule, ties included."""
    xa = np.asarray(x)
    if axis is None:
        xa, axis = xa.reshape(-1), 0
    order = np.argpartition(xa, kth, axis=axis)
    if np.array_equal(np.take_along_axis(xa, order, axis=axis), y, equal_nan=True):
        return order
    order = np.empty(xa.shape, np.intp)  # y's elements matched to x's through a stable sort of each
    np.put_along_axis(
        order, np.argsort(y, axis=axis, kind="stable"), np.argsort(xa, axis=axis, kind="stable"), axis=axis
    )
    return order
