"""Rules for numbers: Python's operators, the `math` module and the numeric builtins.

One registration per function: its derivative (`vjp`, None for a discrete one) and
the kind of its result (`kinds.py`). Operators that also work on arrays broadcast
(`elementwise`); where the scalar formula does not (`**`, `abs`), `for_arrays`
names the NumPy version.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import runtime
from ..kinds import (
    BOOL_RESULT,
    INDICES,
    INT_RESULT,
    NONE_RESULT,
    STR_RESULT,
    KindRule,
    compare,
    either,
    elementwise,
    fixed,
    round_builtin,
)
from ..primitives import OPERATORS, PRIMITIVES, Primitive, Vjp, function, pow_base, sign_times
from ..target import BinOp, Compare, Expr, IfExp, Lit, UnaryOp, call
from ..vtypes import REAL, SLICE
from .numpy import MATMUL, NP_ABS, NP_POWER
from .sequences import CONCAT, LIST_COPY, REPEAT, SUM_SEQ


def _binary(name: str, symbol: str, vjp: Vjp | None, dtype: str | None = None, **more) -> Primitive:
    kind = elementwise(symbol, dtype)  # messages show the operator as written
    return Primitive(name, lambda a, b: BinOp(symbol, a, b), vjp, (2, 2), kind, elementwise=True, **more)


def _compare(name: str, symbol: str, kind: KindRule = compare) -> Primitive:
    return Primitive(name, lambda a, b: Compare(symbol, a, b), None, (2, 2), kind)


def _pow_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    return [pow_base(d, a, b, runtime.pow_base_ct), call(runtime.pow_exponent_ct, d, y, a)]


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

OPERATORS.update(
    {
        "+": _binary("add", "+", lambda d, y, a, b: [d, d], for_sequences=CONCAT, ufunc=np.add),
        "-": _binary("sub", "-", lambda d, y, a, b: [d, -d], ufunc=np.subtract),
        "*": _binary("mul", "*", lambda d, y, a, b: [d * b, d * a], for_sequences=REPEAT, ufunc=np.multiply),
        "/": _binary("truediv", "/", lambda d, y, a, b: [d / b, -(d * y) / b], dtype="f", ufunc=np.true_divide),
        "**": _binary("pow", "**", _pow_vjp, for_arrays=NP_POWER),
        "%": _binary("mod", "%", lambda d, y, a, b: [d, -(d * (a // b))], ufunc=np.remainder),
        "//": _binary("floordiv", "//", None, ufunc=np.floor_divide),
        "@": MATMUL,
        "neg": Primitive("neg", lambda a: -a, lambda d, y, a: [-d], kind=elementwise("-"), elementwise=True),
        "pos": Primitive(
            "pos", lambda a: UnaryOp("+", a), lambda d, y, a: [d], kind=elementwise("+"), elementwise=True
        ),
        "not": Primitive("not", lambda a: UnaryOp("not", a), kind=BOOL_RESULT),
        # comparisons: discrete
        "<": _compare("lt", "<"),
        "<=": _compare("le", "<="),
        ">": _compare("gt", ">"),
        ">=": _compare("ge", ">="),
        "==": _compare("eq", "=="),
        "!=": _compare("ne", "!="),
        "is": _compare("is", "is", BOOL_RESULT),
        "is not": _compare("is_not", "is not", BOOL_RESULT),
        "in": _compare("in", "in", BOOL_RESULT),
        "not in": _compare("not_in", "not in", BOOL_RESULT),
    }
)

PRIMITIVES.update(
    {
        # math
        math.sin: function(math.sin, lambda d, y, x: [d * call(math.cos, x)]),
        math.cos: function(math.cos, lambda d, y, x: [-(d * call(math.sin, x))]),
        math.tan: function(math.tan, lambda d, y, x: [d * (1.0 + y * y)]),
        math.asin: function(math.asin, lambda d, y, x: [d / call(math.sqrt, 1.0 - x * x)]),
        math.acos: function(math.acos, lambda d, y, x: [-d / call(math.sqrt, 1.0 - x * x)]),
        math.atan: function(math.atan, lambda d, y, x: [d / (1.0 + x * x)]),
        math.atan2: function(
            math.atan2, lambda d, y, a, b: [d * b / (a * a + b * b), -(d * a) / (a * a + b * b)], (2, 2)
        ),
        math.sinh: function(math.sinh, lambda d, y, x: [d * call(math.cosh, x)]),
        math.cosh: function(math.cosh, lambda d, y, x: [d * call(math.sinh, x)]),
        math.tanh: function(math.tanh, lambda d, y, x: [d * (1.0 - y * y)]),
        math.exp: function(math.exp, lambda d, y, x: [d * y]),
        math.expm1: function(math.expm1, lambda d, y, x: [d * (y + 1.0)]),
        math.log: function(math.log, _log_vjp, (1, 2)),
        math.log1p: function(math.log1p, lambda d, y, x: [d / (1.0 + x)]),
        math.log2: function(math.log2, lambda d, y, x: [d / (x * math.log(2.0))]),
        math.log10: function(math.log10, lambda d, y, x: [d / (x * math.log(10.0))]),
        math.sqrt: function(math.sqrt, lambda d, y, x: [d / (2.0 * y)]),
        math.pow: function(math.pow, _pow_vjp, (2, 2)),
        math.hypot: function(math.hypot, _hypot_vjp, (1, None)),
        math.fabs: function(math.fabs, lambda d, y, x: [sign_times(d, x)]),
        math.erf: function(math.erf, lambda d, y, x: [d * _SQRT_PI_2 * call(math.exp, -(x * x))]),
        math.floor: function(math.floor, None, kind=INT_RESULT),
        math.ceil: function(math.ceil, None, kind=INT_RESULT),
        math.trunc: function(math.trunc, None, kind=INT_RESULT),
        math.isnan: function(math.isnan, None, kind=BOOL_RESULT),
        math.isinf: function(math.isinf, None, kind=BOOL_RESULT),
        math.isfinite: function(math.isfinite, None, kind=BOOL_RESULT),
        # builtins
        builtins.abs: function(
            builtins.abs, lambda d, y, x: [sign_times(d, x)], kind=elementwise("abs"), for_arrays=NP_ABS
        ),
        builtins.pow: function(
            builtins.pow,
            _pow_vjp,
            (2, 2),
            kind=elementwise("pow"),
            for_arrays=NP_POWER,
            params=("base", "exp"),
        ),
        builtins.max: function(builtins.max, _max_vjp, (2, 2), kind=either, aliases="argument"),
        builtins.min: function(builtins.min, _min_vjp, (2, 2), kind=either, aliases="argument"),
        builtins.float: function(builtins.float, lambda d, y, x: [d], kind=fixed(REAL)),
        builtins.int: function(builtins.int, None, (1, 2), kind=INT_RESULT),
        builtins.bool: function(builtins.bool, None, kind=BOOL_RESULT),
        builtins.round: function(
            builtins.round, None, (1, 2), kind=round_builtin, params=("number", "ndigits"), defaults=(None,)
        ),
        builtins.len: function(builtins.len, None, kind=INT_RESULT),
        builtins.isinstance: function(builtins.isinstance, None, (2, 2), kind=BOOL_RESULT),
        builtins.str: function(builtins.str, None, kind=STR_RESULT),
        builtins.print: function(builtins.print, None, (0, None), kind=NONE_RESULT),
        builtins.range: function(builtins.range, None, (1, 3), kind=INDICES),
        builtins.slice: function(builtins.slice, None, (1, 3), kind=fixed(SLICE)),
        builtins.sum: SUM_SEQ,
        builtins.list: LIST_COPY,
        runtime.check: function(runtime.check, None, (1, 2), kind=NONE_RESULT),
    }
)

# Primitives whose n-ary calls are folded into chains of binary calls, left to right
# (the order in which builtins.max/min compare, so ties resolve the same way).
BINARY_FOLDS = {PRIMITIVES[builtins.max], PRIMITIVES[builtins.min]}
