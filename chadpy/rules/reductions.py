"""Rules for NumPy's reductions: sums, means, products, extrema, norms, with `axis=` and `keepdims=`.

Each function takes its parameters by the names of NumPy's own signature (`params`); the
transposed derivatives are runtime functions in `runtime/reductions.py`, which put the reduced
axes back (`keepdims`) before broadcasting the cotangent over the operand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..ir.types import VType, arr
from ..runtime import reductions as runtime
from ..target.expressions import Expr, Lit, Obj, call, spelling
from .kinds import UNKNOWN, KindRule, as_array, reduction
from .registry import NONZERO, POSITIVE, PRIMITIVES, REALS, Primitive, numpy_function
from .tangents import linear

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
    p = _np(fn, vjp, params, (None, False, *defaults), kind=kind, samples=samples, **more)
    # a list or tuple of numbers or arrays (`np.sum([a, b, c])`): the rule of the array NumPy makes of it
    p.for_sequences = replace(p, vjp=of_sequence, containers=True, samples=tuple((*s, *defaults) for s in _SEQUENCES))
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

PRIMITIVES.update(
    {
        np.sum: _reduction(np.sum, runtime.sum_ct, methods=("sum",), jvp=linear(0)),
        np.mean: _reduction(np.mean, runtime.mean_ct, kind=mean_kind, methods=("mean",)),
        np.prod: _reduction(np.prod, runtime.prod_ct, with_y=True, methods=("prod",)),
        np.max: _reduction(np.max, runtime.extremum_ct, with_y=True, methods=("max",)),
        np.min: _reduction(np.min, runtime.extremum_ct, with_y=True, methods=("min",)),
        np.amax: _reduction(np.amax, runtime.extremum_ct, with_y=True),
        np.amin: _reduction(np.amin, runtime.extremum_ct, with_y=True),
        np.ptp: _reduction(np.ptp, runtime.ptp_ct),
        np.median: _reduction(np.median, runtime.median_ct, kind=reduction("f")),
        np.var: _reduction(
            np.var,
            runtime.var_ct,
            kind=reduction("f"),
            extra=(("ddof", 0),),
            samples=(*(s + (0,) for s in _REDUCE_SAMPLES), (_M, 1, False, 1)),
            methods=("var",),
        ),
        np.std: _reduction(
            np.std,
            runtime.std_ct,
            with_y=True,
            kind=reduction("f"),
            extra=(("ddof", 0),),
            samples=(*(s + (0,) for s in _REDUCE_SAMPLES[:-1]), (_M, None, True, 1)),
            methods=("std",),
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
        ),
        np.cumsum: _np(
            np.cumsum,
            lambda d, y, x, axis: [call(runtime.cumsum_ct, d, x, axis), None],
            ("a", "axis"),
            (None,),
            kind=cumulative_kind,
            samples=((_M, None), (_M, 1), (_M, -2), (REALS, None)),
            methods=("cumsum",),
        ),
        np.cumprod: _np(
            np.cumprod,
            lambda d, y, x, axis: [call(runtime.cumprod_ct, d, y, x, axis), None],
            ("a", "axis"),
            (None,),
            kind=cumulative_kind,
            samples=((_M, None), (_M, 1), (_M, -2), (REALS, None), (_ZEROS, 1), (_ZEROS, None)),
            methods=("cumprod",),
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
        ),
    }
)
