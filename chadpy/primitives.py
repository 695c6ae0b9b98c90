"""The primitive table: every operation chadpy knows, with its transposed derivative.

Each `Primitive` says how to write the operation in the generated code (`emit`)
and, for differentiable ones, its transposed derivative Dop^t (`vjp`): given the
incoming cotangent `d`, the primal result `y` and the arguments, one cotangent per
argument (None for an argument that takes none: a shape, an axis, a condition),
or one expression whose value is the tuple of them. Rules are written with target
expressions, so `d * cos(x)` in a rule becomes `d * math.cos(x)` inline in the
generated code (no call overhead). A primitive without `vjp` is discrete:
comparisons, `//`, `int`, `len`, `np.shape`, ...

Scalar (`math`, operators), sequence (lists, dicts) and NumPy rules live side by
side. An operator means different things on different types (`+` adds numbers,
concatenates lists); `resolve` picks the version for the argument types found by
inference. A rule that needs a primal value the list may lose later (a length
before an `append`) names it with `saves`: the forward pass stores it.

Users add their own with `defvjp`, whose rule is an ordinary Python function
called at run time.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import arrays, runtime
from .errors import ChadTypeError
from .target import BinOp, Compare, Expr, IfExp, Lit, UnaryOp, call
from .vtypes import ARR, CONST, REAL, Dct, Lst, Tup, is_active, item_join, join, lst

Vjp = Callable[..., list[Expr]]


@dataclass(eq=False)
class Primitive:
    name: str
    emit: Callable[..., Expr]  # argument expressions -> primal expression
    vjp: Vjp | None = None  # (d, y, *args[, saved=]) -> a cotangent per argument, or one tuple expression
    nargs: tuple[int, int | None] = (1, 1)  # least and most arguments
    runtime_vjp: Callable | None = None  # a user rule, called at run time (see `defvjp`)
    # What the result is: "float" (math.*: a Python float), "array" (NumPy: an array),
    # "same" (operators, abs: an array if an argument is one, else a float).
    result: str = "same"
    elementwise: bool = False  # broadcasting: argument cotangents are summed back to their shapes
    params: tuple[str, ...] = ()  # names of the arguments after the first ones, for keyword calls
    defaults: tuple[object, ...] = ()  # their defaults (filled in when not given)
    saves: Callable[..., Expr] | None = None  # (y, *args) -> a forward value the rule needs
    type_rule: Callable[..., object] | None = None  # (*arg types) -> result type, when not numeric
    for_sequences: Primitive | None = None  # the version for lists and tuples (`+` concatenates)
    for_arrays: Primitive | None = None  # the version for arrays, when the scalar rule does not broadcast

    @property
    def discrete(self) -> bool:
        return self.vjp is None and self.runtime_vjp is None


def _function(
    fn: Callable, vjp: Vjp | None, nargs: tuple[int, int | None] = (1, 1), result: str = "float", **more
) -> Primitive:
    """A primitive written as a call of `fn`, e.g. `math.sin(x)`."""
    name = f"{getattr(fn, '__module__', '') or ''}.{fn.__name__}".lstrip(".")
    return Primitive(name, lambda *a: call(fn, *a), vjp, nargs, result=result, **more)


def _binary(name: str, symbol: str, vjp: Vjp | None, **more) -> Primitive:
    return Primitive(name, lambda a, b: BinOp(symbol, a, b), vjp, (2, 2), elementwise=True, **more)


def _compare(name: str, symbol: str) -> Primitive:
    return Primitive(name, lambda a, b: Compare(symbol, a, b), None, (2, 2))


def _sign_times(d: Expr, x: Expr) -> Expr:
    """d * sign(x), with sign(0) = 0 (the subgradient chadpy picks for |x| at 0)."""
    return IfExp(x.compare(">", 0), d, IfExp(x.compare("<", 0), -d, Lit(0.0)))


def _pow_base(d: Expr, a: Expr, b: Expr, general: Callable) -> Expr:
    """Cotangent of a in a ** b: inline for a literal exponent (`x ** 2` gives `d * 2 * x`)."""
    if isinstance(b, Lit) and isinstance(b.value, (int, float)) and not isinstance(b.value, bool):
        k = b.value
        return Lit(0.0) if k == 0 else d if k == 1 else d * k * a if k == 2 else d * k * a ** (k - 1)
    return call(general, d, a, b)


def _pow_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    return [_pow_base(d, a, b, runtime.pow_base_ct), call(runtime.pow_exponent_ct, d, y, a)]


def _max_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    # builtins.max keeps the first argument unless the second is strictly greater
    b_wins = b.compare(">", a)
    return [IfExp(b_wins, Lit(0.0), d), IfExp(b_wins, d, Lit(0.0))]


def _min_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    b_wins = b.compare("<", a)
    return [IfExp(b_wins, Lit(0.0), d), IfExp(b_wins, d, Lit(0.0))]


def _log_vjp(d: Expr, y: Expr, a: Expr, base: Expr | None = None) -> list[Expr]:
    if base is None:
        return [d / a]
    ln_base = call(math.log, base)
    return [d / (a * ln_base), -(d * y) / (base * ln_base)]


def _hypot_vjp(d: Expr, y: Expr, *xs: Expr) -> list[Expr]:
    return [IfExp(y.compare("==", 0), Lit(0.0), d * x / y) for x in xs]


_SQRT_PI_2 = 2.0 / math.sqrt(math.pi)


# ---------------------------------------------------------------- lists, tuples, dicts


def _concat_type(a: object, b: object) -> object:
    if isinstance(a, Tup) and isinstance(b, Tup):
        return Tup(a.items + b.items)
    return lst(join(item_join(a), item_join(b)))


def _append_type(xs: object, v: object) -> object:
    return join(xs, lst(v))


def _sum_type(xs: object, start: object = None) -> object:
    t = join(item_join(xs) if xs is not ARR else ARR, start if start is not None else CONST)
    if t not in (REAL, ARR, CONST):
        raise ChadTypeError(f"sum over elements of type {t} is not supported")
    return t


def _copy_type(x: object) -> object:
    if isinstance(x, Dct) or x is CONST:
        return CONST  # list(d) is d's keys
    if x is ARR:
        raise ChadTypeError("list() of an array is not supported; index the array instead")
    return x if isinstance(x, Lst) else lst(item_join(x))


def _values_type(d: object) -> object:
    return lst(item_join(d))


LIST_APPEND = Primitive(
    "append",
    lambda xs, v: call(runtime.list_append, xs, v),
    lambda d, y, xs, v, saved: call(runtime.append_ct, d, saved),
    (2, 2),
    saves=lambda y, xs, v: call(len, y) - 1,  # the new element's position (later appends keep it)
    type_rule=_append_type,
)
CONCAT = Primitive(
    "concat",
    lambda a, b: BinOp("+", a, b),
    lambda d, y, a, b, saved: call(runtime.concat_ct, d, saved),
    (2, 2),
    saves=lambda y, a, b: call(len, a),
    type_rule=_concat_type,
)
SUM_SEQ = Primitive(
    "sum",
    lambda *a: call(builtins.sum, *a),
    lambda d, y, xs, start=None, saved=None: [call(arrays.sum_seq_ct, d, xs, saved), d],
    (1, 2),
    saves=lambda y, xs, start=None: call(len, xs),
    type_rule=_sum_type,
)


def _extreme_seq(fn: Callable) -> Primitive:
    return Primitive(
        fn.__name__,
        lambda xs: call(fn, xs),
        lambda d, y, xs: [call(arrays.extreme_seq_ct, d, y, xs)],
        (1, 1),
        type_rule=lambda xs: item_join(xs),
    )


# max(xs), min(xs) of one sequence argument
OVER_SEQUENCE = {builtins.max: _extreme_seq(max), builtins.min: _extreme_seq(min)}
LIST_COPY = Primitive(
    "list", lambda x: call(list, x), lambda d, y, x: [call(runtime.list_ct, d, x)], (1, 1), type_rule=_copy_type
)
DICT_VALUES = Primitive(
    "values",
    lambda dct: call(runtime.dict_values, dct),
    lambda d, y, dct, saved: [call(runtime.values_ct, d, saved)],
    (1, 1),
    saves=lambda y, dct: call(list, dct),
    type_rule=_values_type,
)
DICT_KEYS = _function(list, None, result="same")
POSITIONS = _function(runtime.positions, None, result="same")
RANGE = _function(builtins.range, None, (1, 3), result="same")
ARGSORT = _function(runtime.argsort, None, (2, 2), result="same")  # `sorted(xs, key=...)`'s order
ARGBEST = _function(runtime.argbest, None, (2, 2), result="same")  # `max(xs, key=...)`'s position


# ---------------------------------------------------------------- NumPy


def _np(
    fn: Callable,
    vjp: Vjp | None,
    nargs: tuple[int, int | None] = (1, 1),
    params: tuple[str, ...] = (),
    defaults: tuple[object, ...] = (),
    **more,
) -> Primitive:
    """A NumPy function; arguments after the first `nargs[0]` may be given by keyword (`axis=0`)."""
    least = nargs[0]

    def emit(*args: Expr) -> Expr:
        keywords = {}
        for name, default, a in zip(params, defaults, args[least:]):
            if not (isinstance(a, Lit) and a.value is default or isinstance(a, Lit) and a.value == default):
                keywords[name] = a
        x = call(fn, *args[:least])
        x.keywords = keywords
        return x

    name = "np." + fn.__name__ if not getattr(fn, "__module__", "").endswith("linalg") else "np.linalg." + fn.__name__
    return Primitive(
        name, emit, vjp, (least, least + len(params)), result="array", params=params, defaults=defaults, **more
    )


def _ufunc(fn: Callable, vjp: Vjp, nargs: int = 1) -> Primitive:
    return Primitive(
        "np." + fn.__name__, lambda *a: call(fn, *a), vjp, (nargs, nargs), result="array", elementwise=True
    )


_REDUCE = ("axis", "keepdims"), (None, False)


def _reduction(fn: Callable, ct: Callable, with_y: bool = False) -> Primitive:
    if with_y:
        vjp = lambda d, y, x, axis=None, keepdims=False: [call(ct, d, y, x, axis, keepdims)]  # noqa: E731
    else:
        vjp = lambda d, y, x, axis=None, keepdims=False: [call(ct, d, x, axis, keepdims)]  # noqa: E731
    return _np(fn, vjp, (1, 1), *_REDUCE)


def _by_rules(ct_a: Callable, ct_b: Callable) -> Vjp:
    """The rule of a binary array function whose two cotangents are runtime functions of (d, a, b)."""
    return lambda d, y, a, b: [call(ct_a, d, a, b), call(ct_b, d, a, b)]


_matmul_vjp = _by_rules(arrays.matmul_ct_a, arrays.matmul_ct_b)


def _np_pow_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    return [_pow_base(d, a, b, runtime.power_base_ct), call(runtime.power_exponent_ct, d, y, a)]


NP_POWER = _ufunc(np.power, _np_pow_vjp, 2)
NP_ABS = _ufunc(np.abs, lambda d, y, x: [d * call(np.sign, x)])
MATMUL = Primitive("matmul", lambda a, b: BinOp("@", a, b), _matmul_vjp, (2, 2), result="array")


def _array_of(x: object) -> object:

    return ARR if is_active(x) else CONST


NUMPY: dict[object, Primitive] = {
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
    np.square: _ufunc(np.square, lambda d, y, x: [2.0 * d * x]),
    np.negative: _ufunc(np.negative, lambda d, y, x: [-d]),
    np.add: _ufunc(np.add, lambda d, y, a, b: [d, d], 2),
    np.subtract: _ufunc(np.subtract, lambda d, y, a, b: [d, -d], 2),
    np.multiply: _ufunc(np.multiply, lambda d, y, a, b: [d * b, d * a], 2),
    np.divide: _ufunc(np.divide, lambda d, y, a, b: [d / b, -(d * y) / b], 2),
    np.power: NP_POWER,
    np.maximum: _np(np.maximum, _by_rules(arrays.maximum_ct_a, arrays.maximum_ct_b), (2, 2)),
    np.minimum: _np(np.minimum, _by_rules(arrays.minimum_ct_a, arrays.minimum_ct_b), (2, 2)),
    np.clip: _np(np.clip, lambda d, y, x, lo, hi: [call(arrays.clip_ct, d, x, lo, hi), None, None], (3, 3)),
    np.where: _np(
        np.where,
        lambda d, y, c, a, b: [None, call(arrays.where_ct_a, d, c, a, b), call(arrays.where_ct_b, d, c, a, b)],
        (3, 3),
    ),
    np.sum: _reduction(np.sum, arrays.sum_ct),
    np.mean: _reduction(np.mean, arrays.mean_ct),
    np.prod: _reduction(np.prod, arrays.prod_ct, with_y=True),
    np.max: _reduction(np.max, arrays.extremum_ct, with_y=True),
    np.min: _reduction(np.min, arrays.extremum_ct, with_y=True),
    np.amax: _reduction(np.amax, arrays.extremum_ct, with_y=True),
    np.amin: _reduction(np.amin, arrays.extremum_ct, with_y=True),
    np.linalg.norm: _np(
        np.linalg.norm,
        lambda d, y, x, axis=None, keepdims=False: [call(arrays.norm_ct, d, y, x, axis, keepdims)],
        (1, 1),
        *_REDUCE,
    ),
    np.matmul: _np(np.matmul, _matmul_vjp, (2, 2)),
    np.dot: _np(np.dot, _by_rules(arrays.dot_ct_a, arrays.dot_ct_b), (2, 2)),
    np.outer: _np(np.outer, _by_rules(arrays.outer_ct_a, arrays.outer_ct_b), (2, 2)),
    np.reshape: _np(np.reshape, lambda d, y, x, shape: [call(arrays.reshape_ct, d, x), None], (2, 2)),
    np.transpose: _np(
        np.transpose,
        lambda d, y, x, axes=None: [call(arrays.transpose_ct, d, x, axes), None],
        (1, 1),
        ("axes",),
        (None,),
    ),
    np.concatenate: _np(
        np.concatenate,
        lambda d, y, xs, axis=0: [call(arrays.concatenate_ct, d, xs, axis), None],
        (1, 1),
        ("axis",),
        (0,),
        type_rule=lambda xs, axis=None: _array_of(xs),
    ),
    np.stack: _np(
        np.stack,
        lambda d, y, xs, axis=0: [call(arrays.stack_ct, d, xs, axis), None],
        (1, 1),
        ("axis",),
        (0,),
        type_rule=lambda xs, axis=None: _array_of(xs),
    ),
    np.array: _np(np.array, lambda d, y, x: [call(arrays.array_ct, d, x)], (1, 1), type_rule=_array_of),
    np.asarray: _np(np.asarray, lambda d, y, x: [call(arrays.array_ct, d, x)], (1, 1), type_rule=_array_of),
    # discrete: shapes, constant arrays, piecewise-constant functions
    np.shape: _function(np.shape, None, result="same"),
    np.ndim: _function(np.ndim, None, result="same"),
    np.size: _function(np.size, None, result="same"),
    np.zeros: _np(np.zeros, None),
    np.ones: _np(np.ones, None),
    np.eye: _np(np.eye, None),
    np.arange: _np(np.arange, None, (1, 3)),
    np.zeros_like: _np(np.zeros_like, None),
    np.ones_like: _np(np.ones_like, None),
    np.argmax: _np(np.argmax, None, (1, 1), ("axis",), (None,)),
    np.argmin: _np(np.argmin, None, (1, 1), ("axis",), (None,)),
    np.sign: _ufunc(np.sign, None),
    np.floor: _ufunc(np.floor, None),
    np.ceil: _ufunc(np.ceil, None),
    np.round: _np(np.round, None, (1, 2)),
    np.isnan: _ufunc(np.isnan, None),
    np.isfinite: _ufunc(np.isfinite, None),
}

# Methods and attributes of array values, as the NumPy functions they are.
METHODS: dict[str, object] = {
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
    "values": runtime.dict_values,
    "keys": list,
}
ATTRIBUTES: dict[str, object] = {"T": np.transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size}

# Operators, keyed by their Python spelling (unary ones: "neg", "pos", "not").
OPERATORS: dict[str, Primitive] = {
    "+": _binary("add", "+", lambda d, y, a, b: [d, d], for_sequences=CONCAT),
    "-": _binary("sub", "-", lambda d, y, a, b: [d, -d]),
    "*": _binary("mul", "*", lambda d, y, a, b: [d * b, d * a]),
    "/": _binary("truediv", "/", lambda d, y, a, b: [d / b, -(d * y) / b]),
    "**": _binary("pow", "**", _pow_vjp, for_arrays=NP_POWER),
    "%": _binary("mod", "%", lambda d, y, a, b: [d, -(d * (a // b))]),
    "//": _binary("floordiv", "//", None),
    "@": MATMUL,
    "neg": Primitive("neg", lambda a: -a, lambda d, y, a: [-d], elementwise=True),
    "pos": Primitive("pos", lambda a: UnaryOp("+", a), lambda d, y, a: [d], elementwise=True),
    "not": Primitive("not", lambda a: UnaryOp("not", a)),
    # comparisons: discrete
    "<": _compare("lt", "<"),
    "<=": _compare("le", "<="),
    ">": _compare("gt", ">"),
    ">=": _compare("ge", ">="),
    "==": _compare("eq", "=="),
    "!=": _compare("ne", "!="),
    "is": _compare("is", "is"),
    "is not": _compare("is_not", "is not"),
    "in": _compare("in", "in"),
    "not in": _compare("not_in", "not in"),
}

# Functions, keyed by the Python object a call resolves to.
PRIMITIVES: dict[object, Primitive] = {
    # math
    math.sin: _function(math.sin, lambda d, y, x: [d * call(math.cos, x)]),
    math.cos: _function(math.cos, lambda d, y, x: [-(d * call(math.sin, x))]),
    math.tan: _function(math.tan, lambda d, y, x: [d * (1.0 + y * y)]),
    math.asin: _function(math.asin, lambda d, y, x: [d / call(math.sqrt, 1.0 - x * x)]),
    math.acos: _function(math.acos, lambda d, y, x: [-d / call(math.sqrt, 1.0 - x * x)]),
    math.atan: _function(math.atan, lambda d, y, x: [d / (1.0 + x * x)]),
    math.atan2: _function(math.atan2, lambda d, y, a, b: [d * b / (a * a + b * b), -(d * a) / (a * a + b * b)], (2, 2)),
    math.sinh: _function(math.sinh, lambda d, y, x: [d * call(math.cosh, x)]),
    math.cosh: _function(math.cosh, lambda d, y, x: [d * call(math.sinh, x)]),
    math.tanh: _function(math.tanh, lambda d, y, x: [d * (1.0 - y * y)]),
    math.exp: _function(math.exp, lambda d, y, x: [d * y]),
    math.expm1: _function(math.expm1, lambda d, y, x: [d * (y + 1.0)]),
    math.log: _function(math.log, _log_vjp, (1, 2)),
    math.log1p: _function(math.log1p, lambda d, y, x: [d / (1.0 + x)]),
    math.log2: _function(math.log2, lambda d, y, x: [d / (x * math.log(2.0))]),
    math.log10: _function(math.log10, lambda d, y, x: [d / (x * math.log(10.0))]),
    math.sqrt: _function(math.sqrt, lambda d, y, x: [d / (2.0 * y)]),
    math.pow: _function(math.pow, _pow_vjp, (2, 2)),
    math.hypot: _function(math.hypot, _hypot_vjp, (1, None)),
    math.fabs: _function(math.fabs, lambda d, y, x: [_sign_times(d, x)]),
    math.erf: _function(math.erf, lambda d, y, x: [d * _SQRT_PI_2 * call(math.exp, -(x * x))]),
    math.floor: _function(math.floor, None),
    math.ceil: _function(math.ceil, None),
    math.trunc: _function(math.trunc, None),
    math.isnan: _function(math.isnan, None),
    math.isinf: _function(math.isinf, None),
    math.isfinite: _function(math.isfinite, None),
    # builtins
    builtins.abs: _function(builtins.abs, lambda d, y, x: [_sign_times(d, x)], result="same", for_arrays=NP_ABS),
    builtins.pow: _function(builtins.pow, _pow_vjp, (2, 2), result="same", for_arrays=NP_POWER),
    builtins.max: _function(builtins.max, _max_vjp, (2, 2), result="same"),
    builtins.min: _function(builtins.min, _min_vjp, (2, 2), result="same"),
    builtins.float: _function(builtins.float, lambda d, y, x: [d]),
    builtins.int: _function(builtins.int, None, (1, 2)),
    builtins.bool: _function(builtins.bool, None),
    builtins.round: _function(builtins.round, None, (1, 2)),
    builtins.len: _function(builtins.len, None),
    builtins.isinstance: _function(builtins.isinstance, None, (2, 2)),
    builtins.str: _function(builtins.str, None),
    builtins.print: _function(builtins.print, None, (0, None)),
    builtins.range: RANGE,
    builtins.slice: _function(builtins.slice, None, (1, 3), result="same"),
    builtins.sum: SUM_SEQ,
    builtins.list: LIST_COPY,
    runtime.check: _function(runtime.check, None, (1, 2)),
    runtime.dict_values: DICT_VALUES,
    **NUMPY,
}

# Primitives whose n-ary calls are folded into chains of binary calls, left to right
# (the order in which builtins.max/min compare, so ties resolve the same way).
BINARY_FOLDS = {PRIMITIVES[builtins.max], PRIMITIVES[builtins.min]}

# Functions a call lowers into a loop (the paper's fold), not a primitive.
REDUCE = functools.reduce


def resolve(op: Primitive, types: list) -> Primitive:
    """The version of `op` for these argument types (a list `+` concatenates)."""
    if op.for_sequences is not None and any(isinstance(t, (Lst, Tup)) for t in types):
        return op.for_sequences
    if op.for_arrays is not None and ARR in types:
        return op.for_arrays
    return op


def defvjp(fn: Callable, vjp: Callable, nargs: tuple[int, int | None] = (1, None)) -> Callable:
    """Teach chadpy the derivative of `fn`.

    `vjp(d, y, *args)` is called at run time with the output cotangent `d`, the
    primal result `y` and the arguments, and returns one cotangent per argument.
    Returns `fn`, so it can be used as a decorator factory's result.
    """
    name = getattr(fn, "__qualname__", repr(fn))
    PRIMITIVES[fn] = Primitive(name, lambda *a: call(fn, *a), None, nargs, runtime_vjp=vjp)
    return fn
