"""The run-time half of chadpy for NumPy arrays: array cotangents and the transposed derivatives of array primitives.

Cotangent representations of an array-valued primal (docs/design.md section 4):

- `Zero`, the O(1) zero shared with the scalar/tuple runtime (`chadpy.runtime`);
- a dense ndarray. It is NEVER mutated in place once created: generated code may put
  the same dense array in several cotangent slots (`dx = dr; dy = dr`), so every
  operation here builds a new array (or a read-only view) instead of writing into one;
- a Python/NumPy float, for numpy scalar primals such as `a[i]` of a 1-D array;
- a `Scatter`: index contributions `[(index, value), ...]` plus an optional dense
  `base`, collected once by `Scatter.densify` with `np.add.at`. This is the O(1)
  one-hot of the paper: the cotangent of `x[i]` must not cost the size of `x`.

Cotangents are used affinely (never read again after being added somewhere), so a
`Scatter` is uniquely owned and `Scatter + Scatter` may extend one of its arguments
in place; that keeps k one-hot additions at O(k) in total (Section 4.3).

Array primitives give their cotangents through the `*_ct` functions below; each one
accepts `Zero` for the incoming cotangent `d` (and returns `Zero`: `@linear` does that
once for all of them, so a rule's body is its formula), a dense array, a float, or a
`Scatter` (densified first). Results may be read-only broadcast views.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .runtime import Zero

Axis = int | tuple[int, ...] | None
IntTuple = tuple[int, ...]


# ====================================================================== helpers


def _float_dtype(dtype: Any) -> np.dtype:
    """The cotangent dtype for a primal dtype: floats and complexes keep theirs (float32 stays float32),
    integers and booleans get float64."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _dtype_of(x: Any) -> np.dtype:
    return _float_dtype(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)


def _is_int(i: Any) -> bool:
    # bool is an int to Python but a mask to NumPy (x[True] adds an axis)
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _int_tuple(index: Any) -> IntTuple | None:
    """`index` as a non-empty tuple of ints if it is an int or a tuple of ints (a plain element/row
    lookup, which composes and groups), else None."""
    if _is_int(index):
        return (int(index),)
    if isinstance(index, tuple) and index and all(_is_int(i) for i in index):
        return tuple(int(i) for i in index)
    return None


def _arr(d: Any) -> np.ndarray:
    """A non-Zero cotangent as an ndarray (no copy unless it is a Scatter)."""
    return d.densify() if isinstance(d, Scatter) else np.asarray(d)


def _py_scalar(v: Any) -> float | complex:
    """The cotangent of a scalar primal: a Python float (complex for complex values)."""
    v = np.asarray(v)
    if v.ndim:
        v = v.sum()  # a broadcast cotangent of a scalar operand
    return complex(v) if v.dtype.kind == "c" else float(v)


def _finish(g: Any, x: Any) -> Any:
    """`g` as the cotangent of `x`: an ndarray for an ndarray primal, a Python scalar otherwise."""
    return g if isinstance(x, np.ndarray) else _py_scalar(g)


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


def linear(rule: Callable[..., Any]) -> Callable[..., Any]:
    """A transposed derivative, linear in the incoming cotangent `d` (its first argument): no
    cotangent (`Zero`, or None) gives `Zero` without running the formula."""

    @functools.wraps(rule)
    def guarded(d: Any, *args: Any, **kwargs: Any) -> Any:
        if d is Zero or d is None:
            return Zero
        return rule(d, *args, **kwargs)

    return guarded


# ====================================================================== Scatter


class Scatter:
    """The cotangent of an array made of index contributions, summed once by `densify`.

    Its value is `base + sum of (zeros with value added at index)` over `items`. A value may
    itself be a Scatter (the cotangent of `x[i]` when `x[i]` was indexed again): `densify`
    composes int indices so that nested lookups `A[i][j]` stay O(1) per element.
    """

    __slots__ = ("shape", "dtype", "base", "items")
    # makes `ndarray + Scatter` return NotImplemented, so Python falls back to Scatter.__radd__
    __array_ufunc__ = None

    def __init__(self, shape: Sequence[int], dtype: Any = np.float64):
        self.shape: IntTuple = tuple(shape)
        self.dtype: np.dtype = np.dtype(dtype)
        self.base: Any = None
        self.items: list[tuple[Any, Any]] = []

    def __repr__(self) -> str:
        base = "None" if self.base is None else "..."
        return f"Scatter(shape={self.shape}, dtype={self.dtype}, base={base}, items={len(self.items)})"

    def _add_base(self, other: Any) -> None:
        # `base + other` is a new array: neither operand may be written (dense cotangents are shared)
        self.base = other if self.base is None else self.base + other

    def __add__(self, other: Any) -> Any:
        if other is Zero or other is None:
            return self
        if isinstance(other, Scatter):
            # affine use: both are uniquely owned, so extend the longer one (cost: the shorter one)
            big, small = (self, other) if len(self.items) >= len(other.items) else (other, self)
            big.items.extend(small.items)
            if small.base is not None:
                big._add_base(small.base)
            return big
        self._add_base(other)
        return self

    __radd__ = __add__

    def densify(self) -> np.ndarray:
        """A fresh dense array: base plus every item, duplicates accumulating."""
        if self.base is None:
            out = np.zeros(self.shape, self.dtype)
        else:
            out = np.array(np.broadcast_to(self.base, self.shape), dtype=self.dtype)  # one copy, no zero fill
        # index length -> (indices, values); length-1 indices are stored as plain ints
        groups: dict[int, tuple[list[Any], list[Any]]] = {1: ([], [])}
        rows_i, rows_v = groups[1]
        work: list[tuple[IntTuple, list[tuple[Any, Any]]]] = [((), self.items)]
        while work:  # a worklist, not recursion: nested Scatters compose their indices onto the prefix
            prefix, items = work.pop()
            for index, value in items:
                if type(index) is int and type(value) is float and not prefix:  # hot path: `x[i]` of a 1-D x
                    rows_i.append(index)
                    rows_v.append(value)
                    continue
                if value is Zero or value is None:
                    continue
                ints = _int_tuple(index)
                if ints is None:  # only at top level: nested items are queued only if they compose
                    if isinstance(value, Scatter):
                        value = value.densify()
                    np.add.at(out, index, value)
                    continue
                full = prefix + ints
                if isinstance(value, Scatter):
                    nested: list[tuple[Any, Any]] = []
                    other: list[tuple[Any, Any]] = []
                    for item in value.items:
                        (nested if _int_tuple(item[0]) is not None else other).append(item)
                    if nested:
                        work.append((full, nested))  # A[i][j] -> A[i, j]: no child-sized array at all
                    if other:
                        # sliced/fancy child indices do not compose with the parent's (numpy moves the
                        # broadcast axes of separated advanced indices to the front), so densify them
                        rest = Scatter(value.shape, value.dtype)
                        rest.base, rest.items = value.base, other
                        value = rest.densify()
                    elif value.base is not None:
                        value = value.base
                    else:
                        continue
                group = groups.setdefault(len(full), ([], []))
                group[0].append(full[0] if len(full) == 1 else full)
                group[1].append(value)
        for length, (indices, values) in groups.items():
            if not values:
                continue
            # one np.add.at per index length: the Python loop above is the only per-item cost
            where = np.array(indices, dtype=np.intp)
            index = (where,) if length == 1 else tuple(where.T)
            sub = self.shape[length:]
            n = len(values)
            try:
                vals = np.array(values, dtype=self.dtype)
            except (ValueError, TypeError):
                vals = None
            if vals is None or vals.shape != (n, *sub):
                vals = np.empty((n, *sub), self.dtype)
                for k, v in enumerate(values):
                    vals[k] = v  # broadcasts scalar or view values
            np.add.at(out, index, vals)
        return out


# ====================================================================== conversions


def index_ct(d: Any, x: np.ndarray, index: Any) -> Any:
    """Cotangent of `x` given the cotangent `d` of `x[index]`: a one-item Scatter, O(1)."""
    if d is Zero or d is None:
        return Zero
    s = Scatter(x.shape, _dtype_of(x))  # the attribute, not np.shape: O(1) under every cost model
    s.items.append((index, d))
    return s


def add_index(ct: Any, d: Any, x: np.ndarray, index: Any) -> Any:
    """ct + index_ct(d, x, index), appending to ct's items when it is already a Scatter."""
    if type(ct) is Scatter and d is not Zero and d is not None and type(d) is not Scatter:
        ct.items.append((index, d))
        return ct
    one = index_ct(d, x, index)
    return one if ct is Zero else ct + one


def dense(d: Any, like: Any) -> np.ndarray:
    """`d` as a dense ndarray shaped like `like` (possibly a read-only broadcast view)."""
    if type(d) is float and not isinstance(like, np.ndarray):
        return d  # the common scalar case (a NumPy scalar's cotangent), without array calls
    shape = np.shape(like)
    if d is Zero or d is None:
        return np.zeros(shape, _dtype_of(like))
    d = _arr(d)
    return d if d.shape == shape else np.broadcast_to(d, shape)


def to_user_array(ct: Any, x: Any) -> Any:
    """The user-facing gradient for primal `x`: a fresh writable array of x's shape and float dtype,
    or a Python float for a scalar primal."""
    if not isinstance(x, np.ndarray):
        return 0.0 if ct is Zero or ct is None else _py_scalar(_arr(ct))
    dtype = _dtype_of(x)
    if ct is Zero or ct is None:
        return np.zeros(x.shape, dtype)
    if isinstance(ct, Scatter) and ct.shape == x.shape and ct.dtype == dtype:
        return ct.densify()  # already fresh
    # always copy: a dense cotangent may be shared with another slot, or be a read-only view
    return np.array(np.broadcast_to(_arr(ct), x.shape), dtype=dtype)


def unbroadcast(d: Any, x: Any) -> Any:
    """Cotangent of operand `x` of a broadcasting elementwise operation, from the result's cotangent `d`."""
    if d is Zero or d is None:
        return Zero
    if not isinstance(x, np.ndarray):
        return d if type(d) is float else _py_scalar(_arr(d))
    d = _arr(d)
    if d.shape == x.shape:
        return d
    if d.ndim < x.ndim:  # a scalar-like cotangent of a bigger operand
        return np.broadcast_to(d, x.shape)
    lead = d.ndim - x.ndim
    if lead:
        d = d.sum(axis=tuple(range(lead)))
    ones = tuple(i for i, n in enumerate(x.shape) if n == 1 and d.shape[i] != 1)
    if ones:
        d = d.sum(axis=ones, keepdims=True)
    return np.asarray(d)


# ====================================================================== reductions


@linear
def sum_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.sum(x, axis, keepdims=keepdims)`."""
    xa = np.asarray(x)
    return _finish(np.broadcast_to(_expand(_arr(d), xa.ndim, axis, keepdims), xa.shape), x)


@linear
def mean_ct(d: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `np.mean(x, axis, keepdims=keepdims)`."""
    xa = np.asarray(x)
    count = 1
    for a in _axes(axis, xa.ndim):
        count *= xa.shape[a]
    # divide before broadcasting: the division touches the result's size, not x's
    return _finish(np.broadcast_to(_expand(_arr(d), xa.ndim, axis, keepdims) / count, xa.shape), x)


def _others_product(x: np.ndarray, axes: IntTuple) -> np.ndarray:
    """For every element, the product of the other elements of its reduction group.

    Exclusive prefix times exclusive suffix products, not `prod / x`: correct when x has zeros."""
    keep = [a for a in range(x.ndim) if a not in axes]
    perm = keep + list(axes)
    xt = np.transpose(x, perm)  # reduced axes last, flattened into one
    n = 1
    for a in axes:
        n *= x.shape[a]
    flat = xt.reshape(xt.shape[: len(keep)] + (n,))
    left = np.ones(flat.shape, np.result_type(flat.dtype, np.float64))
    right = np.ones_like(left)
    if n > 1:
        np.cumprod(flat[..., :-1], axis=-1, out=left[..., 1:])  # left[j] = x[0] * ... * x[j-1]
        right[..., :-1] = np.cumprod(flat[..., :0:-1], axis=-1)[..., ::-1]  # right[j] = x[j+1] * ... * x[n-1]
    return np.transpose((left * right).reshape(xt.shape), np.argsort(perm))


@linear
def prod_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `y = np.prod(x, axis, keepdims=keepdims)` (y is unused: zeros in x are fine)."""
    xa = np.asarray(x)
    return _finish(_expand(_arr(d), xa.ndim, axis, keepdims) * _others_product(xa, _axes(axis, xa.ndim)), x)


@linear
def extremum_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `y = np.max(x, ...)` or `np.min(x, ...)`: `d` split equally among tied positions."""
    xa = np.asarray(x)
    ye = _expand(y, xa.ndim, axis, keepdims)
    hit = xa == ye
    if xa.dtype.kind in "fc":
        hit = hit | (np.isnan(xa) & np.isnan(ye))  # max/min propagate nan: the nan positions are the winners
    count = hit.sum(axis=_axes(axis, xa.ndim), keepdims=True)
    return _finish(hit * (_expand(_arr(d), xa.ndim, axis, keepdims) / count), x)


@linear
def norm_ct(d: Any, y: Any, x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Cotangent of `x` in `y = np.linalg.norm(x, axis=axis, keepdims=keepdims)` (2-norm / Frobenius):
    d * x / y, and 0 where y == 0 (the subgradient of smallest norm)."""
    xa = np.asarray(x)
    ye = _expand(y, xa.ndim, axis, keepdims)
    de = _expand(_arr(d), xa.ndim, axis, keepdims)
    zero = ye == 0
    return _finish(np.where(zero, 0.0, de * xa / np.where(zero, 1.0, ye)), x)


# ====================================================================== linear algebra


def _matmul_parts(d: Any, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a and b promoted to stacks of matrices as np.matmul does (1-D a -> a row, 1-D b -> a column),
    and d with the axes matmul dropped put back."""
    a, b, d = np.asarray(a), np.asarray(b), _arr(d)
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
        return unbroadcast(_arr(d) * np.asarray(b), a)
    a, b, d = np.asarray(a), np.asarray(b), _arr(d)
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
        return unbroadcast(_arr(d) * np.asarray(a), b)
    a, b, d = np.asarray(a), np.asarray(b), _arr(d)
    lead = list(range(a.ndim - 1))
    g = np.tensordot(a, d, axes=(lead, lead))  # shape (k, B..., n) or (k,) for 1-D b
    return np.moveaxis(g, 0, b.ndim - 2) if b.ndim > 1 else g


@linear
def outer_ct_a(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `np.outer(a, b)` (which ravels both operands)."""
    return _finish((_arr(d) @ np.ravel(b)).reshape(np.shape(a)), a)


@linear
def outer_ct_b(d: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.outer(a, b)`."""
    return _finish((np.ravel(a) @ _arr(d)).reshape(np.shape(b)), b)


# ====================================================================== shape operations


@linear
def transpose_ct(d: Any, x: Any, axes: Sequence[int] | None = None) -> Any:
    """Cotangent of `x` in `np.transpose(x, axes)`: transpose back by the inverse permutation."""
    d = _arr(d)
    if axes is None:
        return d.T
    return np.transpose(d, np.argsort([a % d.ndim for a in axes]))


@linear
def reshape_ct(d: Any, x: Any) -> Any:
    """Cotangent of `x` in `np.reshape(x, ...)` (also ravel/flatten/squeeze/expand_dims)."""
    return _finish(_arr(d).reshape(np.shape(x)), x)


@linear
def concatenate_ct(d: Any, xs: Sequence[Any], axis: int | None = 0) -> Any:
    """Cotangent of the sequence `xs` in `np.concatenate(xs, axis)`, as the sparse dict {i: ct of xs[i]}."""
    d = _arr(d)
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
    d = _arr(d)
    lead = (slice(None),) * (axis % d.ndim)
    return {i: _finish(d[(*lead, i)], x) for i, x in enumerate(xs)}


# ====================================================================== elementwise selections


def _select_ct(d: Any, x: Any, weight: Any) -> Any:
    return unbroadcast(_arr(d) * weight, x)


def _winner(x: Any, other: Any, beats: Any) -> np.ndarray:
    """1 where x beats other, 1/2 on ties (the cotangent is split between the operands), else 0."""
    return np.where(beats(x, other), 1.0, np.where(np.equal(x, other), 0.5, 0.0))


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
    return unbroadcast(np.where(cond, _arr(d), 0.0), a)


@linear
def where_ct_b(d: Any, cond: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `np.where(cond, a, b)`."""
    return unbroadcast(np.where(cond, 0.0, _arr(d)), b)


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
def extreme_seq_ct(d: object, y: object, xs: object) -> object:
    """Cotangent of xs in `max(xs)` / `min(xs)`: all of d to the element Python returned."""
    if isinstance(xs, np.ndarray):
        return extremum_ct(d, y, xs, 0)
    for k, x in enumerate(xs):
        if x is y:
            return {k: d}
    return {list(xs).index(y): d}


@linear
def array_ct(d: object, x: object) -> object:
    """Cotangent of x in `np.array(x)`: an array's; a number's; a (nested) list's or tuple's
    {position: cotangent of that element}."""
    return _nested_ct(d, x)


def _nested_ct(d: object, x: object) -> object:
    if isinstance(x, np.ndarray):
        return d
    if not isinstance(x, (list, tuple)):
        return _py_scalar(_arr(d))
    d = _arr(d)
    d = np.broadcast_to(d, np.shape(x)) if d.shape != np.shape(x) else d
    return {k: _nested_ct(d[k], item) for k, item in enumerate(x)}
