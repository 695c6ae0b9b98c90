"""Rules for NumPy: elementwise functions (broadcasting), reductions, linear algebra,
shape operations, and the constructors and predicates that are data.

Each function takes its parameters by the names of NumPy's own signature (`params`;
a call binds its arguments by that signature, and any other parameter must be left
at its default). The transposed derivatives of the non-elementwise functions are
runtime functions in `arrays.py`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import arrays, runtime
from ..kinds import (
    BOOL_RESULT,
    GENERAL_ARRAY,
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
from ..primitives import ATTRIBUTES, METHODS, PRIMITIVES, Primitive, Vjp, keyword_call, pow_base
from ..target import BinOp, Expr, call
from ..vtypes import Arr


def _np(
    fn: Callable,
    vjp: Vjp | None,
    params: tuple[str, ...],
    defaults: tuple[object, ...] = (),
    kind: KindRule = GENERAL_ARRAY,
    positional: int | None = None,
    **more,
) -> Primitive:
    """A NumPy function taking `params` (its required ones by position, the others by keyword)."""
    module = getattr(fn, "__module__", "") or ""
    name = ("np.linalg." if module.endswith("linalg") else "np.") + fn.__name__
    emit = keyword_call(fn, params, defaults, positional)
    return Primitive(
        name,
        emit,
        vjp,
        (len(params) - len(defaults), len(params)),
        kind,
        params=params,
        defaults=defaults,
        fn=fn,
        **more,
    )


def _ufunc(fn: Callable, vjp: Vjp | None, nargs: int = 1, dtype: str | None = "f") -> Primitive:
    """A ufunc of one or two arguments: elementwise, broadcasting; `dtype` "f" for one whose result is
    a float whatever its arguments (`np.exp`), None for one that keeps their kind (`np.add`)."""
    params = ("x",) if nargs == 1 else ("x1", "x2")
    return _np(fn, vjp, params, kind=elementwise("np." + fn.__name__, dtype), elementwise=vjp is not None)


def _discrete_ufunc(fn: Callable, dtype: str | None = None) -> Primitive:
    """A piecewise-constant ufunc (`np.sign`, `np.floor`): zero derivative almost everywhere."""
    return _np(fn, None, ("x",), kind=elementwise("np." + fn.__name__, dtype))


_REDUCE = ("a", "axis", "keepdims"), (None, False)


_REDUCES = reduction()


def _reduction(fn: Callable, ct: Callable, with_y: bool = False, kind: KindRule = _REDUCES) -> Primitive:
    if with_y:
        vjp = lambda d, y, x, axis, keepdims: [call(ct, d, y, x, axis, keepdims)]  # noqa: E731
    else:
        vjp = lambda d, y, x, axis, keepdims: [call(ct, d, x, axis, keepdims)]  # noqa: E731
    return _np(fn, vjp, *_REDUCE, kind=kind)


def _by_rules(ct_a: Callable, ct_b: Callable) -> Vjp:
    """The rule of a binary array function whose two cotangents are runtime functions of (d, a, b)."""
    return lambda d, y, a, b: [call(ct_a, d, a, b), call(ct_b, d, a, b)]


def _np_pow_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    return [pow_base(d, a, b, runtime.power_base_ct), call(runtime.power_exponent_ct, d, y, a)]


def _data(fn: Callable, params: tuple[str, ...], defaults: tuple[object, ...], kind: KindRule, **more) -> Primitive:
    """A constructor chadpy has no derivative for: fine on data, an error on values that carry derivatives."""
    return _np(fn, None, params, defaults, kind, data_only=True, **more)


_matmul_vjp = _by_rules(arrays.matmul_ct_a, arrays.matmul_ct_b)
NP_POWER = _ufunc(np.power, _np_pow_vjp, 2, dtype=None)
NP_POWER.ufunc = np.power
NP_ABS = _ufunc(np.abs, lambda d, y, x: [d * call(np.sign, x)], dtype=None)
MATMUL = Primitive("matmul", lambda a, b: BinOp("@", a, b), _matmul_vjp, (2, 2), matmul)

PRIMITIVES.update(
    {
        np.exp: _ufunc(np.exp, lambda d, y, x: [d * y]),
        np.log: _ufunc(np.log, lambda d, y, x: [d / x]),
        np.sqrt: _ufunc(np.sqrt, lambda d, y, x: [d / (2.0 * y)]),
        np.sin: _ufunc(np.sin, lambda d, y, x: [d * call(np.cos, x)]),
        np.cos: _ufunc(np.cos, lambda d, y, x: [-(d * call(np.sin, x))]),
        np.tan: _ufunc(np.tan, lambda d, y, x: [d * (1.0 + y * y)]),
        np.tanh: _ufunc(np.tanh, lambda d, y, x: [d * (1.0 - y * y)]),
        np.sinh: _ufunc(np.sinh, lambda d, y, x: [d * call(np.cosh, x)]),
        np.cosh: _ufunc(np.cosh, lambda d, y, x: [d * call(np.sinh, x)]),
        np.abs: NP_ABS,
        np.square: _ufunc(np.square, lambda d, y, x: [2.0 * d * x], dtype=None),
        np.negative: _ufunc(np.negative, lambda d, y, x: [-d], dtype=None),
        np.add: _ufunc(np.add, lambda d, y, a, b: [d, d], 2, dtype=None),
        np.subtract: _ufunc(np.subtract, lambda d, y, a, b: [d, -d], 2, dtype=None),
        np.multiply: _ufunc(np.multiply, lambda d, y, a, b: [d * b, d * a], 2, dtype=None),
        np.divide: _ufunc(np.divide, lambda d, y, a, b: [d / b, -(d * y) / b], 2),
        np.power: NP_POWER,
        np.maximum: _np(
            np.maximum,
            _by_rules(arrays.maximum_ct_a, arrays.maximum_ct_b),
            ("x1", "x2"),
            kind=elementwise("np.maximum"),
        ),
        np.minimum: _np(
            np.minimum,
            _by_rules(arrays.minimum_ct_a, arrays.minimum_ct_b),
            ("x1", "x2"),
            kind=elementwise("np.minimum"),
        ),
        np.clip: _np(
            np.clip,
            lambda d, y, x, lo, hi: [call(arrays.clip_ct, d, x, lo, hi), None, None],
            ("a", "a_min", "a_max"),
            kind=clip,
        ),
        np.where: _np(
            np.where,
            lambda d, y, c, a, b: [None, call(arrays.where_ct_a, d, c, a, b), call(arrays.where_ct_b, d, c, a, b)],
            ("condition", "x", "y"),
            kind=where,
        ),
        np.sum: _reduction(np.sum, arrays.sum_ct),
        np.mean: _reduction(np.mean, arrays.mean_ct, kind=mean_rule),
        np.prod: _reduction(np.prod, arrays.prod_ct, with_y=True),
        np.max: _reduction(np.max, arrays.extremum_ct, with_y=True),
        np.min: _reduction(np.min, arrays.extremum_ct, with_y=True),
        np.amax: _reduction(np.amax, arrays.extremum_ct, with_y=True),
        np.amin: _reduction(np.amin, arrays.extremum_ct, with_y=True),
        # the 2-norm (Frobenius for matrices); another `ord` is not supported (it must stay None)
        np.linalg.norm: _np(
            np.linalg.norm,
            lambda d, y, x, axis, keepdims: [call(arrays.norm_ct, d, y, x, axis, keepdims)],
            ("x", "axis", "keepdims"),
            (None, False),
            kind=reduction("f"),
        ),
        np.matmul: _np(np.matmul, _matmul_vjp, ("x1", "x2"), kind=matmul),
        np.dot: _np(np.dot, _by_rules(arrays.dot_ct_a, arrays.dot_ct_b), ("a", "b"), kind=dot),
        np.outer: _np(np.outer, _by_rules(arrays.outer_ct_a, arrays.outer_ct_b), ("a", "b"), kind=outer),
        np.reshape: _np(
            np.reshape,
            lambda d, y, x, shape: [call(arrays.reshape_ct, d, x), None],
            ("a", "shape"),
            kind=reshape,
            aliases="view",
        ),
        np.transpose: _np(
            np.transpose,
            lambda d, y, x, axes: [call(arrays.transpose_ct, d, x, axes), None],
            ("a", "axes"),
            (None,),
            kind=same_array,
            aliases="view",
        ),
        np.concatenate: _np(
            np.concatenate,
            lambda d, y, xs, axis: [call(arrays.concatenate_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=concatenate,
            containers=True,
        ),
        np.stack: _np(
            np.stack,
            lambda d, y, xs, axis: [call(arrays.stack_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=stack,
            containers=True,
        ),
        np.array: _np(
            np.array,
            lambda d, y, x, dtype: [call(arrays.array_ct, d, x), None],
            ("object", "dtype"),
            (None,),
            kind=array_like,
            containers=True,
        ),
        np.asarray: _np(
            np.asarray,
            lambda d, y, x, dtype: [call(arrays.array_ct, d, x), None],
            ("a", "dtype"),
            (None,),
            kind=array_like,
            containers=True,
            aliases="view",
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
