"""Rules for `scipy.special`, registered only when SciPy imports (`rules/__init__.py`): the ufuncs
(elementwise, broadcasting, like NumPy's; the inverses `erfinv`, `erfcinv`, `ndtri` differentiated
through their results) and `logsumexp`, `softmax`, `log_softmax`. The runtime halves of the last
three are in `runtime/special.py`."""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ..ir.types import VType, arr
from ..runtime import special as runtime
from ..target.expressions import Expr, call
from .kinds import as_array, elementwise, reduction
from .registry import POSITIVE, PRIMITIVES, REALS, Reals, Vjp, numpy_function, sampled, ufunc

_SQRT_PI_2 = 2.0 / math.sqrt(math.pi)
_SQRT_PI_HALF = math.sqrt(math.pi) / 2.0
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_UNIT = Reals(0.1, 0.9)  # logit's domain
_M = REALS.of(2, 3)


def _ufunc(fn: np.ufunc, vjp: Vjp, nargs: int = 1, domain: Reals | tuple[Reals, ...] = REALS) -> None:
    p = ufunc(fn, vjp, nargs)
    p.name = "scipy.special." + fn.__name__
    p.kind = elementwise(p.name, "f")
    p.samples = sampled(domain, nargs)
    PRIMITIVES[fn] = p


def _log(x: Expr) -> Expr:
    return call(np.log, x)


def _beta_parts(d: Expr, y: Expr, a: Expr, b: Expr, times: Expr | None) -> list[Expr]:
    both = call(sc.digamma, a + b)
    scale = d if times is None else d * times
    return [scale * (call(sc.digamma, a) - both), scale * (call(sc.digamma, b) - both)]


_ufunc(sc.expit, lambda d, y, x: [d * y * (1.0 - y)])
_ufunc(sc.logit, lambda d, y, x: [d / (x * (1.0 - x))], domain=_UNIT)
_ufunc(sc.erf, lambda d, y, x: [d * _SQRT_PI_2 * call(np.exp, -(x * x))])
_ufunc(sc.erfc, lambda d, y, x: [-(d * _SQRT_PI_2 * call(np.exp, -(x * x)))])
_ufunc(sc.gammaln, lambda d, y, x: [d * call(sc.digamma, x)], domain=POSITIVE)
_ufunc(sc.digamma, lambda d, y, x: [d * call(sc.polygamma, 1, x)], domain=POSITIVE)
_ufunc(sc.gamma, lambda d, y, x: [d * y * call(sc.digamma, x)], domain=POSITIVE)
_ufunc(sc.beta, lambda d, y, a, b: _beta_parts(d, y, a, b, y), 2, POSITIVE)
_ufunc(sc.betaln, lambda d, y, a, b: _beta_parts(d, y, a, b, None), 2, POSITIVE)
_ufunc(sc.xlogy, lambda d, y, x, z: [d * _log(z), d * x / z], 2, (REALS, POSITIVE))
_ufunc(sc.erfinv, lambda d, y, x: [d * _SQRT_PI_HALF * call(np.exp, y * y)])
_ufunc(sc.erfcinv, lambda d, y, x: [-(d * _SQRT_PI_HALF * call(np.exp, y * y))], domain=Reals(0.1, 1.9))
_ufunc(sc.ndtr, lambda d, y, x: [d * call(np.exp, -0.5 * (x * x)) / _SQRT_2PI], domain=Reals(-3.0, 3.0))
# φ(x) / Φ(x) as exp(-x^2 / 2 - log Φ(x)): no 0 / 0 far in the left tail
_ufunc(sc.log_ndtr, lambda d, y, x: [d * call(np.exp, -0.5 * (x * x) - y) / _SQRT_2PI], domain=Reals(-8.0, 3.0))
_ufunc(sc.ndtri, lambda d, y, x: [d * _SQRT_2PI * call(np.exp, 0.5 * (y * y))], domain=_UNIT)
_ufunc(sc.xlog1py, lambda d, y, x, z: [d * call(np.log1p, z), d * x / (1.0 + z)], 2, (REALS, POSITIVE))


def _logsumexp_kind(types: list[VType], consts: list[object]) -> VType:
    return reduction("f")([types[0]], [consts[0], consts[1], consts[3]])


def _same_floats(types: list[VType], consts: list[object]) -> VType:
    return arr(as_array(types[0]).rank, "f", True)


def _logsumexp_vjp(d: Expr, y: Expr, a: Expr, axis: Expr, b: Expr, keepdims: Expr) -> list[Expr | None]:
    return [call(runtime.logsumexp_ct, d, y, a, axis, b, keepdims, k) if k != 1 else None for k in range(3)] + [None]


PRIMITIVES.update(
    {
        sc.logsumexp: numpy_function(
            sc.logsumexp,
            _logsumexp_vjp,
            ("a", "axis", "b", "keepdims"),
            (None, None, False),
            kind=_logsumexp_kind,
            samples=((_M, None, None, False), (_M, 1, POSITIVE.of(2, 3), True), (_M, 0, POSITIVE.of(3), False)),
        ),
        sc.softmax: numpy_function(
            sc.softmax,
            lambda d, y, x, axis: [call(runtime.softmax_ct, d, y, axis), None],
            ("x", "axis"),
            (None,),
            kind=_same_floats,
            samples=((_M, None), (_M, 1)),
        ),
        sc.log_softmax: numpy_function(
            sc.log_softmax,
            lambda d, y, x, axis: [call(runtime.log_softmax_ct, d, y, axis), None],
            ("x", "axis"),
            (None,),
            kind=_same_floats,
            samples=((_M, None), (_M, 0)),
        ),
    }
)
for _fn in (sc.logsumexp, sc.softmax, sc.log_softmax):
    PRIMITIVES[_fn].name = "scipy.special." + _fn.__name__
