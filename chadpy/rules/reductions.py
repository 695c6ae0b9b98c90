"""Rules for NumPy's reductions: sums, means, products, extrema, norms, with `axis=` and `keepdims=`.

Each function takes its parameters by the names of NumPy's own signature (`params`); the
transposed derivatives are runtime functions in `runtime/reductions.py`, which put the reduced
axes back (`keepdims`) before broadcasting the cotangent over the operand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..errors import ChadTypeError
from ..ir import nodes as ir
from ..ir.types import NONE, Tup, VType, arr
from ..runtime import reductions as runtime
from ..target.expressions import Expr, Lit, Obj, call, spelling
from .kinds import FLOAT_RESULT, UNKNOWN, KindRule, as_array, reduction
from .numpy import dense_tangent, tangent_helper
from .registry import NONZERO, POSITIVE, PRIMITIVES, REALS, ZERO, Primitive, numpy_function
from .tangents import SAFE_DIVISOR, WHERE_NONZERO, Term, apply, linear, tangent_rule, total

# ---------------------------------------------------------------- kind rules of this family


def mean_kind(types: list[VType], consts: list[object]) -> VType:
    return reduction("f")(types, consts)


def cumulative_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.cumsum(x, axis)`, `np.cumprod`: x's rank along an axis, raveled (1-D) without one."""
    x = as_array(types[0])
    axis = consts[1] if len(consts) > 1 else None
    rank = None if axis is UNKNOWN else 1 if axis is None else x.rank
    return arr(rank, "i" if x.dtype == "b" else x.dtype, True)


_np = numpy_function
_M = REALS.of(2, 3)  # a matrix the rule test samples

# ---------------------------------------------------------------- tangent rules of this family


def _like(k: int, rank: Callable[[int | None], int | None] = lambda r: r) -> KindRule:
    """Floats of the rank of argument k (`rank` of it)."""

    def kind(types: list[VType], consts: list[object]) -> VType:
        r = as_array(types[k]).rank
        return arr(None if r is None else rank(r), "f", True)

    return kind


# d y / d x of `y = np.max(x, axis, keepdims)` or np.min (1/count at tied winners), of np.ptp, np.median, of the norms
# whose derivative is piecewise constant: the subgradients the VJPs take, in x's shape
EXTREMUM_WEIGHTS = tangent_helper(runtime.extremum_weights, 4, _like(1))
PTP_WEIGHTS = tangent_helper(runtime.ptp_weights, 2, _like(0))
MEDIAN_WEIGHTS = tangent_helper(runtime.median_weights, 2, _like(0))
NORM_WEIGHTS = tangent_helper(runtime.norm_weights, 5, _like(1))
NORM_EXPONENT = tangent_helper(runtime.norm_exponent, 2, FLOAT_RESULT)
VARIES = tangent_helper(runtime.varies, 3, reduction("f"))  # where std's group is not constant, in y's shape
SINGULAR_MASK = tangent_helper(runtime.singular_mask, 2, _like(0, lambda r: r + 1))  # the singular values a norm takes
# np.average's weights laid out to broadcast against a: linear in them
LAID_OUT_WEIGHTS = tangent_helper(
    runtime.laid_out_weights,
    3,
    _like(1),
    lambda d, y, w, a, axis: [call(runtime.laid_out_weights_ct, d, w, a, axis), ZERO, None],  # a: its shape
    jvp=linear(0),
    samples=((REALS.of(3), _M, 1), (REALS.of(4, 2), REALS.of(2, 3, 4), (2, 0)), (_M, _M, None)),
)


def _weighted(weights: Primitive, with_y: bool = False) -> Callable:
    """The rule of a reduction whose derivative is piecewise constant: dx times `weights` (of [y,] x, axis,
    keepdims), reduced as x is."""

    def jvp(ts: list, y: Term, x: Term, axis: Term, keepdims: Term) -> Term:
        w = apply(weights, y, x, axis, keepdims) if with_y else apply(weights, x, axis)
        return apply(np.sum, ts[0] * w, axis, keepdims)

    return jvp


def _prod_jvp(ts: list, y: Term, x: Term, axis: Term, keepdims: Term) -> Term:
    """sum_i dx_i prod_{j != i} x_j, exact with zeros: y sum(dx / x) in a group without any; with one, dx at it
    times the product of the others; 0 with more."""
    zero, nonzero = apply(np.equal, x, 0.0), apply(SAFE_DIVISOR, x)  # x with its zeros made ones
    one_zero = apply(np.equal, apply(np.sum, zero, axis, keepdims), 1)
    at_zero = one_zero * apply(np.prod, nonzero, axis, keepdims) * apply(np.sum, ts[0] * zero, axis, keepdims)
    return y * apply(np.sum, ts[0] / nonzero, axis, keepdims) + at_zero


def _cumprod_jvp(ts: list, y: Term, x: Term, axis: Term) -> Term:
    """`_prod_jvp` along the axis, running: y[k] sum_{i <= k} dx_i / x_i before any zero; after exactly one, dx at
    it times the product of the others up to k; 0 after more."""
    zero, nonzero = apply(np.equal, x, 0.0), apply(SAFE_DIVISOR, x)
    one_zero = apply(np.equal, apply(np.cumsum, zero, axis), 1)
    at_zero = one_zero * apply(np.cumprod, nonzero, axis) * apply(np.cumsum, ts[0] * zero, axis)
    return y * apply(np.cumsum, ts[0] / nonzero, axis) + at_zero


def _count(x: Term, y: Term) -> Term:
    """How many elements each of a reduction's groups has."""
    return apply(np.size, x) / apply(np.size, y)


def _var_jvp(ts: list, y: Term, x: Term, axis: Term, keepdims: Term, ddof: Term) -> Term:
    centred = x - apply(np.mean, x, axis, True)
    return 2.0 * apply(np.sum, centred * ts[0], axis, keepdims) / (_count(x, y) - ddof)


def _std_jvp(ts: list, y: Term, x: Term, axis: Term, keepdims: Term, ddof: Term) -> Term:
    """var's tangent / (2 y); 0 where a group's elements are all equal (std has no derivative there), as the VJP."""
    varies = apply(VARIES, x, axis, keepdims)
    centred = x - apply(np.mean, x, axis, True)
    spread = y * varies + (1.0 - varies)  # y, and 1 where the tangent is 0
    return varies * apply(np.sum, centred * ts[0], axis, keepdims) / ((_count(x, y) - ddof) * spread)


def _average_jvp(ts: list, y: Term, a: Term, axis: Term, keepdims: Term, weights: Term) -> Term | None:
    """y = sum(w a) / sum(w): linear in a for given weights; the weights' tangent dw adds sum(dw (a - y)) / sum(w)."""
    if ts[3] is None:
        return None if ts[0] is None else apply(np.average, ts[0], axis, keepdims, weights)
    w, dw = apply(LAID_OUT_WEIGHTS, weights, a, axis), apply(LAID_OUT_WEIGHTS, ts[3], a, axis)
    moved = dw * a if ts[0] is None else w * ts[0] + dw * a
    both = apply(np.sum, moved, axis, keepdims) - y * apply(np.sum, dw, axis, keepdims)
    return both / apply(np.sum, w, axis, keepdims)


def _norm_jvp(ts: list, y: Term, x: Term, axis: Term, keepdims: Term, ord: Term) -> Term | None:
    """As the VJP (`runtime.norm_ct`): the 2-norm's sum(x dx) / y; else sum(dx w |x|^q) / y^q, with the weights w
    and the exponent q of `ord` (p - 1 for a p-norm; 0 where w is all of it: ord ±inf, matrices' ±1), plus
    sum(dx U mask V^T) for matrices' ±2 and 'nuc' (the SVD's). 0 where y == 0 and, for p < 1, at x_i == 0. An
    `ord` that is not a constant (`-np.inf`) is told apart when the code runs."""
    rank = as_array(x.type).rank
    if axis.type == NONE and rank is None:
        raise ChadTypeError("forward mode: `np.linalg.norm` of an array whose rank is not known needs an axis")
    matrix = isinstance(axis.type, Tup) or axis.type == NONE and rank == 2  # an axis pair, or all of a matrix
    known = isinstance(ord.atom, (ir.Const, ir.Ref))
    p = ord.atom.value if known else None
    if known and (p is None or p == "fro" or p == 2 and not matrix):
        return apply(np.sum, x * ts[0], axis, keepdims) / apply(SAFE_DIVISOR, y)  # x == 0 where y == 0
    if known and p == 0:
        return None  # a count
    parts = []
    if not (known and matrix and p in (2, -2, "nuc")):
        weighted = ts[0] * apply(NORM_WEIGHTS, y, x, axis, keepdims, ord)
        q = runtime.norm_exponent(p, matrix) if known else apply(NORM_EXPONENT, ord, matrix)
        if known and q == 0:
            parts.append(apply(np.sum, weighted, axis, keepdims))
        else:
            power = apply(np.sum, weighted * apply(SAFE_DIVISOR, apply(np.abs, x)) ** q, axis, keepdims)
            parts.append(apply(WHERE_NONZERO, y, power) / apply(SAFE_DIVISOR, y) ** q)
    if matrix and (not known or p in (2, -2, "nuc")):
        pair = (0, 1) if axis.type == NONE else axis  # the matrices' rows and columns
        u, s, vh = (apply(np.linalg.svd, apply(np.moveaxis, x, pair, (-2, -1)), False, True)[k] for k in range(3))
        gradient = apply(np.moveaxis, (u * apply(SINGULAR_MASK, s, ord)) @ vh, (-2, -1), pair)
        parts.append(apply(np.sum, ts[0] * gradient, axis, keepdims))
    return total(parts)


def _of_sequence(p: Primitive) -> Callable:
    """The rule of `p` on a list or tuple of numbers or arrays (`np.max([a, b])`): p's, on the arrays NumPy makes
    of the sequence and of its tangent."""

    def jvp(ts: list, y: Term, x: Term, *rest: Term) -> Term | None:
        array = apply(np.asarray, x)
        array.type = as_array(x.type)
        return tangent_rule(p)([apply(np.asarray, dense_tangent(ts[0], x)), *ts[1:]], y, array, *rest)

    return jvp


_REDUCES = reduction()
# an axis, several, all, a negative one, keepdims, a 3-D array and a number (a 0-d reduction)
_REDUCE_SAMPLES = (
    (_M, None, False),
    (_M, 1, True),
    (_M, (0, 1), False),
    (_M, -2, False),
    (REALS.of(2, 3, 2), (0, 2), True),
    (REALS, None, False),
    (REALS.of(), None, False),
)
# a list of numbers (one a 0-d array), of arrays along an axis
_SEQUENCES = (([REALS, REALS.of(), REALS], None, False), ([REALS.of(3), REALS.of(3)], 0, False))
_ZEROS = np.array([[0.5, 0.0, -2.0, 0.7], [0.0, 0.3, 0.0, 1.1]])  # zeros: cumprod's exact recurrence


def _reduction(
    fn: Callable,
    ct: Callable,
    with_y: bool = False,
    kind: KindRule = _REDUCES,
    extra: tuple[tuple[str, object], ...] = (),
    samples: tuple[tuple[object, ...], ...] = _REDUCE_SAMPLES,
    first: str = "a",
    jvp: Callable | None = None,
    **more,
) -> Primitive:
    """`fn(a, axis, keepdims, *extra)`, whose cotangent is `ct(d, [y,] a, axis, keepdims, *extra)`: `extra`
    are more parameters (name, default) that take no cotangent (`ddof`)."""
    names, defaults = tuple(n for n, _ in extra), tuple(v for _, v in extra)

    def vjp(d: Expr, y: Expr, x: Expr, axis: Expr, keepdims: Expr, *rest: Expr) -> list[Expr | None]:
        return [call(ct, d, *([y] if with_y else []), x, axis, keepdims, *rest), None, None, *[None] * len(rest)]

    def of_sequence(d: Expr, y: Expr, x: Expr, axis: Expr, keepdims: Expr, *rest: Expr) -> list[Expr | None]:
        args = (d, *([y] if with_y else []), x, axis, keepdims, *rest)
        return [call(runtime.sequence_ct, Obj(ct, spelling(ct)), 1 + with_y, *args), None, None, *[None] * len(rest)]

    params = (first, "axis", "keepdims", *names)
    p = _np(fn, vjp, params, (None, False, *defaults), kind=kind, samples=samples, jvp=jvp, **more)
    # a list or tuple of numbers or arrays (`np.sum([a, b, c])`): the rule of the array NumPy makes of it
    p.for_sequences = replace(
        p,
        vjp=of_sequence,
        jvp=_of_sequence(p),
        containers=True,
        samples=tuple((*s, *defaults) for s in _SEQUENCES),
    )
    return p


def _average(d: Expr, y: Expr, a: Expr, axis: Expr, keepdims: Expr, weights: Expr) -> list[Expr | None]:
    ct_a = call(runtime.average_ct_a, d, y, a, axis, keepdims, weights)
    unweighted = isinstance(weights, Lit) and weights.value is None
    return [
        ct_a,
        None,
        None,
        None if unweighted else call(runtime.average_ct_weights, d, y, a, axis, keepdims, weights),
    ]


_V = REALS.of(4)
_NORM_SAMPLES = (
    *((_V, None, False, p) for p in (1, np.inf, -np.inf, 3, 0)),
    (NONZERO.of(4), None, False, 0.5),
    (_M, 1, True, 3),
    *((_M, None, False, p) for p in ("fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc")),
    (REALS.of(2, 3, 4), (2, 0), True, 1),
    (REALS.of(2, 3, 4), (1, 0), False, -np.inf),
    (REALS.of(2, 3, 4), (-1, -2), False, "nuc"),
)

_EXTREMUM = _weighted(EXTREMUM_WEIGHTS, with_y=True)

PRIMITIVES.update(
    {
        np.sum: _reduction(np.sum, runtime.sum_ct, methods=("sum",), jvp=linear(0)),
        np.mean: _reduction(np.mean, runtime.mean_ct, kind=mean_kind, methods=("mean",), jvp=linear(0)),
        np.prod: _reduction(np.prod, runtime.prod_ct, with_y=True, methods=("prod",), jvp=_prod_jvp),
        np.max: _reduction(np.max, runtime.extremum_ct, with_y=True, methods=("max",), jvp=_EXTREMUM),
        np.min: _reduction(np.min, runtime.extremum_ct, with_y=True, methods=("min",), jvp=_EXTREMUM),
        np.amax: _reduction(np.amax, runtime.extremum_ct, with_y=True, jvp=_EXTREMUM),
        np.amin: _reduction(np.amin, runtime.extremum_ct, with_y=True, jvp=_EXTREMUM),
        np.ptp: _reduction(np.ptp, runtime.ptp_ct, jvp=_weighted(PTP_WEIGHTS)),
        np.median: _reduction(np.median, runtime.median_ct, kind=reduction("f"), jvp=_weighted(MEDIAN_WEIGHTS)),
        np.var: _reduction(
            np.var,
            runtime.var_ct,
            kind=reduction("f"),
            extra=(("ddof", 0),),
            samples=(*(s + (0,) for s in _REDUCE_SAMPLES), (_M, 1, False, 1)),
            methods=("var",),
            jvp=_var_jvp,
        ),
        np.std: _reduction(
            np.std,
            runtime.std_ct,
            with_y=True,
            kind=reduction("f"),
            extra=(("ddof", 0),),
            samples=(*(s + (0,) for s in _REDUCE_SAMPLES[:-1]), (_M, None, True, 1)),
            methods=("std",),
            jvp=_std_jvp,
        ),
        np.average: _np(
            np.average,
            _average,
            ("a", "axis", "keepdims", "weights"),
            (None, False, None),
            kind=reduction("f"),
            samples=(
                *(s + (None,) for s in _REDUCE_SAMPLES),
                (_M, 1, True, POSITIVE.of(3)),
                (_M, None, False, POSITIVE.of(2, 3)),
                (REALS.of(2, 3, 4), (2, 0), False, POSITIVE.of(4, 2)),
            ),
            jvp=_average_jvp,
        ),
        np.cumsum: _np(
            np.cumsum,
            lambda d, y, x, axis: [call(runtime.cumsum_ct, d, x, axis), None],
            ("a", "axis"),
            (None,),
            kind=cumulative_kind,
            samples=((_M, None), (_M, 1), (_M, -2), (REALS, None)),
            methods=("cumsum",),
            jvp=linear(0),
        ),
        np.cumprod: _np(
            np.cumprod,
            lambda d, y, x, axis: [call(runtime.cumprod_ct, d, y, x, axis), None],
            ("a", "axis"),
            (None,),
            kind=cumulative_kind,
            samples=((_M, None), (_M, 1), (_M, -2), (REALS, None), (_ZEROS, 1), (_ZEROS, None)),
            methods=("cumprod",),
            jvp=_cumprod_jvp,
        ),
        # vector norms of any `ord`, matrix norms 'fro', 'nuc', 1, -1, 2, -2, inf, -inf (runtime.norm_ct)
        np.linalg.norm: _reduction(
            np.linalg.norm,
            runtime.norm_ct,
            with_y=True,
            kind=reduction("f"),
            extra=(("ord", None),),
            samples=(*(s + (None,) for s in _REDUCE_SAMPLES), *_NORM_SAMPLES),
            first="x",
            jvp=_norm_jvp,
        ),
    }
)
