"""Rules for NumPy: reductions, linear algebra, shape operations, the elementwise
selections (`np.maximum`, `np.where`, ...), and the constructors and predicates that
are data. The pointwise functions (`np.sin`, `np.add`, ...) are in `pointwise.py`,
written once with their `math` flavours.

Each function takes its parameters by the names of NumPy's own signature (`params`;
a call binds its arguments by that signature, and any other parameter must be left
at its default). The transposed derivatives are runtime functions in `array_rules.py`;
`samples` are argument lists where the rule test checks them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import array_rules
from ..expressions import BinOp, call
from ..kinds import (
    BOOL_RESULT,
    INT_RESULT,
    KindRule,
    arange,
    argreduce,
    array_like,
    array_shape,
    clip,
    concatenate,
    dot,
    elementwise,
    eye,
    filled,
    fixed,
    matmul,
    mean_rule,
    outer,
    reduction,
    reshape,
    same_array,
    stack,
    where,
)
from ..primitives import ATTRIBUTES, METHODS, PRIMITIVES, REALS, Primitive, Vjp, numpy_function
from ..vtypes import Arr

_np = numpy_function
_M = REALS.of(2, 3)  # a matrix the rule test samples
_REDUCE = ("a", "axis", "keepdims"), (None, False)
_REDUCES = reduction()
_REDUCE_SAMPLES = ((_M, None, False), (_M, 1, True), (_M, (0, 1), False))


def _discrete_ufunc(fn: Callable, dtype: str | None = None) -> Primitive:
    """A piecewise-constant ufunc (`np.sign`, `np.floor`): zero derivative almost everywhere."""
    return _np(fn, None, ("x",), kind=elementwise("np." + fn.__name__, dtype))


def _reduction(fn: Callable, ct: Callable, with_y: bool = False, kind: KindRule = _REDUCES, **more) -> Primitive:
    if with_y:
        vjp = lambda d, y, x, axis, keepdims: [call(ct, d, y, x, axis, keepdims)]  # noqa: E731
    else:
        vjp = lambda d, y, x, axis, keepdims: [call(ct, d, x, axis, keepdims)]  # noqa: E731
    return _np(fn, vjp, *_REDUCE, kind=kind, samples=_REDUCE_SAMPLES, **more)


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
    return _np(fn, vjp, ("x1", "x2"), kind=elementwise("np." + fn.__name__), samples=samples)


_matmul_vjp = _by_rules(array_rules.matmul_ct_a, array_rules.matmul_ct_b)
_PRODUCTS = ((_M, REALS.of(3, 2)), (REALS.of(3), REALS.of(3, 2)), (_M, REALS.of(3)))
MATMUL = Primitive("matmul", lambda a, b: BinOp("@", a, b), _matmul_vjp, (2, 2), matmul, samples=_PRODUCTS)
_MASK = np.array([[True, False, True], [False, False, True]])

PRIMITIVES.update(
    {
        np.maximum: _selection(np.maximum, array_rules.maximum_ct_a, array_rules.maximum_ct_b),
        np.minimum: _selection(np.minimum, array_rules.minimum_ct_a, array_rules.minimum_ct_b),
        np.fmax: _selection(np.fmax, array_rules.fmax_ct),
        np.fmin: _selection(np.fmin, array_rules.fmin_ct),
        np.clip: _np(
            np.clip,
            lambda d, y, x, lo, hi: [call(array_rules.clip_ct, d, x, lo, hi), None, None],
            ("a", "a_min", "a_max"),
            kind=clip,
            samples=((_M, -0.5, 0.5), (_M, None, 0.2), (REALS, 0.0, 1.0)),
        ),
        np.where: _np(
            np.where,
            lambda d, y, c, a, b: [
                None,
                call(array_rules.where_ct_a, d, c, a, b),
                call(array_rules.where_ct_b, d, c, a, b),
            ],
            ("condition", "x", "y"),
            kind=where,
            samples=((_MASK, _M, REALS.of(3)), (_MASK, REALS, _M)),
        ),
        np.sum: _reduction(np.sum, array_rules.sum_ct),
        np.mean: _reduction(np.mean, array_rules.mean_ct, kind=mean_rule),
        np.prod: _reduction(np.prod, array_rules.prod_ct, with_y=True),
        np.max: _reduction(np.max, array_rules.extremum_ct, with_y=True),
        np.min: _reduction(np.min, array_rules.extremum_ct, with_y=True),
        np.amax: _reduction(np.amax, array_rules.extremum_ct, with_y=True),
        np.amin: _reduction(np.amin, array_rules.extremum_ct, with_y=True),
        # the 2-norm (Frobenius for matrices); another `ord` is not supported (it must stay None)
        np.linalg.norm: _np(
            np.linalg.norm,
            lambda d, y, x, axis, keepdims: [call(array_rules.norm_ct, d, y, x, axis, keepdims)],
            ("x", "axis", "keepdims"),
            (None, False),
            kind=reduction("f"),
            samples=_REDUCE_SAMPLES,
        ),
        np.matmul: _np(np.matmul, _matmul_vjp, ("x1", "x2"), kind=matmul, samples=_PRODUCTS),
        np.dot: _np(
            np.dot,
            _by_rules(array_rules.dot_ct_a, array_rules.dot_ct_b),
            ("a", "b"),
            kind=dot,
            samples=(*_PRODUCTS, (REALS, _M)),
        ),
        np.outer: _np(
            np.outer,
            _by_rules(array_rules.outer_ct_a, array_rules.outer_ct_b),
            ("a", "b"),
            kind=outer,
            samples=_PRODUCTS,
        ),
        np.reshape: _np(
            np.reshape,
            lambda d, y, x, shape: [call(array_rules.reshape_ct, d, x), None],
            ("a", "shape"),
            kind=reshape,
            aliases="view",
            samples=((_M, (3, 2)), (_M, -1)),
        ),
        np.transpose: _np(
            np.transpose,
            lambda d, y, x, axes: [call(array_rules.transpose_ct, d, x, axes), None],
            ("a", "axes"),
            (None,),
            kind=same_array,
            aliases="view",
            samples=((_M, None), (REALS.of(2, 3, 4), (2, 0, 1))),
        ),
        np.concatenate: _np(
            np.concatenate,
            lambda d, y, xs, axis: [call(array_rules.concatenate_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=concatenate,
            containers=True,
            samples=(([_M, REALS.of(1, 3)], 0), ([_M, _M], 1), ([_M, REALS.of(4)], None)),
        ),
        np.stack: _np(
            np.stack,
            lambda d, y, xs, axis: [call(array_rules.stack_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=stack,
            containers=True,
            samples=(([_M, _M], 0), ([REALS.of(3), REALS.of(3)], -1)),
        ),
        np.array: _np(
            np.array,
            lambda d, y, x, dtype: [call(array_rules.array_ct, d, x), None],
            ("object", "dtype"),
            (None,),
            kind=array_like,
            containers=True,
            samples=(([REALS, REALS, REALS], None), (_M, None)),
        ),
        np.asarray: _np(
            np.asarray,
            lambda d, y, x, dtype: [call(array_rules.array_ct, d, x), None],
            ("a", "dtype"),
            (None,),
            kind=array_like,
            containers=True,
            aliases="view",
            samples=(([REALS, REALS], None), (_M, None)),
        ),
        # discrete: shapes, piecewise-constant functions, predicates
        np.shape: _np(np.shape, None, ("a",), kind=array_shape),
        np.ndim: _np(np.ndim, None, ("a",), kind=INT_RESULT),
        np.size: _np(np.size, None, ("a",), kind=INT_RESULT),
        np.zeros_like: _np(np.zeros_like, None, ("a", "dtype"), (None,), kind=array_like),
        np.ones_like: _np(np.ones_like, None, ("a", "dtype"), (None,), kind=array_like),
        np.argmax: _np(np.argmax, None, ("a", "axis"), (None,), kind=argreduce),
        np.argmin: _np(np.argmin, None, ("a", "axis"), (None,), kind=argreduce),
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
        np.heaviside: _np(np.heaviside, None, ("x1", "x2"), kind=elementwise("np.heaviside", "f")),
        np.floor_divide: _np(np.floor_divide, None, ("x1", "x2"), kind=elementwise("np.floor_divide")),
        np.allclose: _np(np.allclose, None, ("a", "b", "rtol", "atol"), (1e-05, 1e-08), kind=BOOL_RESULT),
        np.isclose: _np(
            np.isclose, None, ("a", "b", "rtol", "atol"), (1e-05, 1e-08), kind=elementwise("np.isclose", "b")
        ),
        np.any: _np(np.any, None, ("a", "axis"), (None,), kind=reduction("b")),
        np.all: _np(np.all, None, ("a", "axis"), (None,), kind=reduction("b")),
        # constructors: data (their arguments are shapes and constants)
        np.zeros: _data(np.zeros, ("shape", "dtype"), (None,), filled, positional=1),
        np.ones: _data(np.ones, ("shape", "dtype"), (None,), filled, positional=1),
        np.eye: _data(np.eye, ("N", "M", "k"), (None, 0), eye),
        np.arange: _data(np.arange, ("start_or_stop", "stop", "step", "dtype"), (None, 1, None), arange, positional=3),
        np.linspace: _data(np.linspace, ("start", "stop", "num", "endpoint"), (50, True), fixed(Arr(1, "f"))),
    }
)

# Methods and attributes of array values, as the NumPy functions they are.
METHODS.update(
    {
        "sum": np.sum,
        "mean": np.mean,
        "prod": np.prod,
        "max": np.max,
        "min": np.min,
        "dot": np.dot,
        "reshape": np.reshape,
        "transpose": np.transpose,
        "argmax": np.argmax,
        "argmin": np.argmin,
        "any": np.any,
        "all": np.all,
    }
)
ATTRIBUTES.update({"T": np.transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size})
