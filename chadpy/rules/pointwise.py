"""Rules for pointwise functions: each formula once, registered for every flavour of its function.

A line names the flavours (`math.sin` on numbers, `np.sin` on arrays, which broadcasts),
the transposed derivative `(m, d, y, *xs) -> a cotangent per argument`, with what it
calls spelled through `m` (`m.cos(x)` is `math.cos(x)` or `np.cos(x)`), and, where the
reals in [-0.9, 0.9] will not do, the domain where the rule test samples the arguments.
Adding a NumPy ufunc with a standard derivative is one line here (the rule test
picks it up; docs/language.md's function list must name it). The arithmetic formulas are
shared with the operators and builtins of `scalar.py`.
"""

from __future__ import annotations

import builtins
import functools
import math
from types import ModuleType

import numpy as np

from ..ir.types import Tup
from ..runtime import numpy as numpy_runtime
from ..runtime import pointwise as runtime
from ..target.expressions import Expr, Lit, Name, call
from .kinds import KindRule, broadcast
from .registry import (
    NONZERO,
    POSITIVE,
    PRIMITIVES,
    REALS,
    SPELLINGS,
    ZERO,
    Reals,
    Spelling,
    function,
    literal_number,
    numpy_function,
    pointwise,
    pow_base,
    sampled,
)
from .tangents import BROADCAST_LIKE, ZEROS, Term, apply, term, total, tuple_of


def _log(m: Spelling, d: Expr, y: Expr, x: Expr, base: Expr | None = None) -> list[Expr]:
    if base is None:
        return [d / x]
    ln_base = m.log(base)
    return [d / (x * ln_base), -(d * y) / (base * ln_base)]


def _hypot(m: Spelling, d: Expr, y: Expr, *xs: Expr) -> list[Expr]:
    """0 at the origin (the limit along every ray is a direction's cosine; JAX and autograd give 0 too)."""
    return [d * x / m.safe_divisor(y) for x in xs]


def _sinc(m: Spelling, d: Expr, y: Expr, x: Expr) -> list[Expr]:
    """sinc(x) = sin(pi x) / (pi x): (cos(pi x) - sinc(x)) / x, and its limit 0 at x = 0."""
    return [d * (m.cos(math.pi * x) - y) / m.safe_divisor(x)]


def _mod(m: Spelling, d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    """`a % b` = a - b * floor(a / b): the derivative of the piece a lies on (d/db = -floor(a / b))."""
    return [d, -(d * (a // b))]


def _pow_base(m: Spelling, d: Expr, a: Expr, b: Expr) -> Expr:
    """Cotangent of a in a ** b; an exponent written in the code below 1 has a pole at a = 0, one that is not
    a whole number no value below 0 (NaN): a zero cotangent stays zero there (strong zero)."""
    ct = pow_base(d, a, b, m.pow_base)
    k = literal_number(b)
    return m.strong_zero(d, ct) if k is not None and (0 != k < 1 or k != int(k)) else ct


def _mul(d: Expr, a: Expr, b: Expr) -> list[Expr]:
    """d * b and d * a; for a square `x * x`, all of it in the first part: x + x is 2 * x exactly,
    and one product and one addition fewer (a sum of squares' `r * r`, an RNN's `h * h`)."""
    if isinstance(a, Name) and isinstance(b, Name) and a.id == b.id:
        return [d * a * Lit(2.0), ZERO]
    return [d * b, d * a]


_SQRT_PI_2 = 2.0 / math.sqrt(math.pi)
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_DEGREE = math.pi / 180.0
_BASE = Reals(1.5, 3.0)  # a logarithm's base, away from 1
_ABOVE_ONE = Reals(1.2, 3.0)  # arccosh's domain, away from its pole at 1
_TWO_SIDED = Reals(0.3, 2.0, signed=True)  # away from 0 (a jump of fmod's and remainder's derivative)
_GAMMA = Reals(0.3, 4.0)  # gamma on positive reals, away from its poles at 0, -1, ...

# arithmetic: the operators `+ - * / ** -x %` and the builtins `abs`, `pow` (scalar.py) share these
ADD = pointwise(np.add, lambda m, d, y, a, b: [d, d])
SUB = pointwise(np.subtract, lambda m, d, y, a, b: [d, -d])
MUL = pointwise(np.multiply, lambda m, d, y, a, b: _mul(d, a, b))
DIV = pointwise(
    np.divide, lambda m, d, y, a, b: [m.quotient(d, b), m.quotient(-(d * y), b)], (REALS, NONZERO), strong=True
)
NEG = pointwise(np.negative, lambda m, d, y, x: [-d])
MOD = pointwise(np.remainder, _mod, (REALS, NONZERO))
POW = pointwise(
    (math.pow, np.power, np.float_power),
    lambda m, d, y, a, b: [_pow_base(m, d, a, b), m.pow_exponent(d, y, a)],
    POSITIVE,
)
ABS = pointwise((math.fabs, np.abs, np.fabs), lambda m, d, y, x: [m.times_sign(d, x)], NONZERO)
pointwise(np.positive, lambda m, d, y, x: [d])
pointwise(np.conjugate, lambda m, d, y, x: [d])  # of reals: the identity
pointwise(np.square, lambda m, d, y, x: [2.0 * d * x])
pointwise(np.reciprocal, lambda m, d, y, x: [-(d * y * y)], NONZERO, strong=True)
pointwise((math.cbrt, np.cbrt), lambda m, d, y, x: [d / (3.0 * y * y)], NONZERO, strong=True)
pointwise((math.sqrt, np.sqrt), lambda m, d, y, x: [d / (2.0 * y)], POSITIVE, strong=True)
pointwise((math.radians, np.radians, np.deg2rad), lambda m, d, y, x: [d * _DEGREE])
pointwise((math.degrees, np.degrees, np.rad2deg), lambda m, d, y, x: [d / _DEGREE])
# trigonometric and hyperbolic
pointwise((math.sin, np.sin), lambda m, d, y, x: [d * m.cos(x)])
pointwise((math.cos, np.cos), lambda m, d, y, x: [-(d * m.sin(x))])
pointwise((math.tan, np.tan), lambda m, d, y, x: [d * (1.0 + y * y)])
pointwise((math.asin, np.arcsin), lambda m, d, y, x: [d / m.sqrt(1.0 - x * x)], strong=True)
pointwise((math.acos, np.arccos), lambda m, d, y, x: [-d / m.sqrt(1.0 - x * x)], strong=True)
pointwise((math.atan, np.arctan), lambda m, d, y, x: [d / (1.0 + x * x)])
pointwise(np.sinc, _sinc, Reals(-1.5, 1.5))
pointwise((math.sinh, np.sinh), lambda m, d, y, x: [d * m.cosh(x)])
pointwise((math.cosh, np.cosh), lambda m, d, y, x: [d * m.sinh(x)])
pointwise((math.tanh, np.tanh), lambda m, d, y, x: [d * (1.0 - y * y)])
pointwise((math.asinh, np.arcsinh), lambda m, d, y, x: [d / m.sqrt(x * x + 1.0)])
pointwise((math.acosh, np.arccosh), lambda m, d, y, x: [d / m.sqrt(x * x - 1.0)], _ABOVE_ONE, strong=True)
pointwise((math.atanh, np.arctanh), lambda m, d, y, x: [d / (1.0 - x * x)], strong=True)
# exponentials and logarithms
pointwise((math.exp, np.exp), lambda m, d, y, x: [d * y])
pointwise((math.exp2, np.exp2), lambda m, d, y, x: [d * y * _LN2])
pointwise((math.expm1, np.expm1), lambda m, d, y, x: [d * (y + 1.0)])
pointwise((math.log, np.log), _log, (POSITIVE, _BASE), strong=True)
pointwise((math.log1p, np.log1p), lambda m, d, y, x: [d / (1.0 + x)], strong=True)
pointwise((math.log2, np.log2), lambda m, d, y, x: [d / (x * _LN2)], POSITIVE, strong=True)
pointwise((math.log10, np.log10), lambda m, d, y, x: [d / (x * _LN10)], POSITIVE, strong=True)
pointwise(np.logaddexp, lambda m, d, y, a, b: [d * m.exp(a - y), d * m.exp(b - y)], Reals(-3.0, 3.0))
pointwise(np.logaddexp2, lambda m, d, y, a, b: [d * m.exp2(a - y), d * m.exp2(b - y)], Reals(-3.0, 3.0))
# special functions
pointwise(math.erf, lambda m, d, y, x: [d * _SQRT_PI_2 * m.exp(-(x * x))])
pointwise(math.erfc, lambda m, d, y, x: [-(d * _SQRT_PI_2 * m.exp(-(x * x)))])
pointwise(
    math.gamma,
    lambda m, d, y, x: [d * y * call(runtime.digamma, x)],
    _GAMMA,
    jvp=lambda m, ts, y, x: ts[0] * y * apply(runtime.digamma, x),
)
pointwise(
    math.lgamma,
    lambda m, d, y, x: [d * call(runtime.digamma, x)],
    _GAMMA,
    jvp=lambda m, ts, y, x: ts[0] * apply(runtime.digamma, x),
)
# several arguments
pointwise(
    (math.atan2, np.arctan2),
    lambda m, d, y, a, b: [d * b / (a * a + b * b), -(d * a) / (a * a + b * b)],
    NONZERO,
    strong=True,
)
pointwise(math.hypot, _hypot)
pointwise(np.hypot, lambda m, d, y, a, b: _hypot(m, d, y, a, b))
# the sign of x (0 at x = 0, as abs), times that of s (copysign(x, -0.0) is -|x|); 0 to s (a jump at 0)
pointwise(
    (math.copysign, np.copysign),
    lambda m, d, y, x, s: [m.times_sign(d, x) * m.copysign(1.0, s), Lit(0.0)],
    jvp=lambda m, ts, y, x, s: ts[0] and m.times_sign(ts[0], x) * m.copysign(1.0, s),
)
pointwise((math.fmod, np.fmod), lambda m, d, y, a, b: [d, -(d * m.trunc(a / b))], (REALS, _TWO_SIDED))
# math.remainder rounds the quotient half to even; (a - y) / b is that integer up to rounding
pointwise(
    math.remainder,
    lambda m, d, y, a, b: [d, -(d * call(round, (a - y) / b))],
    (_TWO_SIDED, _TWO_SIDED),
    jvp=lambda m, ts, y, a, b: total([ts[0], ts[1] and -(ts[1] * apply(round, (a - y) / b))]),
)
pointwise((math.ldexp, np.ldexp), lambda m, d, y, x, i: [d * m.ldexp(1.0, i), None], (REALS, 3))
PRIMITIVES[math.hypot].samples = sampled(REALS, 1, 2, 3)  # hypot(*xs)
# nextafter(x, y) is x moved one step towards y: d/dx = 1, piecewise constant in y
pointwise((math.nextafter, np.nextafter), lambda m, d, y, a, b: [d, Lit(0.0)], jvp=lambda m, ts, y, a, b: ts[0])


# tuple results, the second part discrete: `m, e = frexp(x)` (x = m * 2**e), `frac, whole = modf(x)`,
# `q, r = divmod(a, b)` (the quotient first; r = a - b q)
def _pair(name: str, first: str | None, second: str | None) -> KindRule:
    return lambda types, consts: Tup((broadcast(name, types, first), broadcast(name, types, second)))


def _divmod_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    return [call(numpy_runtime.divmod_ct_a, d, a), call(numpy_runtime.divmod_ct_b, d, y, b)]


def _part(m: ModuleType, t: Term | None, y: Term) -> Term:
    """Component y's tangent t in a tuple result, which the transformation leaves as the rule gives it: zeros where
    none flows in; on arrays (m is NumPy), of y's shape and a new array (`broadcast_like`), as it makes other
    results."""
    if m is math:
        return term(0.0) if t is None else t
    return apply(ZEROS, y) if t is None else apply(BROADCAST_LIKE, t, y)


def _frexp_jvp(m: ModuleType, ts: list, y: Term, x: Term) -> Term:
    return tuple_of(apply(m.ldexp, ts[0], -y[1]), None)  # dm = dx 2**-e


def _modf_jvp(m: ModuleType, ts: list, y: Term, x: Term) -> Term:
    return tuple_of(_part(m, ts[0], y[0]), _part(m, None, y[1]))


def _divmod_jvp(m: ModuleType, ts: list, y: Term, a: Term, b: Term) -> Term:
    return tuple_of(_part(m, None, y[0]), _part(m, total([ts[0], ts[1] and -(ts[1] * y[0])]), y[1]))  # dr = da - q db


for _python, _numpy, _kinds, _vjp, _jvp, _domain in (
    (math.frexp, np.frexp, ("f", "i"), lambda d, y, x: [call(numpy_runtime.frexp_ct, d, y)], _frexp_jvp, (REALS,)),
    (math.modf, np.modf, ("f", "f"), lambda d, y, x: [call(numpy_runtime.modf_ct, d)], _modf_jvp, (REALS,)),
    (builtins.divmod, np.divmod, (None, None), _divmod_vjp, _divmod_jvp, (REALS, NONZERO)),
):
    _arity = len(_domain)
    PRIMITIVES[_python] = function(
        _python,
        _vjp,
        (_arity, _arity),
        kind=_pair(f"{_python.__module__}.{_python.__name__}".removeprefix("builtins."), *_kinds),
        samples=(_domain,),
        jvp=functools.partial(_jvp, math),
    )
    PRIMITIVES[_numpy] = numpy_function(
        _numpy,
        _vjp,
        ("x",) if _arity == 1 else ("x1", "x2"),
        kind=_pair(f"np.{_numpy.__name__}", *_kinds),
        samples=(_domain, tuple(r.of(*(2, 3)[k:]) for k, r in enumerate(_domain))),  # (2, 3) with (3,)
        jvp=functools.partial(_jvp, np),
    )


# digamma and its derivatives, psi^(n) (`runtime.polygamma`): the tangent code of `math.gamma` and `math.lgamma`
# calls them, and tangent code of any order theirs (n is a number these rules write)
def _polygamma_jvp(ts: list, y: Term, n: Term, x: Term) -> Term:
    return ts[1] * apply(runtime.polygamma, n.constant + 1, x)


SPELLINGS[runtime.digamma] = function(
    runtime.digamma,
    lambda d, y, x: [d * call(runtime.polygamma, 1, x)],
    jvp=lambda ts, y, x: ts[0] * apply(runtime.polygamma, 1, x),
)
SPELLINGS[runtime.polygamma] = function(
    runtime.polygamma,
    lambda d, y, n, x: [None, d * call(runtime.polygamma, literal_number(n) + 1, x)],
    (2, 2),
    jvp=_polygamma_jvp,
)
