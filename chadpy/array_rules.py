"""The run-time halves of the array rules: the transposed derivatives of NumPy's functions.

Each `*_ct` function accepts `Zero` for the incoming cotangent `d` (and returns `Zero`:
`@linear` does that once for all of them, so a rule's body is its formula), a dense
array, a float, or a `Scatter` (densified first). Results may be read-only broadcast
views: a dense cotangent is never mutated (`arrays.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .arrays import Axis, IntTuple, float_dtype, ndarray_of, python_scalar, unbroadcast
from .runtime import Zero


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
    if keepdims:
        return d
    axes = _axes(axis, ndim)
    return np.expand_dims(d, axes) if axes else d


def _t(a: np.ndarray) -> np.ndarray:
    """Swap the last two axes (matrix transpose of a stack of matrices)."""
    return np.swapaxes(a, -1, -2)


def _finish(g: Any, x: Any) -> Any:
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


# ====================================================================== reductions


@linear
def sum_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.sum(x, axis, keepdims=keepdims)`."""
    xa = np.asarray(x)
    return _finish(np.broadcast_to(_expand(ndarray_of(d), xa.ndim, axis, keepdims), xa.shape), x)


@linear
def mean_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.mean(x, axis, keepdims=keepdims)`."""
    xa = np.asarray(x)
    count = 1
    for a in _axes(axis, xa.ndim):
        count *= xa.shape[a]
    # divide before broadcasting: the division touches the result's size, not x's
    return _finish(np.broadcast_to(_expand(ndarray_of(d), xa.ndim, axis, keepdims) / count, xa.shape), x)


def _grouped(x: np.ndarray, axes: IntTuple) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """x with its reduced axes moved last and flattened into one (one row per reduction group),
    and the function putting an array of that layout back into x's."""
    keep = [a for a in range(x.ndim) if a not in axes]
    perm = keep + list(axes)
    xt = np.transpose(x, perm)
    n = 1
    for a in axes:
        n *= x.shape[a]
    back = np.argsort(perm)
    return xt.reshape(xt.shape[: len(keep)] + (n,)), lambda g: np.transpose(g.reshape(xt.shape), back)


def _others_product(x: np.ndarray, axes: IntTuple) -> np.ndarray:
    """For every element, the product of the other elements of its reduction group.

    Exclusive prefix times exclusive suffix products, not `prod / x`: correct when x has zeros."""
    flat, restore = _grouped(x, axes)
    n = flat.shape[-1]
    left = np.ones(flat.shape, float_dtype(flat.dtype))  # float32 stays float32
    right = np.ones_like(left)
    if n > 1:
        np.cumprod(flat[..., :-1], axis=-1, out=left[..., 1:])  # left[j] = x[0] * ... * x[j-1]
        right[..., :-1] = np.cumprod(flat[..., :0:-1], axis=-1)[..., ::-1]  # right[j] = x[j+1] * ... * x[n-1]
    return restore(left * right)


@linear
def prod_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `y = np.prod(x, axis, keepdims=keepdims)` (y is unused: zeros in x are fine)."""
    xa = np.asarray(x)
    return _finish(_expand(ndarray_of(d), xa.ndim, axis, keepdims) * _others_product(xa, _axes(axis, xa.ndim)), x)


@linear
def extremum_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `y = np.max(x, ...)` or `np.min(x, ...)`: `d` split equally among tied positions."""
    xa = np.asarray(x)
    ye = _expand(y, xa.ndim, axis, keepdims)
    hit = xa == ye
    if xa.dtype.kind in "fc":
        hit = hit | (np.isnan(xa) & np.isnan(ye))  # max/min propagate nan: the nan positions are the winners
    count = hit.sum(axis=_axes(axis, xa.ndim), keepdims=True)
    return _finish(hit * (_expand(ndarray_of(d), xa.ndim, axis, keepdims) / count), x)


def _count(x: np.ndarray, axes: IntTuple) -> int:
    """How many elements each reduction group over `axes` has."""
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _safe_divide(num: Any, den: Any) -> np.ndarray:
    """num / den, and 0 where den == 0 (a reduction's singular point: the subgradient of smallest norm)."""
    zero = np.equal(den, 0)
    return np.where(zero, 0.0, num / np.where(zero, 1.0, den))


def _ties(d: Any, x: np.ndarray, y: Any, axis: Axis, keepdims: bool, hit: np.ndarray, over: IntTuple) -> np.ndarray:
    """d (expanded to x's rank) split equally among the positions `hit` marks in each group over `over`."""
    return hit * (_expand(ndarray_of(d), x.ndim, axis, keepdims) / hit.sum(axis=over, keepdims=True))


@linear
def var_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False, ddof: float = 0) -> Any:
    """Cotangent of `x` in `np.var(x, axis, ddof=ddof, keepdims=keepdims)`: 2 d (x - mean) / (n - ddof)."""
    xa = np.asarray(x)
    axes = _axes(axis, xa.ndim)
    centred = xa - xa.mean(axis=axes, keepdims=True)
    de = _expand(ndarray_of(d), xa.ndim, axis, keepdims)
    return _finish(de * (2.0 / (_count(xa, axes) - ddof)) * centred, x)


@linear
def std_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False, ddof: float = 0) -> Any:
    """Cotangent of `x` in `y = np.std(x, ...)`: d (x - mean) / ((n - ddof) y), and 0 where y == 0
    (all of a group equal: std has no derivative there; 0 is its subgradient of smallest norm)."""
    xa = np.asarray(x)
    axes = _axes(axis, xa.ndim)
    centred = xa - xa.mean(axis=axes, keepdims=True)
    de = _expand(ndarray_of(d), xa.ndim, axis, keepdims)
    scale = _safe_divide(de, (_count(xa, axes) - ddof) * _expand(y, xa.ndim, axis, keepdims))
    return _finish(scale * centred, x)


@linear
def average_ct_a(d: Any, y: Any, a: Any, axis: Axis = None, keepdims: bool = False, weights: Any = None) -> Any:
    """Cotangent of `a` in `np.average(a, axis, weights, keepdims=keepdims)`: d w / sum(w)."""
    if weights is None:
        return mean_ct(d, a, axis, keepdims)
    aa = np.asarray(a)
    w, _ = _weights(weights, aa, axis)
    de = _expand(ndarray_of(d), aa.ndim, axis, keepdims)
    return _finish(de * w / w.sum(axis=_axes(axis, aa.ndim), keepdims=True), a)


@linear
def average_ct_weights(d: Any, y: Any, a: Any, axis: Axis = None, keepdims: bool = False, weights: Any = None) -> Any:
    """Cotangent of `weights` in `y = np.average(a, axis, weights, ...)`: d (a - y) / sum(w), summed back
    to the weights' shape."""
    aa = np.asarray(a)
    w, back = _weights(weights, aa, axis)
    axes = _axes(axis, aa.ndim)
    de = _expand(ndarray_of(d), aa.ndim, axis, keepdims)
    g = de * (aa - _expand(y, aa.ndim, axis, keepdims)) / w.sum(axis=axes, keepdims=True)
    return _finish(back(np.broadcast_to(g, aa.shape)), weights)


def _weights(weights: Any, a: np.ndarray, axis: Axis) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """np.average's weights laid out to broadcast against `a` (NumPy: a's shape, or the shape of the
    averaged axes in the order `axis` names them), and the map summing an a-shaped array back to theirs."""
    w = np.asarray(weights)
    if w.shape == a.shape:
        return w, lambda g: g
    named = [axis % a.ndim] if isinstance(axis, int) else [k % a.ndim for k in axis]
    order = np.argsort(named)  # the weights' axes in the order of a's axes
    shape = [1] * a.ndim
    for k in named:
        shape[k] = a.shape[k]
    others = tuple(k for k in range(a.ndim) if k not in named)
    back = np.argsort(order)
    return np.transpose(w, order).reshape(shape), lambda g: np.transpose(
        g.sum(axis=others).reshape([a.shape[k] for k in sorted(named)]), back
    )


@linear
def ptp_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.ptp(x, axis, keepdims=keepdims)` = max - min: the max's cotangent minus
    the min's (ties split equally, as for `np.max`; a constant group gets 0: they cancel)."""
    hi, lo = np.max(x, axis=axis, keepdims=keepdims), np.min(x, axis=axis, keepdims=keepdims)
    return extremum_ct(d, hi, x, axis, keepdims) - extremum_ct(d, lo, x, axis, keepdims)


@linear
def median_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.median(x, axis, keepdims=keepdims)`: d to the middle element of each
    group, or d/2 to each of the two middle ones, in the order of a stable sort (tied values: the
    ones the sort puts in the middle, as `np.sort`'s cotangent follows its permutation)."""
    xa = np.asarray(x)
    axes = _axes(axis, xa.ndim)
    flat, restore = _grouped(xa, axes)
    n = flat.shape[-1]
    middle = np.zeros(n)
    middle[(n - 1) // 2] += 0.5
    middle[n // 2] += 0.5
    order = np.argsort(flat, axis=-1, kind="stable")
    weights = np.empty(flat.shape)
    np.put_along_axis(weights, order, np.broadcast_to(middle, flat.shape), axis=-1)
    return _finish(restore(weights) * _expand(ndarray_of(d), xa.ndim, axis, keepdims), x)


@linear
def cumsum_ct(d: Any, x: Any, axis: int | None = None) -> Any:
    """Cotangent of `x` in `np.cumsum(x, axis)` (raveled when axis is None): the reversed cumulative sum."""
    xa = np.asarray(x)
    d = ndarray_of(d)
    if axis is None:
        return _finish(np.cumsum(d[::-1])[::-1].reshape(xa.shape), x)
    return np.flip(np.cumsum(np.flip(d, axis), axis=axis), axis)


@linear
def cumprod_ct(d: Any, y: Any, x: Any, axis: int | None = None) -> Any:
    """Cotangent of `x` in `y = np.cumprod(x, axis)`: for x[k], y[k-1] * s[k] with s[k] = sum over i >= k of
    d[i] * x[k+1] * ... * x[i] (s[k] = d[k] + x[k+1] s[k+1]). Without zeros in x that is
    revcumsum(d * y)[k] / x[k], vectorised; with zeros the recurrence runs along the axis (exact)."""
    xa = np.asarray(x)
    ax = -1 if axis is None else axis
    xs, ds, ys = (
        np.moveaxis(np.asarray(v).reshape(-1) if axis is None else np.asarray(v), ax, -1) for v in (x, ndarray_of(d), y)
    )
    if np.all(xs != 0):
        g = np.flip(np.cumsum(np.flip(ds * ys, -1), axis=-1), -1) / xs
    else:
        s = np.array(ds, dtype=np.result_type(ds, xs, np.float64))
        for k in range(xs.shape[-1] - 2, -1, -1):
            s[..., k] += xs[..., k + 1] * s[..., k + 1]
        before = np.concatenate([np.ones_like(ys[..., :1]), ys[..., :-1]], axis=-1)
        g = before * s
    g = np.moveaxis(g, -1, ax)
    return _finish(g.reshape(xa.shape), x)


@linear
def norm_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False, ord: Any = None) -> Any:
    """Cotangent of `x` in `y = np.linalg.norm(x, ord, axis, keepdims)`.

    Vectors: the 2-norm d x / y; ord 1: d sign(x); ord ±inf: d sign(x) at the largest (smallest) |x|, split
    among ties; ord 0 (a count): 0; another p: d sign(x) |x|^(p-1) / y^(p-1). Matrices: 'fro' as the 2-norm;
    ord ±1 (±inf): d sign(x) in the column (row) of largest (smallest) absolute sum, split among ties; ord
    ±2: d u v^T of the largest (smallest) singular value; 'nuc': d U V^T over the non-zero singular values.
    Where y == 0 the cotangent is 0 (the subgradient of smallest norm), as at x_i == 0 for p < 1."""
    xa = np.asarray(x)
    de = _expand(ndarray_of(d), xa.ndim, axis, keepdims)
    ye = _expand(y, xa.ndim, axis, keepdims)
    axes = _axes(axis, xa.ndim)
    sign = np.sign(xa)
    if ord is None or ord == "fro" or ord == 2 and len(axes) == 1:
        g = _safe_divide(de * xa, ye)
    elif len(axes) == 1:
        if ord == 1:
            g = de * sign
        elif ord in (np.inf, -np.inf):
            g = sign * _ties(d, xa, y, axis, keepdims, np.abs(xa) == ye, axes)
        elif ord == 0:
            g = np.zeros(xa.shape)
        else:
            mag = np.abs(xa)
            g = de * sign * _safe_divide(_safe_divide(mag**ord, mag), _safe_divide(ye**ord, ye))
    else:
        rows, cols = (0, 1) if axis is None else (axis[0] % xa.ndim, axis[1] % xa.ndim)
        if ord in (1, -1, np.inf, -np.inf):
            summed, chosen = (rows, cols) if ord in (1, -1) else (cols, rows)
            hit = np.abs(xa).sum(axis=summed, keepdims=True) == ye
            g = sign * _ties(d, xa, y, axis, keepdims, hit, (chosen,))
        else:
            g = de * np.moveaxis(_singular_ct(np.moveaxis(xa, (rows, cols), (-2, -1)), ord), (-2, -1), (rows, cols))
    return _finish(g, x)


def _singular_ct(x: np.ndarray, ord: Any) -> np.ndarray:
    """d(norm)/dx of a stack of matrices (the last two axes) for ord 2, -2, 'nuc', from its SVD."""
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    if ord == "nuc":
        return (u * (s > 0)[..., None, :]) @ vh
    k = 0 if ord == 2 else -1
    return u[..., :, k, None] @ vh[..., k, None, :]


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
    d2, a2, b2 = _matmul_parts(d, a, b)
    return unbroadcast(d2 @ _t(b2), a2).reshape(np.shape(a))


@linear
def matmul_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `a @ b`."""
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
    return _finish((ndarray_of(d) @ np.ravel(b)).reshape(np.shape(a)), a)


@linear
def outer_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.outer(a, b)`."""
    return _finish((np.ravel(a) @ ndarray_of(d)).reshape(np.shape(b)), b)


# ====================================================================== shape operations


@linear
def transpose_ct(d: Any, x: Any, axes: Sequence[int] | None = None) -> Any:
    """Cotangent of `x` in `np.transpose(x, axes)`: transpose back by the inverse permutation."""
    d = ndarray_of(d)
    if axes is None:
        return d.T
    return np.transpose(d, np.argsort([a % d.ndim for a in axes]))


@linear
def reshape_ct(d: Any, x: Any) -> Any:
    """Cotangent of `x` in `np.reshape(x, ...)` (also ravel/flatten/squeeze/expand_dims)."""
    return _finish(ndarray_of(d).reshape(np.shape(x)), x)


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
    return {i: _finish(d[(*lead, i)], x) for i, x in enumerate(xs)}


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
        return _finish(g.reshape(xa.shape).astype(dd.dtype if dd.dtype.kind == "f" else np.float64), x)

    ct.__name__ = ct.__qualname__ = name
    return ct


tile_ct = gathered(np.tile, "tile_ct")
repeat_ct = gathered(np.repeat, "repeat_ct")
take_ct = gathered(np.take, "take_ct")
take_along_axis_ct = gathered(np.take_along_axis, "take_along_axis_ct")
pad_ct = gathered(np.pad, "pad_ct")
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
    return _finish(np.flip(ndarray_of(d), axis), x)


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
        return _finish(g.reshape(xa.shape), x)
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
        out[i] = _finish(d[(*lead, slice(start, start + shape[axis]))].reshape(np.shape(x)), x)
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
    inside: Any = True
    if lo is not None:
        inside = np.greater_equal(x, lo)
    if hi is not None:
        inside = inside & np.less_equal(x, hi)
    return _select_ct(d, x, inside)


@linear
def where_ct_a(d: Any, cond: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `np.where(cond, a, b)`."""
    return unbroadcast(np.where(cond, ndarray_of(d), 0.0), a)


@linear
def where_ct_b(d: Any, cond: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.where(cond, a, b)`."""
    return unbroadcast(np.where(cond, 0.0, ndarray_of(d)), b)


# ====================================================================== sequences of arrays


@linear
def sum_seq_ct(d: object, xs: object, n: int) -> object:
    """Cotangent of xs in `sum(xs)`: d for each of its first n elements (summed back to their shapes)."""
    if isinstance(xs, np.ndarray):
        return sum_ct(d, xs, 0)
    if isinstance(d, float):
        return dict.fromkeys(range(n), d)
    return {k: unbroadcast(d, xs[k]) for k in range(n)}


@linear
def prod_seq_ct(d: Any, xs: Sequence[Any]) -> Any:
    """Cotangent of xs in `math.prod(xs)`: d times the product of the others (no division: zeros are fine)."""
    cts, left = {}, 1.0
    for k, x in enumerate(xs):
        cts[k] = left
        left = left * x  # not *=: cts[k] holds the old value (an array for rows of a 2-D array)
    right = 1.0
    for k in range(len(xs) - 1, -1, -1):
        cts[k] = d * cts[k] * right
        right = right * xs[k]
    return _as_sequence_ct(cts, xs)


def _as_sequence_ct(cts: dict[int, Any], xs: Any) -> Any:
    """A sequence's cotangent {position: cotangent} as an array's where the sequence is an array."""
    return np.array([cts[k] for k in range(len(xs))]) if isinstance(xs, np.ndarray) else cts


@linear
def dist_ct(d: float, y: float, p: Sequence[float], q: Sequence[float]) -> Any:
    """Cotangent of p in `y = math.dist(p, q)` (of q: swap them): d (p - q) / y, 0 where p == q (as hypot)."""
    return _as_sequence_ct({k: 0.0 if y == 0 else d * (a - b) / y for k, (a, b) in enumerate(zip(p, q))}, p)


@linear
def extreme_seq_ct(d: object, y: object, xs: object) -> object:
    """Cotangent of xs in `max(xs)` / `min(xs)`: all of d to the element Python returned."""
    if isinstance(xs, np.ndarray):
        return extremum_ct(d, y, xs, 0)
    for k, x in enumerate(xs):
        if x is y:
            return {k: d}
    return {list(xs).index(y): d}


@linear
def astype_ct(d: Any, x: Any) -> Any:
    """Cotangent of `x` in `np.astype(x, dtype)` (`x.astype(float)`): d in x's float dtype."""
    d = ndarray_of(d)
    return _finish(
        d.astype(np.result_type(np.asarray(x).dtype, np.float16)) if d.dtype != np.asarray(x).dtype else d, x
    )


@linear
def array_ct(d: object, x: object) -> object:
    """Cotangent of x in `np.array(x)`: an array's; a number's; a (nested) list's or tuple's
    {position: cotangent of that element}."""
    return _nested_ct(d, x)


def _nested_ct(d: object, x: object) -> object:
    if isinstance(x, np.ndarray):
        return d
    if not isinstance(x, (list, tuple)):
        return python_scalar(ndarray_of(d))
    d = ndarray_of(d)
    d = np.broadcast_to(d, np.shape(x)) if d.shape != np.shape(x) else d
    return {k: _nested_ct(d[k], item) for k, item in enumerate(x)}
