"""Rules for `scipy.stats`, registered only when SciPy imports (`rules/__init__.py`): `logpdf`, `pdf`,
`cdf`, `logcdf` of the continuous families `norm t gamma beta expon`, `logpdf` and `pdf` of
`multivariate_normal` and `dirichlet`, `logpmf` of `poisson` and `binom`.

`scipy.stats.norm` is an object (an `rv_continuous`), and `scipy.stats.norm.logpdf` a bound method:
a new object at each access, but equal to the others (and of the same hash), so the registry keys
on it and `lookup` finds the one a call resolves to. The methods take `*args, **kwds`; a rule
binds a call by its own parameters (`params`: `x`, the shape parameters, `loc`, `scale`). The
runtime halves are in `runtime/special.py`.
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from ..ir.types import VType, arr, scalar
from ..runtime import special as special_runtime
from ..target.expressions import Expr, call
from .kinds import as_array, elementwise
from .registry import POSITIVE, PRIMITIVES, REALS, Primitive, Reals, keyword_call

_SCALE = Reals(0.5, 1.5)
_LOC = Reals(-0.5, 0.5)
# where the rule test samples (x, *shapes, loc, scale): inside each family's support
_DOMAINS = {
    "norm": (REALS.of(3), _LOC, _SCALE),
    "t": (REALS.of(3), Reals(2.0, 5.0), _LOC, _SCALE),
    "gamma": (Reals(1.0, 2.0).of(3), Reals(1.5, 3.0), _LOC, _SCALE),
    "beta": (Reals(0.3, 0.6).of(3), Reals(1.5, 3.0), Reals(1.5, 3.0), Reals(-0.1, 0.1), Reals(1.0, 1.2)),
    "expon": (Reals(1.0, 2.0).of(3), _LOC, _SCALE),
}
_SHAPES = {"norm": (), "t": ("df",), "gamma": ("a",), "beta": ("a", "b"), "expon": ()}


def _method(bound: object, name: str, params: tuple[str, ...], defaults: tuple[object, ...], vjp, kind, samples):
    """A primitive calling `bound` (a distribution's method) with `params` (no signature of its own: the
    registrar's binds the call)."""
    nargs = (len(params) - len(defaults), len(params))
    return Primitive(
        name,
        keyword_call(bound, params, defaults),
        vjp,
        nargs,
        kind,
        params=params,
        defaults=defaults,
        samples=samples,
    )


def _location_scale(family: str, method: str) -> Primitive:
    shapes = _SHAPES[family]
    params = ("x", *shapes, "loc", "scale")
    takes = [k for k in range(len(params)) if method in ("logpdf", "pdf") or params[k] not in shapes]

    def vjp(d: Expr, y: Expr, *args: Expr) -> list[Expr | None]:
        return [
            call(special_runtime.stats_ct, d, y, family, method, k, *args) if k in takes else None
            for k in range(len(args))
        ]

    name = f"scipy.stats.{family}.{method}"
    domain = _DOMAINS[family]
    if "cdf" in method:  # shape parameters without a derivative are constants (their midpoints)
        domain = (domain[0], *((r.lo + r.hi) / 2 for r in domain[1 : 1 + len(shapes)]), *domain[1 + len(shapes) :])
    samples = (domain, (*domain[: 1 + len(shapes)], 0.0, 1.0))
    return _method(getattr(getattr(st, family), method), name, params, (0.0, 1.0), vjp, elementwise(name, "f"), samples)


def _mvn_kind(types: list[VType], consts: list[object]) -> VType:
    rank = as_array(types[0]).rank
    return scalar("f", True) if rank == 1 else arr(None, "f", True)  # SciPy squeezes one point to a number


def _mvn(method: str) -> Primitive:
    def vjp(d: Expr, y: Expr, x: Expr, mean: Expr, cov: Expr) -> list[Expr | None]:
        return [call(special_runtime.mvn_ct, d, y, method, k, x, mean, cov) for k in range(3)]

    b = np.random.default_rng(15).uniform(-1.0, 1.0, (3, 3))
    spd = b @ b.T + np.eye(3)
    samples = ((REALS.of(3), REALS.of(3), spd), (REALS.of(4, 3), REALS.of(3), spd))
    bound = getattr(st.multivariate_normal, method)
    return _method(
        bound, f"scipy.stats.multivariate_normal.{method}", ("x", "mean", "cov"), (None, 1), vjp, _mvn_kind, samples
    )


def _dirichlet(method: str) -> Primitive:
    def vjp(d: Expr, y: Expr, x: Expr, alpha: Expr) -> list[Expr | None]:
        return [call(special_runtime.dirichlet_ct, d, y, method, k, x, alpha) for k in range(2)]

    # SciPy checks that x is on the simplex, so the rule test perturbs x without its last component (1 minus
    # the others' sum) and passes a whole x as a constant
    alpha = Reals(0.5, 3.0).of(3)
    samples = (
        (Reals(0.1, 0.3).of(2), alpha),
        (Reals(0.05, 0.2).of(2, 4), alpha),
        ((0.2, 0.3, 0.5), alpha),
        (((0.2, 0.1), (0.3, 0.6), (0.5, 0.3)), alpha),
    )
    bound = getattr(st.dirichlet, method)
    return _method(bound, f"scipy.stats.dirichlet.{method}", ("x", "alpha"), (), vjp, _mvn_kind, samples)


_DISCRETE_KIND = elementwise("scipy.stats logpmf", "f")

PRIMITIVES.update(
    {
        getattr(getattr(st, family), method): _location_scale(family, method)
        for family in _SHAPES
        for method in ("logpdf", "pdf", "cdf", "logcdf")
    }
)
PRIMITIVES.update(
    {
        st.multivariate_normal.logpdf: _mvn("logpdf"),
        st.multivariate_normal.pdf: _mvn("pdf"),
        st.dirichlet.logpdf: _dirichlet("logpdf"),
        st.dirichlet.pdf: _dirichlet("pdf"),
        st.poisson.logpmf: _method(
            st.poisson.logpmf,
            "scipy.stats.poisson.logpmf",
            ("k", "mu", "loc"),
            (0,),
            lambda d, y, k, mu, loc: [None, call(special_runtime.poisson_ct, d, k, mu), None],
            _DISCRETE_KIND,
            ((2, POSITIVE.of(3), 0),),
        ),
        st.binom.logpmf: _method(
            st.binom.logpmf,
            "scipy.stats.binom.logpmf",
            ("k", "n", "p", "loc"),
            (0,),
            lambda d, y, k, n, p, loc: [None, None, call(special_runtime.binom_ct, d, k, n, p), None],
            _DISCRETE_KIND,
            ((2, 5, Reals(0.2, 0.8).of(3), 0),),
        ),
    }
)
