"""Rules for `scipy.stats`, registered only when SciPy imports (`rules/__init__.py`): `logpdf`, `pdf`,
`cdf`, `logcdf` of the continuous families `norm t gamma beta expon`, `logpdf` and `pdf` of
`multivariate_normal` and `dirichlet`, `logpmf` of `poisson` and `binom`.

A frozen distribution made in a differentiated function (`scipy.stats.norm(mu, 1.0)`) is a record of its
parameters (`runtime.records.FrozenDistribution`), so they are differentiated too; its methods are the rules
above (`objects.frozen_method`). One made outside (`self.dist = scipy.stats.norm(0, 1)` in an object given) is
data: its `logpdf`, `pdf`, `cdf`, `logcdf` take a derivative in x (`DATA_METHODS`), its parameters none.

`scipy.stats.norm` is an object (an `rv_continuous`), and `scipy.stats.norm.logpdf` a bound method:
a new object at each access, but equal to the others (and of the same hash), so the registry keys
on it and `lookup` finds the one a call resolves to. The methods take `*args, **kwds`; a rule
binds a call by its own parameters (`params`: `x`, the shape parameters, `loc`, `scale`). The
runtime halves are in `runtime/special.py`.
"""

from __future__ import annotations

import inspect

import numpy as np
import scipy.stats as st

from ..ir.types import VType, arr, is_number, scalar
from ..runtime import special as special_runtime
from ..runtime.records import FrozenDistribution, frozen_parameter, scipy_frozen
from ..target.expressions import Attr, CallX, Expr, call
from .kinds import as_array, elementwise
from .registry import (
    DATA_METHODS,
    DISTRIBUTIONS,
    POSITIVE,
    PRIMITIVES,
    REALS,
    Primitive,
    Reals,
    keyword_call,
    written_in_python,
)

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


def _frozen(family: str, params: tuple[str, ...], defaults: tuple[object, ...], sample: tuple) -> type:
    """The record class of the frozen distributions of `scipy.stats.<family>`, of these parameters (those its
    methods take after x; `sample`: values of them SciPy accepts). Its methods are SciPy's frozen one's,
    written in Python chadpy reads (`_frozen_methods`)."""
    dist = getattr(st, family)
    spec = {"dist": dist, "params": params, "defaults": defaults, "__module__": f"chadpy.frozen.{family}"}
    return type(
        f"{family}_frozen", (FrozenDistribution,), {**spec, **_frozen_methods(family, type(dist(*sample)), params)}
    )


def _frozen_methods(family: str, frozen: type, params: tuple[str, ...]) -> dict[str, object]:
    """The methods of the frozen distributions' record class, as Python functions with source (chadpy reads
    them; they also run as they are on one SciPy froze, where the code that made it ran as Python): those with a
    rule call it on x and the record's parameters (`def logpdf(self, x): return logpdf(x, parameter(self, 'loc',
    ...), ...)`), the others SciPy's frozen distribution's (`def rvs(self, size=...): return scipy_frozen(self).rvs(
    size, ...)`; data: an error where a derivative flows in)."""
    dist = getattr(st, family)
    namespace: dict[str, object] = {"parameter": frozen_parameter, "params": params, "scipy_frozen": scipy_frozen}
    lines: list[str] = []
    for name, method in inspect.getmembers(frozen, inspect.isfunction):
        taken = list(inspect.signature(method).parameters.values())[1:]
        if name.startswith("_") or name in params or any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in taken):
            continue
        namespace[f"{name}_defaults"] = [p.default for p in taken]
        head = [p.name if p.default is p.empty else f"{p.name}={name}_defaults[{k}]" for k, p in enumerate(taken)]
        rule = PRIMITIVES.get(getattr(dist, name, None))
        if rule is not None and rule.params[1:] == params and len(taken) == 1:
            namespace[f"{family}_{name}"] = getattr(dist, name)
            given = ", ".join(f"parameter(self, {p!r}, params)" for p in params)
            body = f"{family}_{name}({taken[0].name}, {given})"
        else:
            body = f"scipy_frozen(self).{name}({', '.join(p.name for p in taken)})"
        lines += [f"def {name}({', '.join(['self', *head])}):", f"    return {body}", "", ""]
    return written_in_python("\n".join(lines), f"frozen {family}", namespace)


_SAMPLES = {"t": (3.0,), "gamma": (2.0,), "beta": (2.0, 2.0)}  # shape parameters SciPy accepts
DISTRIBUTIONS.update(
    {
        getattr(st, family): _frozen(family, (*shapes, "loc", "scale"), (0.0, 1.0), _SAMPLES.get(family, ()))
        for family, shapes in _SHAPES.items()
    }
)
DISTRIBUTIONS.update(
    {
        st.multivariate_normal: _frozen("multivariate_normal", ("mean", "cov"), (None, 1), ([0.0],)),
        st.dirichlet: _frozen("dirichlet", ("alpha",), (), ([1.0, 1.0],)),
        st.poisson: _frozen("poisson", ("mu", "loc"), (0,), (1.0,)),
        st.binom: _frozen("binom", ("n", "p", "loc"), (0,), (2, 0.5)),
    }
)


def _frozen_method(method: str) -> Primitive:
    """`d.method(x)` of a frozen distribution that is data (made outside): x's derivative, the family's rule
    found when it runs (`frozen_rule`, an error for another object)."""
    return Primitive(
        f".{method}",
        lambda d, x: CallX(Attr(d, method), [x]),
        lambda ct, y, d, x, saved: [None, CallX(saved, [ct, y, x])],
        (2, 2),
        lambda types, consts: scalar("f", True) if is_number(types[1]) else arr(None, "f", True),
        saves=lambda y, d, x: call(special_runtime.frozen_rule, d, method),
    )


DATA_METHODS.update({method: _frozen_method(method) for method in ("logpdf", "pdf", "cdf", "logcdf")})
