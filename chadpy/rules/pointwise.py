"""Rules for pointwise functions: each formula once, registered for every flavour of its function.

A line names the flavours (`math.sin` on numbers, `np.sin` on arrays, which broadcasts),
the transposed derivative `(m, d, y, *xs) -> a cotangent per argument`, with what it
calls spelled through `m` (`m.cos(x)` is `math.cos(x)` or `np.cos(x)`), and, where the
reals in [-0.9, 0.9] will not do, the domain where the rule test samples the arguments.
Adding a NumPy ufunc with a standard derivative is one line here (the rule test
picks it up; the README's function list must name it). The arithmetic formulas are
shared with the operators and builtins of `scalar.py`.
"""

from __future__ import annotations

import math

import numpy as np

from ..expressions import Expr, IfExp, Lit
from ..primitives import NONZERO, POSITIVE, REALS, Reals, Spelling, pointwise, pow_base


def _log(m: Spelling, d: Expr, y: Expr, x: Expr, base: Expr | None = None) -> list[Expr]:
    if base is None:
        return [d / x]
    ln_base = m.log(base)
    return [d / (x * ln_base), -(d * y) / (base * ln_base)]


def _hypot(m: Spelling, d: Expr, y: Expr, *xs: Expr) -> list[Expr]:
    return [IfExp(y.compare("==", 0), Lit(0.0), d * x / y) for x in xs]


_SQRT_PI_2 = 2.0 / math.sqrt(math.pi)
_BASE = Reals(1.5, 3.0)  # a logarithm's base, away from 1

# arithmetic: the operators `+ - * / ** -x` and the builtins `abs`, `pow` (scalar.py) share these
ADD = pointwise(np.add, lambda m, d, y, a, b: [d, d])
SUB = pointwise(np.subtract, lambda m, d, y, a, b: [d, -d])
MUL = pointwise(np.multiply, lambda m, d, y, a, b: [d * b, d * a])
DIV = pointwise(np.divide, lambda m, d, y, a, b: [d / b, -(d * y) / b], (REALS, NONZERO))
NEG = pointwise(np.negative, lambda m, d, y, x: [-d])
POW = pointwise(
    (math.pow, np.power), lambda m, d, y, a, b: [pow_base(d, a, b, m.pow_base), m.pow_exponent(d, y, a)], POSITIVE
)
ABS = pointwise((math.fabs, np.abs), lambda m, d, y, x: [m.times_sign(d, x)], NONZERO)
pointwise(np.square, lambda m, d, y, x: [2.0 * d * x])
# one argument
pointwise((math.sin, np.sin), lambda m, d, y, x: [d * m.cos(x)])
pointwise((math.cos, np.cos), lambda m, d, y, x: [-(d * m.sin(x))])
pointwise((math.tan, np.tan), lambda m, d, y, x: [d * (1.0 + y * y)])
pointwise(math.asin, lambda m, d, y, x: [d / m.sqrt(1.0 - x * x)])
pointwise(math.acos, lambda m, d, y, x: [-d / m.sqrt(1.0 - x * x)])
pointwise(math.atan, lambda m, d, y, x: [d / (1.0 + x * x)])
pointwise((math.sinh, np.sinh), lambda m, d, y, x: [d * m.cosh(x)])
pointwise((math.cosh, np.cosh), lambda m, d, y, x: [d * m.sinh(x)])
pointwise((math.tanh, np.tanh), lambda m, d, y, x: [d * (1.0 - y * y)])
pointwise((math.exp, np.exp), lambda m, d, y, x: [d * y])
pointwise(math.expm1, lambda m, d, y, x: [d * (y + 1.0)])
pointwise((math.log, np.log), _log, (POSITIVE, _BASE))
pointwise(math.log1p, lambda m, d, y, x: [d / (1.0 + x)])
pointwise(math.log2, lambda m, d, y, x: [d / (x * math.log(2.0))], POSITIVE)
pointwise(math.log10, lambda m, d, y, x: [d / (x * math.log(10.0))], POSITIVE)
pointwise((math.sqrt, np.sqrt), lambda m, d, y, x: [d / (2.0 * y)], POSITIVE)
pointwise(math.erf, lambda m, d, y, x: [d * _SQRT_PI_2 * m.exp(-(x * x))])
# several arguments
pointwise(math.atan2, lambda m, d, y, a, b: [d * b / (a * a + b * b), -(d * a) / (a * a + b * b)])
pointwise(math.hypot, _hypot)
