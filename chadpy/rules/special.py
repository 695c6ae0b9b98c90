"""Rules for `scipy.special`, registered only when SciPy imports (`rules/__init__.py`): the ufuncs
(elementwise, broadcasting, like NumPy's; the inverses `erfinv`, `erfcinv`, `ndtri` differentiated
through their results) and `logsumexp`, `softmax`, `log_softmax`. A ufunc's partial derivatives give both
its VJP and its tangent rule (`_ufunc`). The runtime halves of the last three's VJPs are in
`runtime/special.py`; their tangent rules are written with primitives."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import scipy.special as sc

from ..ir import nodes as ir
from ..ir.types import VType, arr
from ..runtime import special as runtime
from ..target.expressions import Expr, call
from .kinds import as_array, elementwise, reduction
from .registry import POSITIVE, PRIMITIVES, REALS, Reals, literal_number, numpy_function, sampled, ufunc
from .tangents import STRONG_ZERO, Term, apply, total

_SQRT_PI_2 = 2.0 / math.sqrt(math.pi)
_SQRT_PI_HALF = math.sqrt(math.pi) / 2.0
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_UNIT = Reals(0.1, 0.9)  # logit's domain
_M = REALS.of(2, 3)


def _ufunc(
    fn: np.ufunc, partials: Callable, nargs: int = 1, domain: Reals | tuple[Reals, ...] = REALS, strong: bool = False
) -> None:
    """Register a SciPy ufunc by its partial derivatives, `partials(c, y, *xs)`, one per argument, written with
    `c(f, *args)` for a call of f: with `call`, target expressions, times the cotangent, for the VJP; with `apply`
    (`_term_call`), terms, times the tangents, for the JVP (tangent code is made of primitives: it is differentiated
    again). `strong`: a partial can be infinite (a pole), and a zero tangent must still give exactly 0, not
    0 * inf = NaN (`STRONG_ZERO`)."""
    p = ufunc(fn, lambda d, y, *xs: [d * g for g in partials(call, y, *xs)], nargs)
    p.name = "scipy.special." + fn.__name__
    p.kind = elementwise(p.name, "f")
    p.samples = sampled(domain, nargs)
    p.jvp = functools.partial(_ufunc_jvp, partials, strong)
    PRIMITIVES[fn] = p


def _ufunc_jvp(partials: Callable, strong: bool, ts: list, y: Term, *xs: Term) -> Term | None:
    parts = zip(ts, partials(_term_call, y, *xs))
    return total([t * g if not strong else apply(STRONG_ZERO, t, t * g) for t, g in parts if t is not None])


def _term_call(f: Callable, *args: object) -> Term:
    """`apply`, where polygamma is a primitive of chadpy's own (`_POLYGAMMA`): tangent code calls it, not user code
    (docs/language.md does not list it)."""
    return apply(_POLYGAMMA if f is sc.polygamma else f, *args)


def _beta_parts(c: Callable, a: Expr | Term, b: Expr | Term, times: Expr | Term | None = None) -> list:
    both = c(sc.digamma, a + b)
    parts = [c(sc.digamma, a) - both, c(sc.digamma, b) - both]
    return parts if times is None else [times * g for g in parts]


def _polygamma_jvp(ts: list, y: Term, n: Term, x: Term) -> Term:
    return ts[1] * apply(_POLYGAMMA, n.constant + 1, x)


# psi^(n) (n >= 1, a number these rules write), digamma's derivatives
_POLYGAMMA = numpy_function(
    sc.polygamma,
    lambda d, y, n, x: [None, d * call(sc.polygamma, literal_number(n) + 1, x)],
    ("n", "x"),
    kind=elementwise("scipy.special.polygamma", "f"),
    elementwise=True,
    jvp=_polygamma_jvp,
)
_POLYGAMMA.name = "scipy.special.polygamma"

_ufunc(sc.expit, lambda c, y, x: [y * (1.0 - y)])
_ufunc(sc.logit, lambda c, y, x: [1.0 / (x * (1.0 - x))], domain=_UNIT, strong=True)
_ufunc(sc.erf, lambda c, y, x: [_SQRT_PI_2 * c(np.exp, -(x * x))])
_ufunc(sc.erfc, lambda c, y, x: [-_SQRT_PI_2 * c(np.exp, -(x * x))])
_ufunc(sc.gammaln, lambda c, y, x: [c(sc.digamma, x)], domain=POSITIVE, strong=True)
_ufunc(sc.digamma, lambda c, y, x: [c(sc.polygamma, 1, x)], domain=POSITIVE, strong=True)
_ufunc(sc.gamma, lambda c, y, x: [y * c(sc.digamma, x)], domain=POSITIVE, strong=True)
_ufunc(sc.beta, lambda c, y, a, b: _beta_parts(c, a, b, y), 2, POSITIVE, strong=True)
_ufunc(sc.betaln, lambda c, y, a, b: _beta_parts(c, a, b), 2, POSITIVE, strong=True)
_ufunc(sc.xlogy, lambda c, y, x, z: [c(np.log, z), x / z], 2, (REALS, POSITIVE), strong=True)
_ufunc(sc.xlog1py, lambda c, y, x, z: [c(np.log1p, z), x / (1.0 + z)], 2, (REALS, POSITIVE), strong=True)
_ufunc(sc.erfinv, lambda c, y, x: [_SQRT_PI_HALF * c(np.exp, y * y)], strong=True)
_ufunc(sc.erfcinv, lambda c, y, x: [-_SQRT_PI_HALF * c(np.exp, y * y)], domain=Reals(0.1, 1.9), strong=True)
_ufunc(sc.ndtr, lambda c, y, x: [c(np.exp, -0.5 * (x * x)) / _SQRT_2PI], domain=Reals(-3.0, 3.0))
# φ(x) / Φ(x) as exp(-x^2 / 2 - log Φ(x)): no 0 / 0 far in the left tail
_ufunc(sc.log_ndtr, lambda c, y, x: [c(np.exp, -0.5 * (x * x) - y) / _SQRT_2PI], domain=Reals(-8.0, 3.0))
_ufunc(sc.ndtri, lambda c, y, x: [_SQRT_2PI * c(np.exp, 0.5 * (y * y))], domain=_UNIT, strong=True)


def _logsumexp_kind(types: list[VType], consts: list[object]) -> VType:
    return reduction("f")([types[0]], [consts[0], consts[1], consts[3]])


def _same_floats(types: list[VType], consts: list[object]) -> VType:
    return arr(as_array(types[0]).rank, "f", True)


def _kept(y: Term, axis: Term, keepdims: Term) -> Term:
    """A reduction's result y with its reduced axes kept (of length 1), to broadcast against its argument."""
    return y if keepdims.atom == ir.Const(True) or axis.atom == ir.Const(None) else apply(np.expand_dims, y, axis)


def _logsumexp_jvp(ts: list, y: Term, a: Term, axis: Term, b: Term, keepdims: Term) -> Term | None:
    """d log sum b e^a = sum e^(a - y) (b da + db) over the axes."""
    inner = total([ts[0] if ts[0] is None or b.atom == ir.Const(None) else ts[0] * b, ts[2]])
    return inner and apply(np.sum, apply(np.exp, a - _kept(y, axis, keepdims)) * inner, axis, keepdims)


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
            jvp=_logsumexp_jvp,
            samples=((_M, None, None, False), (_M, 1, POSITIVE.of(2, 3), True), (_M, 0, POSITIVE.of(3), False)),
        ),
        sc.softmax: numpy_function(
            sc.softmax,
            lambda d, y, x, axis: [call(runtime.softmax_ct, d, y, axis), None],
            ("x", "axis"),
            (None,),
            kind=_same_floats,
            jvp=lambda ts, y, x, axis: y * (ts[0] - apply(np.sum, ts[0] * y, axis, True)),
            samples=((_M, None), (_M, 1)),
        ),
        sc.log_softmax: numpy_function(
            sc.log_softmax,
            lambda d, y, x, axis: [call(runtime.log_softmax_ct, d, y, axis), None],
            ("x", "axis"),
            (None,),
            kind=_same_floats,
            jvp=lambda ts, y, x, axis: ts[0] - apply(np.sum, apply(np.exp, y) * ts[0], axis, True),
            samples=((_M, None), (_M, 0)),
        ),
    }
)
for _fn in (sc.logsumexp, sc.softmax, sc.log_softmax):
    PRIMITIVES[_fn].name = "scipy.special." + _fn.__name__
