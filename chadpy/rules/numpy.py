"""Rules for NumPy: linear algebra, the elementwise selections (`np.maximum`, `np.where`,
...), making arrays (`np.array`), and the constructors and predicates that are data; the
methods and attributes of arrays. The pointwise functions (`np.sin`, `np.add`, ...) are in
`pointwise.py`, written once with their `math` flavours; reductions in `reductions.py`;
shape operations in `shape.py`.

Each function takes its parameters by the names of NumPy's own signature (`params`;
a call binds its arguments by that signature, and any other parameter must be left
at its default). The transposed derivatives are runtime functions in `runtime/numpy.py`;
`samples` are argument lists where the rule test checks them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ChadTypeError
from ..ir.types import (
    BOOL,
    INT,
    NONE,
    SLICE,
    Arr,
    Lst,
    Tup,
    VType,
    arr,
    dtype_of,
    is_active,
    is_number,
    promote,
    scalar,
)
from ..runtime import numpy as runtime
from ..runtime import reductions as reductions_runtime
from ..runtime import shape as shape_runtime
from ..runtime.array_cotangents import index_ct
from ..target.expressions import Attr, BinOp, CallX, call
from .kinds import (
    BOOL_RESULT,
    INT_RESULT,
    KindRule,
    as_array,
    axis_rank,
    broadcast,
    dtype_kind,
    elementwise,
    fixed,
    reduction,
    same_array,
    shape_rank,
)
from .registry import (
    AS_PYTHON,
    ATTRIBUTES,
    METHODS,
    PRIMITIVES,
    REALS,
    ZERO,
    Primitive,
    Reals,
    Vjp,
    numpy_function,
    written_in_python,
)
from .tangents import Term, apply, linear, multilinear, term, total, tuple_of

# ---------------------------------------------------------------- kind rules of this family


def matmul_kind(types: list[VType], consts: list[object]) -> VType:
    a, b = (as_array(t) for t in types)
    kind = promote(a.dtype, b.dtype)
    if a.rank is None or b.rank is None:
        return arr(None, kind, True)
    if a.rank == 1 and b.rank == 1:
        return scalar(kind, True)
    rank = max(a.rank, b.rank) - (1 if 1 in (a.rank, b.rank) else 0)
    return arr(rank, kind, True)


def dot_kind(types: list[VType], consts: list[object]) -> VType:
    a, b = (as_array(t) for t in types)
    if a.rank == 0 or b.rank == 0:
        return broadcast("np.dot", types)
    kind = promote(a.dtype, b.dtype)
    if a.rank is None or b.rank is None:
        return arr(None, kind, True)
    rank = a.rank + b.rank - 2 if b.rank > 1 else a.rank - 1
    return scalar(kind, True) if rank == 0 else arr(rank, kind, True)


def outer_kind(types: list[VType], consts: list[object]) -> VType:
    return arr(2, promote(*(as_array(t).dtype for t in types)), True)


def array_like_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.array(x, dtype)`, `np.zeros_like(x, dtype)`: an array like x, of that dtype if one is given."""
    x = as_array(types[0])
    dtype = dtype_kind(consts[1])
    return x if dtype is None else arr(x.rank, dtype, x.active)


def array_shape_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.shape(x)`, `x.shape`: a tuple of ints (a list of them if the rank is not known)."""
    rank = as_array(types[0]).rank
    return Lst(INT) if rank is None else Tup((INT,) * rank)


def filled_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.zeros(shape, dtype)`, `np.ones(shape)`: an array of the shape's rank (float by default)."""
    return Arr(shape_rank(types[0]), (dtype_kind(consts[1]) if len(consts) > 1 else None) or "f")


def arange_kind(types: list[VType], consts: list[object]) -> VType:
    return Arr(1, "i" if all(t == INT or t == BOOL for t in types) else "f")


def eye_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.eye(N, M, k, dtype)`, `np.identity(n, dtype)`: a matrix, of that dtype if one is given."""
    return Arr(2, dtype_kind(consts[-1]) or "f")


def argreduce_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.argmax(x, axis)`: an int, or an array of ints."""
    x = as_array(types[0])
    rank = axis_rank(x.rank, consts[1] if len(consts) > 1 else None, False)
    return INT if rank == 0 else Arr(rank, "i")


def where_kind(types: list[VType], consts: list[object]) -> VType:
    kind = promote(dtype_of(as_array(types[1])), dtype_of(as_array(types[2])))
    shape = broadcast("np.where", types)
    return arr(shape.rank, kind, True) if isinstance(shape, Arr) else scalar(kind, True)


def clip_kind(types: list[VType], consts: list[object]) -> VType:
    return broadcast("np.clip", [t for t in types if t != NONE])


def full_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.full(shape, fill_value, dtype)`: an array of the shape's rank, of the fill value's dtype or the one
    given."""
    return arr(shape_rank(types[0]), dtype_kind(consts[2]) or as_array(types[1]).dtype, True)


def full_like_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.full_like(a, fill_value)`: an array like a (its dtype: an int array stays one)."""
    return arr(as_array(types[0]).rank, as_array(types[0]).dtype, True)


def interp_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.interp(x, xp, fp)`: floats shaped like x."""
    rank = as_array(types[0]).rank
    return scalar("f", True) if rank == 0 else arr(rank, "f", True)


def linspace_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.linspace(start, stop, num)`: one more axis than the (broadcast) endpoints."""
    ranks = [as_array(t).rank for t in types[:2]]
    return arr(None if None in ranks else 1 + max(ranks), "f", True)


def added_at_kind(types: list[VType], consts: list[object]) -> VType:
    """`added_at(x, key, v)`: like `x[key]` (ints and integer arrays index an axis each and together add the
    axes of their broadcast shape, slices keep one, `None` adds one, a mask alone of rank k replaces k axes
    by one; else any rank)."""
    x, key = as_array(types[0]), types[1]
    parts = key.items if isinstance(key, Tup) else (key,)
    rank, advanced = x.rank, []
    for part in parts:
        if part == INT or isinstance(part, (Arr, Lst)) and dtype_of(as_array(part)) == "i":
            advanced.append(as_array(part).rank)
        elif part == NONE and rank is not None:
            rank += 1
        elif isinstance(part, Arr) and part.dtype == "b" and len(parts) == 1 and None not in (rank, part.rank):
            rank += 1 - part.rank
        elif part != SLICE:
            rank = None
    if rank is None or None in advanced:
        return arr(None, x.dtype, True)
    rank = rank - len(advanced) + max(advanced, default=0)
    return scalar(x.dtype, True) if rank == 0 else arr(rank, x.dtype, True)


_np = numpy_function
_M = REALS.of(2, 3)  # a matrix the rule test samples
_MASK = np.array([[True, False, True], [False, False, True]])
_KNOTS = np.array([-1.0, -0.3, 0.2, 1.0])  # np.interp's xp: increasing, differentiated too

# ---------------------------------------------------------------- tangent rules of this family


def dense_tangent(t: Term, x: Term, typ: VType | None = None) -> Term:
    """The tangent of a sequence x (of type `typ`, x's by default) with zeros for the elements that carry none (a
    tuple's tangent has None there), so that NumPy makes an array of it (`np.array([a, 2.0, b])`)."""
    typ = x.type if typ is None else typ
    if not isinstance(typ, Tup):
        return t
    parts = []
    for k, item in enumerate(typ.items):
        if is_active(item):
            parts.append(dense_tangent(t[k], x[k], item))
        else:
            parts.append(term(0.0) if is_number(item) else apply(np.zeros, apply(np.shape, x[k])))
    return tuple_of(*parts)


def tangent_helper(fn: Callable, nargs: int, kind: KindRule, vjp: Vjp | None = None, **more) -> Primitive:
    """A function of `runtime` that tangent rules call; without `vjp` discrete (a mask, a weight: piecewise
    constant where it is used)."""
    PRIMITIVES[fn] = p = Primitive(fn.__name__, lambda *a: call(fn, *a), vjp, (nargs, nargs), kind, fn=fn, **more)
    return p


def _broadcast_of(dtype: str) -> KindRule:
    """The kind rule of a helper elementwise in its numbers and arrays (not its None bounds, not a name)."""
    return lambda types, consts: broadcast(
        "a tangent's weight", [t for t in types if is_number(t) or isinstance(t, Arr)], dtype
    )


# d fn(x, other) / d x for fn "maximum", "minimum", "fmax", "fmin": 1, 1/2 at ties, or 0 (the VJP's split)
SELECTION_WEIGHT = tangent_helper(runtime.selection_weight, 3, _broadcast_of("f"))
CLIP_INSIDE = tangent_helper(runtime.clip_inside, 3, _broadcast_of("b"))  # lo <= x <= hi: where clip passes dx on


def _selection_jvp(fn: str) -> Callable:
    """Each operand's tangent where it wins, half of it at ties (`selection_weight`, as the VJP)."""

    def jvp(ts: list, y: Term, a: Term, b: Term) -> Term | None:
        pairs = ((ts[0], a, b), (ts[1], b, a))
        return total([None if t is None else t * apply(SELECTION_WEIGHT, x, other, fn) for t, x, other in pairs])

    return jvp


def _interp_slope_jvp(ts: list, y: Term, x: Term, xp: Term, fp: Term) -> Term | None:
    """Linear in fp; in xp, s = (fp[i] - fp[i-1]) / (xp[i] - xp[i-1]) moves by -s times the slope of xp's tangent;
    piecewise constant in x."""
    return total(
        [
            None if ts[2] is None else apply(INTERP_SLOPE, x, xp, ts[2]),
            None if ts[1] is None else -(y * apply(INTERP_SLOPE, x, xp, ts[1])),
        ]
    )


# d np.interp(x, xp, fp) / d x, 0 outside [xp[0], xp[-1]]: what interp's tangent multiplies x's tangent by
INTERP_SLOPE = tangent_helper(
    runtime.interp_slope,
    3,
    interp_kind,
    lambda d, y, x, xp, fp: [ZERO, *(call(runtime.interp_slope_ct, d, x, xp, fp, k) for k in (1, 2))],
    jvp=_interp_slope_jvp,
    samples=((Reals(-1.5, 1.5).of(2, 5), _KNOTS, REALS.of(4)), (REALS.of(3), np.array([0.1]), REALS.of(1))),
)


def _interp_jvp(
    ts: list, y: Term, x: Term, xp: Term, fp: Term, left: Term, right: Term, *, op: Primitive
) -> Term | None:
    """Linear in (fp, left, right); x and xp move the point along the slope: by dx, and by -interp(x, xp, dxp) (the
    knots' tangent interpolated), 0 outside the knots."""
    values = None if all(t is None for t in ts[2:]) else linear(2, 3, 4)(ts, y, x, xp, fp, left, right, op=op)
    moved = total([ts[0], None if ts[1] is None else -apply(np.interp, x, xp, ts[1])])
    return total([values, None if moved is None else apply(INTERP_SLOPE, x, xp, fp) * moved])


def _array_jvp(ts: list, y: Term, x: Term, dtype: Term, *, op: Primitive) -> Term:
    """`np.array(x, dtype)`: the array of x's tangent, zeros for x's elements that carry none (linear)."""
    return Term(op, [dense_tangent(ts[0], x), dtype])


def _discrete_ufunc(fn: Callable, dtype: str | None = None) -> Primitive:
    """A piecewise-constant ufunc (`np.sign`, `np.floor`, `np.greater`): zero derivative almost everywhere."""
    params = ("x",) if getattr(fn, "nin", 1) == 1 else ("x1", "x2")
    return _np(fn, None, params, kind=elementwise("np." + fn.__name__, dtype))


def _by_rules(ct_a: Callable, ct_b: Callable) -> Vjp:
    """The rule of a binary array function whose two cotangents are runtime functions of (d, a, b)."""
    return lambda d, y, a, b: [call(ct_a, d, a, b), call(ct_b, d, a, b)]


def _data(fn: Callable, params: tuple[str, ...], defaults: tuple[object, ...], kind: KindRule, **more) -> Primitive:
    """A constructor chadpy has no derivative for: fine on data, an error on values that carry derivatives."""
    return _np(fn, None, params, defaults, kind, data_only=True, **more)


def _selection(fn: Callable, ct_a: Callable, ct_b: Callable | None = None) -> Primitive:
    """`np.maximum`, `np.minimum`: elementwise, broadcasting in their runtime rules. Without `ct_b`
    (`np.fmax`, `np.fmin`), `ct_a(d, x, other)` gives either operand's cotangent."""
    vjp = _by_rules(ct_a, ct_b) if ct_b else lambda d, y, a, b: [call(ct_a, d, a, b), call(ct_a, d, b, a)]
    samples = ((_M, _M), (_M, REALS.of(3)), (REALS, _M))
    jvp = _selection_jvp(fn.__name__)
    return _np(fn, vjp, ("x1", "x2"), kind=elementwise("np." + fn.__name__), samples=samples, jvp=jvp)


_matmul_vjp = _by_rules(runtime.matmul_ct_a, runtime.matmul_ct_b)
_PRODUCTS = ((_M, REALS.of(3, 2)), (REALS.of(3), REALS.of(3, 2)), (_M, REALS.of(3)))
MATMUL = Primitive(
    "matmul", lambda a, b: BinOp("@", a, b), _matmul_vjp, (2, 2), matmul_kind, samples=_PRODUCTS, jvp=multilinear(0, 1)
)

PRIMITIVES.update(
    {
        np.maximum: _selection(np.maximum, runtime.maximum_ct_a, runtime.maximum_ct_b),
        np.minimum: _selection(np.minimum, runtime.minimum_ct_a, runtime.minimum_ct_b),
        np.fmax: _selection(np.fmax, runtime.fmax_ct),
        np.fmin: _selection(np.fmin, runtime.fmin_ct),
        np.clip: _np(
            np.clip,
            lambda d, y, x, lo, hi: [call(runtime.clip_ct, d, x, lo, hi), None, None],
            ("a", "a_min", "a_max"),
            kind=clip_kind,
            samples=((_M, -0.5, 0.5), (_M, None, 0.2), (REALS, 0.0, 1.0)),
            methods=("clip",),
            # dx where lo <= x <= hi; the bounds pass none on, as in the VJP
            jvp=lambda ts, y, x, lo, hi: None if ts[0] is None else ts[0] * apply(CLIP_INSIDE, x, lo, hi),
        ),
        np.where: _np(
            np.where,
            lambda d, y, c, a, b: [
                None,
                call(runtime.where_ct_a, d, c, a, b),
                call(runtime.where_ct_b, d, c, a, b),
            ],
            ("condition", "x", "y"),
            kind=where_kind,
            samples=((_MASK, _M, REALS.of(3)), (_MASK, REALS, _M)),
            jvp=linear(1, 2),
        ),
        np.nan_to_num: _np(
            np.nan_to_num,
            lambda d, y, x: [call(runtime.nan_to_num_ct, d, x)],
            ("x",),
            kind=elementwise("np.nan_to_num"),
            samples=((_M,), (REALS,)),
            jvp=lambda ts, y, x: ts[0] * apply(np.isfinite, x),
        ),
        np.diff: _np(
            np.diff,
            lambda d, y, x, n, axis: [call(runtime.diff_ct, d, x, n, axis), None, None],
            ("a", "n", "axis"),
            (1, -1),
            kind=same_array,
            samples=((_M, 1, -1), (_M, 2, 1), (_M, 1, 0), (REALS.of(5), 3, -1)),
            jvp=linear(0),
        ),
        np.matmul: _np(
            np.matmul, _matmul_vjp, ("x1", "x2"), kind=matmul_kind, samples=_PRODUCTS, jvp=multilinear(0, 1)
        ),
        np.dot: _np(
            np.dot,
            _by_rules(runtime.dot_ct_a, runtime.dot_ct_b),
            ("a", "b"),
            kind=dot_kind,
            samples=(*_PRODUCTS, (REALS, _M)),
            methods=("dot",),
            jvp=multilinear(0, 1),
        ),
        np.outer: _np(
            np.outer,
            _by_rules(runtime.outer_ct_a, runtime.outer_ct_b),
            ("a", "b"),
            kind=outer_kind,
            samples=_PRODUCTS,
            jvp=multilinear(0, 1),
        ),
        np.array: _np(
            np.array,
            lambda d, y, x, dtype: [call(reductions_runtime.array_ct, d, x), None],
            ("object", "dtype"),
            (None,),
            kind=array_like_kind,
            containers=True,
            samples=(([REALS, REALS, REALS], None), (_M, None)),
            jvp=_array_jvp,
        ),
        np.asarray: _np(
            np.asarray,
            lambda d, y, x, dtype: [call(reductions_runtime.array_ct, d, x), None],
            ("a", "dtype"),
            (None,),
            kind=array_like_kind,
            containers=True,
            aliases="view",
            samples=(([REALS, REALS], None), (_M, None)),
            jvp=_array_jvp,
        ),
        # discrete: shapes, piecewise-constant functions, predicates
        np.shape: _np(np.shape, None, ("a",), kind=array_shape_kind),
        np.ndim: _np(np.ndim, None, ("a",), kind=INT_RESULT),
        np.size: _np(np.size, None, ("a",), kind=INT_RESULT),
        np.zeros_like: _np(np.zeros_like, None, ("a", "dtype"), (None,), kind=array_like_kind),
        np.ones_like: _np(np.ones_like, None, ("a", "dtype"), (None,), kind=array_like_kind),
        np.argmax: _np(np.argmax, None, ("a", "axis"), (None,), kind=argreduce_kind, methods=("argmax",)),
        np.argmin: _np(np.argmin, None, ("a", "axis"), (None,), kind=argreduce_kind, methods=("argmin",)),
        np.sign: _discrete_ufunc(np.sign),
        np.floor: _discrete_ufunc(np.floor, "f"),
        np.ceil: _discrete_ufunc(np.ceil, "f"),
        np.round: _np(np.round, None, ("a", "decimals"), (0,), kind=elementwise("np.round")),
        np.isnan: _discrete_ufunc(np.isnan, "b"),
        np.isfinite: _discrete_ufunc(np.isfinite, "b"),
        np.isinf: _discrete_ufunc(np.isinf, "b"),
        np.trunc: _discrete_ufunc(np.trunc, "f"),
        np.rint: _discrete_ufunc(np.rint, "f"),
        np.fix: _discrete_ufunc(np.fix, "f"),
        np.signbit: _discrete_ufunc(np.signbit, "b"),
        np.spacing: _discrete_ufunc(np.spacing, "f"),
        # integer ufuncs: data
        **{
            fn: _discrete_ufunc(fn)
            for fn in (
                np.gcd,
                np.lcm,
                np.bitwise_and,
                np.bitwise_or,
                np.bitwise_xor,
                np.bitwise_not,
                np.bitwise_count,
                np.left_shift,
                np.right_shift,
            )
        },
        # comparisons and logic, elementwise: booleans
        **{
            fn: _discrete_ufunc(fn, "b")
            for fn in (
                np.greater,
                np.greater_equal,
                np.less,
                np.less_equal,
                np.equal,
                np.not_equal,
                np.logical_and,
                np.logical_or,
                np.logical_xor,
                np.logical_not,
            )
        },
        np.heaviside: _np(np.heaviside, None, ("x1", "x2"), kind=elementwise("np.heaviside", "f")),
        np.floor_divide: _np(np.floor_divide, None, ("x1", "x2"), kind=elementwise("np.floor_divide")),
        np.allclose: _np(np.allclose, None, ("a", "b", "rtol", "atol"), (1e-05, 1e-08), kind=BOOL_RESULT),
        np.isclose: _np(
            np.isclose, None, ("a", "b", "rtol", "atol"), (1e-05, 1e-08), kind=elementwise("np.isclose", "b")
        ),
        np.any: _np(np.any, None, ("a", "axis"), (None,), kind=reduction("b"), methods=("any",)),
        np.all: _np(np.all, None, ("a", "axis"), (None,), kind=reduction("b"), methods=("all",)),
        # constructors: data (their arguments are shapes and constants)
        np.zeros: _data(np.zeros, ("shape", "dtype"), (None,), filled_kind, positional=1),
        np.ones: _data(np.ones, ("shape", "dtype"), (None,), filled_kind, positional=1),
        np.empty: _data(np.empty, ("shape", "dtype"), (None,), filled_kind, positional=1),
        np.eye: _data(np.eye, ("N", "M", "k", "dtype"), (None, 0, float), eye_kind),
        np.arange: _data(
            np.arange, ("start_or_stop", "stop", "step", "dtype"), (None, 1, None), arange_kind, positional=3
        ),
        np.logspace: _data(
            np.logspace, ("start", "stop", "num", "endpoint", "base"), (50, True, 10.0), fixed(Arr(1, "f"))
        ),
        np.identity: _data(np.identity, ("n", "dtype"), (None,), eye_kind),
        np.full: _np(
            np.full,
            lambda d, y, shape, value, dtype: [None, call(shape_runtime.broadcast_to_ct, d, value), None],
            ("shape", "fill_value", "dtype"),
            (None,),
            kind=full_kind,
            samples=(((2, 3), REALS, None), (3, REALS, None), (3, REALS, "float64")),
            jvp=linear(1),
        ),
        np.full_like: _np(
            np.full_like,
            lambda d, y, a, value: [ZERO, call(shape_runtime.broadcast_to_ct, d, value)],  # a gives its shape
            ("a", "fill_value"),
            kind=full_like_kind,
            samples=((_M, REALS),),
            jvp=linear(1),
        ),
        np.empty_like: _np(np.empty_like, None, ("prototype", "dtype"), (None,), kind=array_like_kind),
        np.copy: _np(
            np.copy,
            lambda d, y, a: [call(reductions_runtime.array_ct, d, a)],
            ("a",),
            kind=same_array,
            samples=((_M,), (REALS,)),
            methods=("copy",),
            jvp=linear(0),
        ),
        np.astype: _np(
            np.astype,
            lambda d, y, a, dtype: [call(reductions_runtime.astype_ct, d, a), None],
            ("x", "dtype"),
            kind=array_like_kind,
            samples=((_M, "float64"), (REALS.of(3), "float")),
            methods=("astype",),
            jvp=linear(0),
        ),
        np.array_equal: _np(np.array_equal, None, ("a1", "a2"), kind=BOOL_RESULT),
        np.count_nonzero: _np(np.count_nonzero, None, ("a", "axis"), (None,), kind=reduction("i")),
        np.isposinf: _np(np.isposinf, None, ("x",), kind=elementwise("np.isposinf", "b")),
        np.isneginf: _np(np.isneginf, None, ("x",), kind=elementwise("np.isneginf", "b")),
        np.linspace: _np(
            np.linspace,
            lambda d, y, start, stop, num, endpoint: [
                *(call(runtime.linspace_ct, d, start, stop, num, endpoint, k) for k in range(2)),
                None,
                None,
            ],
            ("start", "stop", "num", "endpoint"),
            (50, True),
            kind=linspace_kind,
            samples=(
                (REALS, REALS, 5, True),
                (REALS, REALS, 4, False),
                (REALS.of(3), REALS, 4, True),
                (REALS, 1.0, 1, True),
            ),
            jvp=linear(0, 1),
        ),
        np.interp: _np(
            np.interp,
            lambda d, y, *args: [call(runtime.interp_ct, d, *args, k) for k in range(5)],
            ("x", "xp", "fp", "left", "right"),
            (None, None),
            kind=interp_kind,
            samples=(
                (Reals(-1.5, 1.5).of(8), _KNOTS, REALS.of(4), None, None),
                (Reals(-1.5, 1.5).of(2, 5), _KNOTS, REALS.of(4), REALS, REALS),
                (Reals(-0.9, 0.9), _KNOTS, REALS.of(4), None, None),
                (REALS.of(3), np.array([0.1]), REALS.of(1), None, None),
            ),
            jvp=_interp_jvp,
        ),
    }
)


def _method_jvp(ts: list, y: Term, x: Term, *, op: Primitive) -> Term:
    """`x.item()`, `x.tolist()`: the tangent's (linear); a number's tangent as it is (a float has no such method)."""
    return Term(op, ts) if isinstance(x.type, Arr) else ts[0]


def _item(a: np.ndarray) -> object:
    """`a.item()`: the one element of a size-1 array (or a NumPy scalar) as a Python scalar."""
    return a.item()


def _item_kind(types: list[VType], consts: list[object]) -> VType:
    t = types[0]
    return scalar(t.dtype, t.active) if isinstance(t, Arr) else t


# `x.item()`: the element; its cotangent is d in x's shape
PRIMITIVES[_item] = Primitive(
    "item",
    lambda x: CallX(Attr(x, "item"), []),
    lambda d, y, x: [call(shape_runtime.reshape_ct, d, x)],
    (1, 1),
    _item_kind,
    samples=((REALS.of(1, 1),), (REALS,)),
    jvp=_method_jvp,
)


def _tolist(a: np.ndarray) -> object:
    """`a.tolist()`: the array's elements as (nested) lists of Python scalars."""
    return a.tolist()


def _tolist_kind(types: list[VType], consts: list[object]) -> VType:
    t = types[0]
    if not isinstance(t, Arr):
        return t
    if t.rank is None:
        raise ChadTypeError("`.tolist()` of an array whose rank is not known is not supported")
    out: VType = scalar(t.dtype, t.active)
    for _ in range(t.rank):
        out = Lst(out)
    return out


# `x.tolist()`: nested lists of the elements; their cotangents, {position: ...} at each level, are x's
PRIMITIVES[_tolist] = Primitive(
    "tolist",
    lambda x: CallX(Attr(x, "tolist"), []),
    lambda d, y, x: [call(reductions_runtime.tolist_ct, d, x)],
    (1, 1),
    _tolist_kind,
    samples=((REALS.of(3),), (REALS.of(2, 3),), (REALS,)),
    jvp=_method_jvp,
)

# Methods and attributes of array values, as the NumPy functions they are.
METHODS["item"] = _item  # `x.item()`: the one element of a size-1 array, as a Python scalar
METHODS["tolist"] = _tolist
ATTRIBUTES.update({"T": np.transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size})

# `np.add.at(x, key, v)` on an array the function owns: the front end writes it `x[key] = added_at(x, key, v)`
# (`rewrite/assignments.py`), an element assignment like any other, of the values x[key] takes
PRIMITIVES[runtime.added_at] = Primitive(
    "added_at",
    lambda x, key, v: call(runtime.added_at, x, key, v),
    lambda d, y, x, key, v: [call(index_ct, d, x, key), None, call(runtime.added_at_ct, d, x, key, v)],
    (3, 3),
    added_at_kind,
    jvp=linear(0, 2),
)


# `np.vectorize(f)`: the function of x that applies f to each element, in x's shape (a loop chadpy differentiates);
# an outside `v = np.vectorize(f)` called is `vectorized(v.pyfunc, x)` (`resolve.vectorized_object`)
VECTORIZE = written_in_python(
    """def vectorize(pyfunc):
    return lambda x: vectorized(pyfunc, x)


def vectorized(pyfunc, x):
    return np.reshape(np.array([pyfunc(e) for e in np.ravel(x)]), np.shape(x))
""",
    "np.vectorize",
    {"np": np},
)
AS_PYTHON[np.vectorize] = VECTORIZE["vectorize"]
