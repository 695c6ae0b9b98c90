"""The primitive table: every operation chadpy knows, with its transposed derivative.

Each `Primitive` says how to write the operation in the generated code (`emit`)
and, for differentiable ones, its transposed derivative Dop^t (`vjp`): given the
incoming cotangent `d`, the primal result `y` and the arguments, one cotangent per
argument. Rules are written with target expressions, so `d * cos(x)` in a rule
becomes `d * math.cos(x)` inline in the generated code (no call overhead).
A primitive without `vjp` is discrete: comparisons, `//`, `int`, `len`, ...

Users add their own with `defvjp`, whose rule is an ordinary Python function
called at run time.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass

from . import runtime
from .target import BinOp, Compare, Expr, IfExp, Lit, UnaryOp, call

Vjp = Callable[..., list[Expr]]


@dataclass(eq=False)
class Primitive:
    name: str
    emit: Callable[..., Expr]  # argument expressions -> primal expression
    vjp: Vjp | None = None  # (d, y, *args) -> one cotangent expression per argument
    nargs: tuple[int, int | None] = (1, 1)  # least and most arguments
    runtime_vjp: Callable | None = None  # a user rule, called at run time (see `defvjp`)

    @property
    def discrete(self) -> bool:
        return self.vjp is None and self.runtime_vjp is None


def _function(fn: Callable, vjp: Vjp | None, nargs: tuple[int, int | None] = (1, 1)) -> Primitive:
    """A primitive written as a call of `fn`, e.g. `math.sin(x)`."""
    return Primitive(f"{getattr(fn, '__module__', '')}.{fn.__name__}".lstrip("."), lambda *a: call(fn, *a), vjp, nargs)


def _binary(name: str, symbol: str, vjp: Vjp | None) -> Primitive:
    return Primitive(name, lambda a, b: BinOp(symbol, a, b), vjp, (2, 2))


def _compare(name: str, symbol: str) -> Primitive:
    return Primitive(name, lambda a, b: Compare(symbol, a, b), None, (2, 2))


def _sign_times(d: Expr, x: Expr) -> Expr:
    """d * sign(x), with sign(0) = 0 (the subgradient chadpy picks for |x| at 0)."""
    return IfExp(x.compare(">", 0), d, IfExp(x.compare("<", 0), -d, Lit(0.0)))


def _pow_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    if isinstance(b, Lit) and isinstance(b.value, (int, float)) and not isinstance(b.value, bool):
        k = b.value
        da = Lit(0.0) if k == 0 else d if k == 1 else d * k * a if k == 2 else d * k * a ** (k - 1)
    else:
        da = call(runtime.pow_base_ct, d, a, b)
    return [da, call(runtime.pow_exponent_ct, d, y, a)]


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

# Operators, keyed by their Python spelling (unary ones: "neg", "pos", "not").
OPERATORS: dict[str, Primitive] = {
    "+": _binary("add", "+", lambda d, y, a, b: [d, d]),
    "-": _binary("sub", "-", lambda d, y, a, b: [d, -d]),
    "*": _binary("mul", "*", lambda d, y, a, b: [d * b, d * a]),
    "/": _binary("truediv", "/", lambda d, y, a, b: [d / b, -(d * y) / b]),
    "**": _binary("pow", "**", _pow_vjp),
    "%": _binary("mod", "%", lambda d, y, a, b: [d, -(d * (a // b))]),
    "//": _binary("floordiv", "//", None),
    "neg": Primitive("neg", lambda a: -a, lambda d, y, a: [-d]),
    "pos": Primitive("pos", lambda a: UnaryOp("+", a), lambda d, y, a: [d]),
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
    builtins.abs: _function(builtins.abs, lambda d, y, x: [_sign_times(d, x)]),
    builtins.pow: _function(builtins.pow, _pow_vjp, (2, 2)),
    builtins.max: _function(builtins.max, _max_vjp, (2, 2)),
    builtins.min: _function(builtins.min, _min_vjp, (2, 2)),
    builtins.float: _function(builtins.float, lambda d, y, x: [d]),
    builtins.int: _function(builtins.int, None, (1, 2)),
    builtins.bool: _function(builtins.bool, None),
    builtins.round: _function(builtins.round, None, (1, 2)),
    builtins.len: _function(builtins.len, None),
    builtins.isinstance: _function(builtins.isinstance, None, (2, 2)),
    builtins.str: _function(builtins.str, None),
    builtins.print: _function(builtins.print, None, (0, None)),
    runtime.check: _function(runtime.check, None, (1, 2)),
}

# Functions whose n-ary calls are folded into chains of binary calls, left to right
# (the order in which builtins.max/min compare, so ties resolve the same way).
BINARY_FOLDS = {builtins.max, builtins.min}


def defvjp(fn: Callable, vjp: Callable, nargs: tuple[int, int | None] = (1, None)) -> Callable:
    """Teach chadpy the derivative of `fn`.

    `vjp(d, y, *args)` is called at run time with the output cotangent `d`, the
    primal result `y` and the arguments, and returns one cotangent per argument.
    Returns `fn`, so it can be used as a decorator factory's result.
    """
    name = getattr(fn, "__qualname__", repr(fn))
    PRIMITIVES[fn] = Primitive(name, lambda *a: call(fn, *a), None, nargs, runtime_vjp=vjp)
    return fn
