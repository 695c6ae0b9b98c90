"""The run-time halves of the array rules: the transposed derivatives of NumPy's functions.

Each `*_ct` function accepts `Zero` for the incoming cotangent `d` (and returns `Zero`:
`@linear` does that once for all of them, so a rule's body is its formula), a dense
array, a float, or a `Scatter` (densified first). Results may be read-only broadcast
views: a dense cotangent is never mutated (`array_cotangents.py`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ChadError
from .array_cotangents import Outers, ndarray_of, unbroadcast
from .arrays import Axis, IntTuple, float_dtype, python_scalar
from .cotangents import Zero, add, tuple_part
from .facts import adds_into, reads_shape_only


def _axes(axis: Axis, ndim: int) -> IntTuple:
    """Normalised, sorted, non-negative reduction axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def _expand(d: Any, ndim: int, axis: Axis, keepdims: bool) -> np.ndarray:
    """A reduction's result (or its cotangent) with the reduced axes put back as length-1 axes,
    so that it broadcasts against the operand."""
    d = np.asarray(d)
    if keepdims or axis is None:  # all axes reduced: a 0-d result broadcasts as it is
        return d
    axes = _axes(axis, ndim)
    return np.expand_dims(d, axes) if axes else d


def _t(a: np.ndarray) -> np.ndarray:
    """Swap the last two axes (matrix transpose of a stack of matrices)."""
    return np.swapaxes(a, -1, -2)


def as_cotangent_of(g: Any, x: Any) -> Any:
    """`g` as the cotangent of `x`: an ndarray of x's float dtype for an ndarray primal (a float64 `g`, made
    from a Python float cotangent, is cast back for a float32 x), a Python scalar otherwise."""
    if not isinstance(x, np.ndarray):
        return python_scalar(g)
    dtype = float_dtype(x.dtype)
    return g if g.dtype == dtype or dtype.kind != "f" else g.astype(dtype)


def linear(rule: Callable[..., Any]) -> Callable[..., Any]:
    """A transposed derivative, linear in the incoming cotangent `d` (its first argument): no
    cotangent (`Zero`, or None) gives `Zero` without running the formula."""

    @functools.wraps(rule)
    def guarded(d: Any, *args: Any, **kwargs: Any) -> Any:
        if d is Zero or d is None:
            return Zero
        return rule(d, *args, **kwargs)

    return guarded


# ====================================================================== linear algebra


def _matmul_parts(d: Any, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a and b promoted to stacks of matrices as np.matmul does (1-D a -> a row, 1-D b -> a column),
    and d with the axes matmul dropped put back."""
    a, b, d = np.asarray(a), np.asarray(b), ndarray_of(d)
    if b.ndim == 1:
        b, d = b[:, None], d[..., None]
    if a.ndim == 1:
        a, d = a[None, :], d[..., None, :]
    return d, a, b


@linear
def matmul_ct_a(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `a @ b` (1-D, 2-D, and batched with broadcast batch axes summed back)."""
    if type(d) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim <= 2:
        if b.ndim == 2:
            return d @ b.T  # a matrix times a matrix
        # a matrix times a vector: the term of a sum summed later by one product (b is copied: a later
        # in-place write to it must not change this term)
        return Outers(d, b.copy())
    d2, a2, b2 = _matmul_parts(d, a, b)
    return unbroadcast(d2 @ _t(b2), a2).reshape(np.shape(a))


@adds_into
def add_matmul_ct_a(ct: Any, d: Any, a: Any, b: Any) -> Any:
    """ct + matmul_ct_a(d, a, b), appending the term to ct when both are sums of outer products
    (a matrix times a vector, step after step of a loop)."""
    if type(ct) is Outers and type(d) is np.ndarray and type(b) is np.ndarray and b.ndim == 1 == d.ndim:
        return ct.append(d, b.copy())
    return add(ct, matmul_ct_a(d, a, b))


@linear
def matmul_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `a @ b`."""
    if type(d) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray:
        if a.ndim == 2 and b.ndim <= 2:
            return d @ a if b.ndim == 1 else a.T @ d  # a matrix times a vector or a matrix: the usual case
        if a.ndim == 1 == d.ndim:
            return Outers(a.copy(), d)  # a row vector times a matrix (`h @ W`): as in matmul_ct_a
    d2, a2, b2 = _matmul_parts(d, a, b)
    return unbroadcast(_t(a2) @ d2, b2).reshape(np.shape(b))


@linear
def dot_ct_a(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `np.dot(a, b)`: a scalar operand means multiplication, otherwise
    dot(a, b)[A..., B..., n] = sum_k a[A..., k] * b[B..., k, n] (any ndim)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(ndarray_of(d) * np.asarray(b), a)
    a, b, d = np.asarray(a), np.asarray(b), ndarray_of(d)
    if b.ndim == 1:
        return np.multiply.outer(d, b)
    # contract d's B... and n axes with b's B... and n axes (all of b's but the k axis)
    d_axes = list(range(a.ndim - 1, d.ndim))
    b_axes = list(range(b.ndim - 2)) + [b.ndim - 1]
    return np.tensordot(d, b, axes=(d_axes, b_axes))


@linear
def dot_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.dot(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(ndarray_of(d) * np.asarray(a), b)
    a, b, d = np.asarray(a), np.asarray(b), ndarray_of(d)
    lead = list(range(a.ndim - 1))
    g = np.tensordot(a, d, axes=(lead, lead))  # shape (k, B..., n) or (k,) for 1-D b
    return np.moveaxis(g, 0, b.ndim - 2) if b.ndim > 1 else g


@linear
def outer_ct_a(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `np.outer(a, b)` (which ravels both operands)."""
    return as_cotangent_of((ndarray_of(d) @ np.ravel(b)).reshape(np.shape(a)), a)


@linear
def outer_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.outer(a, b)`."""
    return as_cotangent_of((np.ravel(a) @ ndarray_of(d)).reshape(np.shape(b)), b)


# ====================================================================== elementwise selections


def _select_ct(d: Any, x: Any, weight: Any) -> Any:
    d = ndarray_of(d)
    return unbroadcast(d * np.asarray(weight, float_dtype(d.dtype)), x)  # float32 stays float32


def _winner(x: Any, other: Any, beats: Any, nan_loses: bool = False) -> np.ndarray:
    """1 where x beats other, 1/2 on ties (the cotangent is split between the operands), else 0.
    With `nan_loses` (`np.fmax`, `np.fmin`), a number beats a NaN."""
    wins = beats(x, other)
    if nan_loses:
        wins = wins | np.isnan(other) & ~np.isnan(x)
    return np.where(wins, 1.0, np.where(np.equal(x, other), 0.5, 0.0))


_BEATS = {
    "maximum": (np.greater, False),
    "minimum": (np.less, False),
    "fmax": (np.greater, True),
    "fmin": (np.less, True),
}


def selection_weight(x: Any, other: Any, fn: str) -> Any:
    """d fn(x, other) / d x for `fn` one of "maximum", "minimum", "fmax", "fmin": `_winner`'s 1, 1/2 or 0, the
    weights of the cotangent rules below (discrete), in the broadcast shape."""
    beats, nan_loses = _BEATS[fn]
    return _winner(x, other, beats, nan_loses)[()]


@linear
def maximum_ct_a(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `np.maximum(a, b)`: d where a wins, half of it on ties."""
    return _select_ct(d, a, _winner(a, b, np.greater))


@linear
def maximum_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.maximum(a, b)`."""
    return _select_ct(d, b, _winner(b, a, np.greater))


@linear
def minimum_ct_a(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `np.minimum(a, b)`."""
    return _select_ct(d, a, _winner(a, b, np.less))


@linear
def minimum_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.minimum(a, b)`."""
    return _select_ct(d, b, _winner(b, a, np.less))


@linear
def fmax_ct(d: Any, x: Any, other: Any) -> Any:
    """Cotangent of `x` in `np.fmax(x, other)` (or `np.fmax(other, x)`): as `np.maximum`'s, but a NaN
    loses (its cotangent goes to the number fmax returns)."""
    return _select_ct(d, x, _winner(x, other, np.greater, nan_loses=True))


@linear
def fmin_ct(d: Any, x: Any, other: Any) -> Any:
    """Cotangent of `x` in `np.fmin(x, other)` (or `np.fmin(other, x)`)."""
    return _select_ct(d, x, _winner(x, other, np.less, nan_loses=True))


def safe_divisor(x: Any) -> Any:
    """x with its zeros made ones: the divisor of a formula whose numerator is 0 where x is (`np.sinc`,
    `np.hypot`), so the quotient is 0 there without a division by zero. A scalar stays a scalar."""
    return np.where(np.equal(x, 0), 1.0, x)[()]


@linear
def clip_ct(d: Any, x: Any, lo: Any, hi: Any) -> Any:
    """Cotangent of `x` in `np.clip(x, lo, hi)`: d where lo <= x <= hi, else 0 (lo/hi may be None)."""
    return _select_ct(d, x, clip_inside(x, lo, hi))


def clip_inside(x: Any, lo: Any, hi: Any) -> Any:
    """Whether lo <= x <= hi (lo/hi may be None), in the broadcast shape: d np.clip(x, lo, hi) / d x (discrete)."""
    inside: Any = np.ones(np.shape(x), bool)
    if lo is not None:
        inside = inside & np.greater_equal(x, lo)
    if hi is not None:
        inside = inside & np.less_equal(x, hi)
    return inside[()]


@linear
def where_ct_a(d: Any, cond: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `np.where(cond, a, b)`."""
    return unbroadcast(np.where(cond, ndarray_of(d), 0.0), a)


@linear
def where_ct_b(d: Any, cond: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.where(cond, a, b)`."""
    return unbroadcast(np.where(cond, 0.0, ndarray_of(d)), b)


@linear
def nan_to_num_ct(d: Any, x: Any) -> Any:
    """Cotangent of `x` in `np.nan_to_num(x)`: d where x is finite; 0 where a NaN or an infinity was replaced
    by a constant."""
    return _select_ct(d, x, np.isfinite(x))


@linear
def diff_ct(d: Any, x: Any, n: int = 1, axis: int = -1) -> Any:
    """Cotangent of `x` in `np.diff(x, n, axis)`: the transpose of each difference, d[k] going to x[k + 1]
    and -d[k] to x[k] along the axis, n times (the first differences of the padded cotangent, negated)."""
    g = ndarray_of(d)
    for _ in range(n):
        edge = [(0, 0)] * g.ndim
        edge[axis] = (1, 1)
        g = -np.diff(np.pad(g, edge), axis=axis)
    return as_cotangent_of(g.astype(float_dtype(np.result_type(x)), copy=False), x)


# ====================================================================== tuple results of elementwise functions


@linear
def frexp_ct(d: Any, y: Any) -> Any:
    """Cotangent of x in `m, e = frexp(x)` (x = m * 2**e; the exponent e is discrete): dm * 2**-e."""
    dm, e = tuple_part(d, 0, Zero), y[1]
    if dm is Zero:
        return Zero
    return np.ldexp(ndarray_of(dm), -e) if isinstance(e, np.ndarray) else math.ldexp(dm, -int(e))


@linear
def modf_ct(d: Any) -> Any:
    """Cotangent of x in `frac, whole = modf(x)` (the whole part is discrete): d frac."""
    return tuple_part(d, 0, Zero)


@linear
def divmod_ct_a(d: Any, a: Any) -> Any:
    """Cotangent of a in `q, r = divmod(a, b)` (the quotient is discrete; r = a - b q): dr."""
    return unbroadcast(tuple_part(d, 1, Zero), a)


@linear
def divmod_ct_b(d: Any, y: Any, b: Any) -> Any:
    """Cotangent of b in `q, r = divmod(a, b)`: -q dr."""
    dr = tuple_part(d, 1, Zero)
    return Zero if dr is Zero else unbroadcast(-(ndarray_of(dr) * y[0]), b)


# ====================================================================== np.add.at, pad, interp, linspace, partition


def added_at(x: np.ndarray, key: Any, v: Any) -> Any:
    """The values `x[key]` holds after `np.add.at(x, key, v)` (NumPy's unbuffered `x[key] += v`: a position
    `key` names twice gets both values), which the front end writes `x[key] = added_at(x, key, v)`: a
    position named twice is written twice with its one total. Computed by `np.add.at` itself on scratch
    space, so they are the same floats; `np.zeros` leaves the pages `key` misses untouched (O(|key|))."""
    scratch = np.zeros(x.shape, x.dtype)
    scratch[key] = x[key]
    np.add.at(scratch, key, v)
    return scratch[key]


@reads_shape_only(1)
@linear
def added_at_ct(d: Any, x: np.ndarray, key: Any, v: Any) -> Any:
    """Cotangent of `v` in `added_at(x, key, v)`: each element of v (broadcast to x[key]'s shape) is in the
    total of every element of x[key] at its position, so it gets the sum of their cotangents."""
    g = ndarray_of(d)
    sums = np.zeros(x.shape, float_dtype(g.dtype))
    np.add.at(sums, key, g)
    return as_cotangent_of(np.asarray(unbroadcast(sums[key], np.asarray(v))), v)


PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")  # the ones that only copy x's elements


def _pad_sources(x: np.ndarray, pad_width: Any, mode: str) -> np.ndarray:
    """`np.pad` of x's positions: where each element of the padded array comes from, a constant's place
    holding -1 - (2 * axis + side) (NumPy fills the corners with the later axis's constant)."""
    if mode not in PAD_MODES:
        raise ChadError(f"the derivative of `np.pad` with mode={mode!r} is not supported (only {', '.join(PAD_MODES)})")
    positions = np.arange(x.size).reshape(x.shape)
    if mode != "constant":
        return np.pad(positions, pad_width, mode=mode)
    markers = -1 - np.arange(2 * x.ndim).reshape(x.ndim, 2)
    return np.pad(positions, pad_width, mode="constant", constant_values=markers)


@reads_shape_only(1)
@linear
def pad_ct(d: Any, x: Any, pad_width: Any, mode: str, constant_values: Any, which: int) -> Any:
    """Cotangent of `x` (which=0) or `constant_values` (which=3) in `np.pad(x, pad_width, mode,
    constant_values=...)`: each position gets the sum of the cotangents of its copies; the constants' places
    are summed per (axis, side), then to constant_values' shape (NumPy broadcasts it to a pair per axis)."""
    xa = np.asarray(x)
    g = ndarray_of(d)
    constants = 2 * xa.ndim
    sources = _pad_sources(xa, pad_width, mode) + constants  # the constants' places first, in reverse
    sums = np.bincount(sources.reshape(-1), np.broadcast_to(g, sources.shape).reshape(-1), constants + xa.size)
    sums = sums.astype(float_dtype(g.dtype), copy=False)
    if which == 0:
        return as_cotangent_of(sums[constants:].reshape(xa.shape), x)
    if isinstance(constant_values, (list, tuple)):
        raise ChadError("the derivative of `np.pad` in `constant_values` needs it as a number or an array")
    pairs = sums[:constants][::-1].reshape(xa.ndim, 2)
    return as_cotangent_of(np.asarray(unbroadcast(pairs, np.asarray(constant_values))), constant_values)


def _interp_pieces(x: Any, xp: Any, fp: Any) -> tuple[np.ndarray, ...]:
    """For each x: the piece [xp[i-1], xp[i]] its value is on (a knot starts the piece on its right, the last
    knot ends the last piece, as in JAX), its place t in it, the piece's slope, and whether x is below xp[0]
    or above xp[-1] (where NumPy gives the constants fp[0] or `left`, fp[-1] or `right`)."""
    x, xp, fp = (np.asarray(a, dtype=float) for a in (x, xp, fp))
    below, above = x < xp[0], x > xp[-1]
    if len(xp) == 1:  # one knot: its value everywhere (t = 0 puts x on fp[0])
        return np.ones(x.shape, np.intp), np.zeros(x.shape), np.zeros(x.shape), below, above
    i = np.clip(np.searchsorted(xp, x, side="right"), 1, len(xp) - 1)
    width = xp[i] - xp[i - 1]
    width = np.where(width == 0, 1.0, width)  # a repeated knot: NumPy's value is a knot's, not on a slope
    return i, (x - xp[i - 1]) / width, (fp[i] - fp[i - 1]) / width, below, above


@linear
def interp_ct(d: Any, x: Any, xp: Any, fp: Any, left: Any, right: Any, which: int) -> Any:
    """Cotangent of x (which=0), xp (1), fp (2), left (3) or right (4) in `np.interp(x, xp, fp, left, right)`.
    Inside [xp[0], xp[-1]] the value is (1 - t) fp[i-1] + t fp[i], t = (x - xp[i-1]) / (xp[i] - xp[i-1]): x
    gets the slope s, fp the weights 1 - t and t, xp[i-1] and xp[i] -s (1 - t) and -s t. Outside, the value
    is fp[0] or fp[-1] (`left` or `right` where given), and x and xp get 0."""
    i, t, slope, below, above = _interp_pieces(x, xp, fp)
    g = np.broadcast_to(np.asarray(ndarray_of(d), dtype=float), t.shape)
    if which >= 3:
        return python_scalar(np.sum(g * (below if which == 3 else above)))
    inside = ~(below | above)
    if which == 0:
        return as_cotangent_of(g * slope * inside, x)
    if which == 1:
        lower, upper = -g * slope * (1.0 - t) * inside, -g * slope * t * inside
    else:
        lower, upper = g * (1.0 - t) * inside, g * t * inside
    n = len(np.asarray(xp))
    sums = np.bincount(np.ravel(i - 1), np.ravel(lower), n + 1) + np.bincount(np.ravel(i), np.ravel(upper), n + 1)
    sums = sums[:n]
    if which == 2:  # fp[0] below the range, fp[-1] above it, unless `left`, `right` stand there
        sums[0] += 0.0 if left is not None else np.sum(g * below)
        sums[-1] += 0.0 if right is not None else np.sum(g * above)
    return as_cotangent_of(sums, (xp, fp)[which - 1])


def interp_slope(x: Any, xp: Any, fp: Any) -> Any:
    """d np.interp(x, xp, fp) / d x: the slope of the piece each x is on inside [xp[0], xp[-1]], 0 outside
    (`_interp_pieces`'s). Linear in fp; a float for a float x."""
    _, _, slope, below, above = _interp_pieces(x, xp, fp)
    out = slope * ~(below | above)
    return out if isinstance(x, np.ndarray) else float(out)


@linear
def interp_slope_ct(d: Any, x: Any, xp: Any, fp: Any, which: int) -> Any:
    """Cotangent of xp (which=1) or fp (2) in `s = interp_slope(x, xp, fp)`, s = (fp[i] - fp[i-1]) / (xp[i] - xp[i-1])
    inside: fp[i] gets d / width and fp[i-1] -d / width; xp[i] gets -d s / width and xp[i-1] d s / width."""
    i, _, slope, below, above = _interp_pieces(x, xp, fp)
    knots = np.asarray(xp, dtype=float)
    n = len(knots)
    if n == 1:  # one knot: no slope
        return as_cotangent_of(np.zeros(1), (xp, fp)[which - 1])
    width = knots[i] - knots[i - 1]
    g = np.asarray(ndarray_of(d), dtype=float) * ~(below | above) / np.where(width == 0, 1.0, width)  # as the slope
    if which == 1:
        g = -g * slope
    sums = np.bincount(np.ravel(i), np.ravel(g), n) - np.bincount(np.ravel(i - 1), np.ravel(g), n)
    return as_cotangent_of(sums, (xp, fp)[which - 1])


@linear
def linspace_ct(d: Any, start: Any, stop: Any, num: int, endpoint: bool, which: int) -> Any:
    """Cotangent of `start` (which=0) or `stop` (1) in `np.linspace(start, stop, num, endpoint)`: element k is
    start + (stop - start) k / div (div = num - 1 with the endpoint, else num; element 0 is start when
    div is 0), so start gets the sum of d (1 - k / div) and stop that of d k / div (over the first axis)."""
    div = num - 1 if endpoint else num
    weights = np.arange(num) / div if div > 0 else np.zeros(num)
    if which == 0:
        weights = 1.0 - weights
    g = np.tensordot(weights, ndarray_of(d), axes=(0, 0))
    x = (start, stop)[which]
    return as_cotangent_of(np.asarray(unbroadcast(g, np.asarray(x))), x)


@linear
def partition_ct(d: Any, y: Any, x: Any, kth: Any, axis: int | None = -1) -> Any:
    """Cotangent of `x` in `y = np.partition(x, kth, axis)`: d put back through the permutation that made
    y, `np.argpartition`'s (the same selection), checked against y; should it differ, y's elements are
    matched to x's through a stable sort of each (equal values are interchangeable)."""
    xa, d = np.asarray(x), ndarray_of(d)
    if axis is None:
        xa, axis = xa.reshape(-1), 0
    order = np.argpartition(xa, kth, axis=axis)
    if not np.array_equal(np.take_along_axis(xa, order, axis=axis), y, equal_nan=True):
        order = np.empty(xa.shape, np.intp)
        np.put_along_axis(
            order, np.argsort(y, axis=axis, kind="stable"), np.argsort(xa, axis=axis, kind="stable"), axis=axis
        )
    g = np.empty(xa.shape, float_dtype(d.dtype))
    np.put_along_axis(g, order, d, axis=axis)
    return as_cotangent_of(g.reshape(np.shape(x)), x)
