"""The run-time halves of the reductions' rules (`rules/reductions.py`): sums, means, products,
extrema, statistics, cumulative reductions and norms, each with `axis`/`keepdims`; and of the
functions of sequences of numbers or arrays (`sum(xs)`, `math.prod`, `max(xs)`, `np.array(xs)`).
`numpy.py` says what every `*_ct` function accepts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .array_cotangents import index_ct, ndarray_of, unbroadcast
from .arrays import Axis, IntTuple, broadcast, float_dtype, python_scalar
from .cotangents import Zero
from .facts import reads_shape_only
from .numpy import _axes, _expand, as_cotangent_of, linear


def _whole_float64(d: Any, x: Any, axis: Axis) -> bool:
    """The common case of a reduction's rule: a float cotangent of the whole float64 array's result."""
    return axis is None and type(d) is float and type(x) is np.ndarray and x.dtype == np.float64


@reads_shape_only(1)
@linear
def sum_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.sum(x, axis, keepdims=keepdims)`."""
    if _whole_float64(d, x, axis):
        return broadcast(d, x.shape)  # the common case, without the conversions below
    xa = np.asarray(x)
    return as_cotangent_of(broadcast(_expand(ndarray_of(d), xa.ndim, axis, keepdims), xa.shape), x)


@reads_shape_only(1)
@linear
def mean_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.mean(x, axis, keepdims=keepdims)`."""
    if _whole_float64(d, x, axis) and x.size:
        return broadcast(d / x.size, x.shape)  # the common case, without the conversions below
    xa = np.asarray(x)
    count = 1
    for a in _axes(axis, xa.ndim):
        count *= xa.shape[a]
    # divide before broadcasting: the division touches the result's size, not x's
    return as_cotangent_of(broadcast(_expand(ndarray_of(d), xa.ndim, axis, keepdims) / count, xa.shape), x)


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
    return as_cotangent_of(
        _expand(ndarray_of(d), xa.ndim, axis, keepdims) * _others_product(xa, _axes(axis, xa.ndim)), x
    )


@linear
def extremum_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `y = np.max(x, ...)` or `np.min(x, ...)`: `d` split equally among tied positions."""
    if axis is None and not keepdims and type(x) is np.ndarray and x.ndim:
        # the whole array's extremum: a one-hot at the winners (two passes over x, not seven)
        hit = np.isnan(x) if y != y else x == y  # max/min propagate nan: the nan positions win
        if np.count_nonzero(hit) == 1:  # one winner (the usual case): its position, found by the first True
            k = int(hit.argmax())
            return index_ct(d, x, k if x.ndim == 1 else _position(k, x.shape))
        winners = np.flatnonzero(hit)
        return index_ct(d / len(winners), x, winners if x.ndim == 1 else np.unravel_index(winners, x.shape))
    xa = np.asarray(x)
    return as_cotangent_of(extremum_weights(y, xa, axis, keepdims) * _expand(ndarray_of(d), xa.ndim, axis, keepdims), x)


def _position(k: int, shape: IntTuple) -> IntTuple:
    """The index of the k-th element of an array of this shape, in C order (`np.unravel_index` of one int)."""
    index = []
    for n in reversed(shape):
        k, i = divmod(k, n)
        index.append(i)
    return tuple(reversed(index))


def extremum_weights(y: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> np.ndarray:
    """d y / d x for `y = np.max(x, ...)` or `np.min`, in x's shape: 1/count at the tied winners of each group, 0
    elsewhere (the subgradient `extremum_ct` takes; discrete: piecewise constant in x)."""
    xa = np.asarray(x)
    ye = _expand(y, xa.ndim, axis, keepdims)
    hit = xa == ye
    if xa.dtype.kind in "fc" and np.isnan(ye).any():  # (a check of y alone: three passes over x fewer without nan)
        hit = hit | (np.isnan(xa) & np.isnan(ye))  # max/min propagate nan: the nan positions are the winners
    count = hit.sum(axis=_axes(axis, xa.ndim), keepdims=True)
    if count.size and count.max() == 1:  # no ties (the usual case): the winners' mask itself, without a division
        return hit.astype(float_dtype(xa.dtype))
    return np.divide(hit, count, dtype=float_dtype(xa.dtype))


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


@linear
def var_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False, ddof: float = 0) -> Any:
    """Cotangent of `x` in `np.var(x, axis, ddof=ddof, keepdims=keepdims)`: 2 d (x - mean) / (n - ddof)."""
    xa = np.asarray(x)
    axes = _axes(axis, xa.ndim)
    centred = xa - xa.mean(axis=axes, keepdims=True)
    de = _expand(ndarray_of(d), xa.ndim, axis, keepdims)
    return as_cotangent_of(de * (2.0 / (_count(xa, axes) - ddof)) * centred, x)


@linear
def std_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False, ddof: float = 0) -> Any:
    """Cotangent of `x` in `y = np.std(x, ...)`: d (x - mean) / ((n - ddof) y), and 0 where all of a group
    are equal (std has no derivative there; 0 is its subgradient of smallest norm). Equal up to rounding:
    the mean of equal numbers may be an ulp off them, and (x - mean) / y would then be O(1) noise."""
    xa = np.asarray(x)
    axes = _axes(axis, xa.ndim)
    centred = xa - xa.mean(axis=axes, keepdims=True)
    de = _expand(ndarray_of(d), xa.ndim, axis, keepdims)
    ye = np.where(_differ(xa, centred, axes), _expand(y, xa.ndim, axis, keepdims), 0.0)
    scale = _safe_divide(de, (_count(xa, axes) - ddof) * ye)
    return as_cotangent_of(scale * centred, x)


def _differ(x: np.ndarray, centred: np.ndarray, axes: IntTuple) -> np.ndarray:
    """Whether each group's elements differ by more than rounding (keepdims layout)."""
    spread = np.abs(centred).max(axis=axes, keepdims=True)
    return ~(spread <= 4 * np.finfo(float_dtype(x.dtype)).eps * np.abs(x).max(axis=axes, keepdims=True))  # NaN differs


def varies(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """1.0 where a group of `np.std(x, axis, keepdims=keepdims)` has elements that differ by more than rounding, else
    0.0, in the result's shape: std's tangent is 0 where they are all equal, as `std_ct`'s cotangent (discrete)."""
    xa = np.asarray(x)
    axes = _axes(axis, xa.ndim)
    mask = _differ(xa, xa - xa.mean(axis=axes, keepdims=True), axes).astype(float_dtype(xa.dtype))
    return (mask if keepdims else np.squeeze(mask, axis=axes))[()]


@linear
def average_ct_a(d: Any, y: Any, a: Any, axis: Axis = None, keepdims: bool = False, weights: Any = None) -> Any:
    """Cotangent of `a` in `np.average(a, axis, weights, keepdims=keepdims)`: d w / sum(w)."""
    if weights is None:
        return mean_ct(d, a, axis, keepdims)
    aa = np.asarray(a)
    w, _ = _weights(weights, aa, axis)
    de = _expand(ndarray_of(d), aa.ndim, axis, keepdims)
    return as_cotangent_of(de * w / w.sum(axis=_axes(axis, aa.ndim), keepdims=True), a)


@linear
def average_ct_weights(d: Any, y: Any, a: Any, axis: Axis = None, keepdims: bool = False, weights: Any = None) -> Any:
    """Cotangent of `weights` in `y = np.average(a, axis, weights, ...)`: d (a - y) / sum(w), summed back
    to the weights' shape."""
    aa = np.asarray(a)
    w, back = _weights(weights, aa, axis)
    axes = _axes(axis, aa.ndim)
    de = _expand(ndarray_of(d), aa.ndim, axis, keepdims)
    g = de * (aa - _expand(y, aa.ndim, axis, keepdims)) / w.sum(axis=axes, keepdims=True)
    return as_cotangent_of(back(np.broadcast_to(g, aa.shape)), weights)


def laid_out_weights(weights: Any, a: Any, axis: Axis = None) -> np.ndarray:
    """np.average's weights laid out to broadcast against `a` (`_weights`): what average's tangent multiplies by."""
    return _weights(weights, np.asarray(a), axis)[0]


@linear
def laid_out_weights_ct(d: Any, weights: Any, a: Any, axis: Axis = None) -> Any:
    """Cotangent of `weights` in `laid_out_weights(weights, a, axis)`: summed and laid back to the weights' shape."""
    w, back = _weights(weights, np.asarray(a), axis)
    return as_cotangent_of(back(unbroadcast(ndarray_of(d), w)), weights)


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
    xa = np.asarray(x)
    return as_cotangent_of(ptp_weights(xa, axis) * _expand(ndarray_of(d), xa.ndim, axis, keepdims), x)


def ptp_weights(x: Any, axis: Axis = None) -> np.ndarray:
    """d ptp / d x in x's shape: the max's weights minus the min's (`extremum_weights`; discrete)."""
    hi, lo = np.max(x, axis=axis, keepdims=True), np.min(x, axis=axis, keepdims=True)
    return extremum_weights(hi, x, axis, True) - extremum_weights(lo, x, axis, True)


@linear
def median_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.median(x, axis, keepdims=keepdims)`: d to the middle element of each
    group, or d/2 to each of the two middle ones, in the order of a stable sort (tied values: the
    ones the sort puts in the middle, as `np.sort`'s cotangent follows its permutation)."""
    xa = np.asarray(x)
    return as_cotangent_of(median_weights(xa, axis) * _expand(ndarray_of(d), xa.ndim, axis, keepdims), x)


def median_weights(x: Any, axis: Axis = None) -> np.ndarray:
    """d median / d x in x's shape: 1 at each group's middle element, or 1/2 at each of its two middle ones, in the
    order of a stable sort (discrete)."""
    xa = np.asarray(x)
    flat, restore = _grouped(xa, _axes(axis, xa.ndim))
    n = flat.shape[-1]
    middle = np.zeros(n)
    middle[(n - 1) // 2] += 0.5
    middle[n // 2] += 0.5
    order = np.argsort(flat, axis=-1, kind="stable")
    weights = np.empty(flat.shape)
    np.put_along_axis(weights, order, np.broadcast_to(middle, flat.shape), axis=-1)
    return restore(weights)


@linear
def cumsum_ct(d: Any, x: Any, axis: int | None = None) -> Any:
    """Cotangent of `x` in `np.cumsum(x, axis)` (raveled when axis is None): the reversed cumulative sum."""
    xa = np.asarray(x)
    d = ndarray_of(d)
    if axis is None:
        return as_cotangent_of(np.cumsum(d[::-1])[::-1].reshape(xa.shape), x)
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
    return as_cotangent_of(g.reshape(xa.shape), x)


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
    axes = _axes(axis, xa.ndim)
    if ord is None or ord == "fro" or ord == 2 and len(axes) == 1:
        g = _safe_divide(de * xa, _expand(y, xa.ndim, axis, keepdims))
    elif piecewise_norm(ord, len(axes) == 2):
        g = de * norm_weights(y, xa, axis, keepdims, ord)
    elif len(axes) == 1:
        if ord == 0:
            g = np.zeros(xa.shape)
        else:
            mag, ye = np.abs(xa), _expand(y, xa.ndim, axis, keepdims)
            g = de * np.sign(xa) * _safe_divide(_safe_divide(mag**ord, mag), _safe_divide(ye**ord, ye))
    else:
        rows, cols = (0, 1) if axis is None else (axis[0] % xa.ndim, axis[1] % xa.ndim)
        u, s, vh = np.linalg.svd(np.moveaxis(xa, (rows, cols), (-2, -1)), full_matrices=False)
        g = de * np.moveaxis((u * singular_mask(s, ord)) @ vh, (-2, -1), (rows, cols))
    return as_cotangent_of(g, x)


def piecewise_norm(ord: Any, matrix: bool) -> bool:
    """Whether the derivative of a norm of this `ord` is piecewise constant in x (`norm_weights`)."""
    return ord in (1, np.inf, -np.inf) or matrix and ord == -1


def norm_weights(y: Any, x: Any, axis: Axis = None, keepdims: bool = False, ord: Any = None) -> np.ndarray:
    """The weights w in the tangent sum(dx w |x|^q) / y^q of `y = np.linalg.norm(x, ord, axis, keepdims)`
    (`norm_exponent`), in x's shape (discrete). sign(x) for a p-norm (the 2-norm, 'fro'); vectors' ord ±inf: sign(x)
    at the largest (smallest) |x|, split among ties; matrices' ord ±1 (±inf): sign(x) in the column (row) of largest
    (smallest) absolute sum, split among ties; 0 for ord 0 and the matrix norms of the SVD (±2, 'nuc')."""
    xa = np.asarray(x)
    axes = _axes(axis, xa.ndim)
    matrix = len(axes) == 2
    sign = np.sign(xa).astype(float_dtype(xa.dtype), copy=False)
    if ord == 0 and not matrix or matrix and ord in (2, -2, "nuc"):
        return np.zeros_like(sign)
    if not (ord in (np.inf, -np.inf) or matrix and ord in (1, -1)):
        return sign
    ye = _expand(y, xa.ndim, axis, keepdims)
    if matrix:
        rows, cols = (0, 1) if axis is None else (axis[0] % xa.ndim, axis[1] % xa.ndim)
        summed, axes = (rows, (cols,)) if ord in (1, -1) else (cols, (rows,))
        hit = np.abs(xa).sum(axis=summed, keepdims=True) == ye
    else:
        hit = np.abs(xa) == ye
    return sign * (hit / hit.sum(axis=axes, keepdims=True))


def norm_exponent(ord: Any, matrix: bool) -> float:
    """q in a norm's tangent sum(dx w |x|^q) / y^q (`norm_weights`): p - 1 for a vector's p-norm, 1 for the 2-norm
    and 'fro', 0 where the weights are all of it (ord ±inf, matrices' ±1) or it is 0 (ord 0, the SVD's norms)."""
    if ord is None or ord == "fro":
        return 1.0
    if matrix or ord in (0, np.inf, -np.inf):
        return 0.0
    return float(ord) - 1.0


def singular_mask(s: np.ndarray, ord: Any) -> np.ndarray:
    """The singular values a matrix norm's derivative U diag(mask) V^T takes, laid out to scale U's columns: the
    largest (ord 2), the smallest (-2), the non-zero ones ('nuc'), none for another ord (discrete); a zero one never
    (where y == 0 the derivative is 0, the subgradient of smallest norm)."""
    if ord not in (2, -2, "nuc"):
        return np.zeros((*s.shape[:-1], 1, s.shape[-1]), s.dtype)
    mask = s > 0
    if ord != "nuc":
        mask[..., np.arange(s.shape[-1]) != (0 if ord == 2 else s.shape[-1] - 1)] = False
    return mask[..., None, :].astype(s.dtype)


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
    return as_cotangent_of(
        d.astype(np.result_type(np.asarray(x).dtype, np.float16)) if d.dtype != np.asarray(x).dtype else d, x
    )


@linear
def sequence_ct(ct: Callable, at: int, *args: Any) -> Any:
    """Cotangent of a list or tuple x of numbers or arrays in a NumPy function of it (`np.sum([a, b])`):
    `ct`'s (of `args`, x at position `at`) for the array NumPy makes of x, given back in x's structure."""
    x = args[at]
    if isinstance(x, np.ndarray):
        return ct(*args)
    g = ct(*args[:at], np.asarray(x), *args[at + 1 :])
    return Zero if g is Zero else array_ct(g, x)


@linear
def array_ct(d: object, x: object) -> object:
    """Cotangent of x in `np.array(x)`: an array's; a number's; a (nested) list's or tuple's
    {position: cotangent of that element}."""
    return _nested_ct(d, x)


@linear
def tolist_ct(d: Any, x: np.ndarray) -> Any:
    """Cotangent of x in `x.tolist()`: each element's, from the nested lists' ({position: ...} at each level;
    a number's for a 0-d x)."""
    out = np.zeros(x.shape, float_dtype(x.dtype))

    def fill(ct: Any, at: tuple) -> None:
        if isinstance(ct, dict):
            for k, part in ct.items():
                fill(part, (*at, k))
        elif ct is not Zero:
            out[at] += ct

    fill(d, ())
    return out


def _nested_ct(d: object, x: object) -> object:
    if isinstance(x, np.ndarray):
        return d
    if not isinstance(x, (list, tuple)):
        return python_scalar(ndarray_of(d))
    d = ndarray_of(d)
    d = np.broadcast_to(d, np.shape(x)) if d.shape != np.shape(x) else d
    return {k: _nested_ct(d[k], item) for k, item in enumerate(x)}
