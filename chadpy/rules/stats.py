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

The tangent rules (`jvp`) are written with primitives, the families' own among them (a cdf's tangent calls the
family's `logpdf` and `logcdf`), so tangent code is differentiated again. The methods of a frozen distribution made
outside find theirs when they run (`frozen_tangent`), which has no derivative of its own.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import numpy as np
import scipy.special as sc
import scipy.stats as st

from ..errors import ChadError, ChadTypeError
from ..ir import nodes as ir
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
from .tangents import ZEROS, Term, apply, total

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


def _method(
    bound: object,
    name: str,
    params: tuple[str, ...],
    defaults: tuple[object, ...],
    vjp,
    kind,
    samples,
    jvp: Callable | None = None,
):
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
        jvp=jvp,
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
    bound = getattr(getattr(st, family), method)
    jvp = functools.partial(_location_scale_jvp, family, method)
    return _method(bound, name, params, (0.0, 1.0), vjp, elementwise(name, "f"), samples, jvp)


def _location_scale_jvp(family: str, method: str, ts: list, y: Term, x: Term, *params: Term) -> Term | None:
    """d log f = g_z dz + sum_k g_k dshape_k (- dscale / scale for a density), dz = (dx - dloc - z dscale) / scale:
    f at x is the standard one at z = (x - loc) / scale (over scale for a density); a pdf's or a cdf's tangent is
    itself times that of its logarithm."""
    n = len(_SHAPES[family])
    shapes, (loc, scale), dshapes, (dloc, dscale) = params[:n], params[n:], ts[1 : 1 + n], ts[1 + n :]
    log_of = "pdf" if "pdf" in method else "cdf"
    taken = [k for k, t in enumerate(dshapes, 2) if t is not None]
    if log_of == "cdf" and taken:  # as reverse mode says (`chad/terms.py`)
        raise ChadTypeError(
            f"`scipy.stats.{family}.{method}` has no derivative with respect to its argument {taken[0]}"
        )
    z = _scaled(x if loc.constant == 0 else x - loc, scale)
    gz, gshapes = _log_partials(family, log_of, z, shapes)
    dz = total([ts[0], dloc and -dloc, dscale and -(z * dscale)])
    own = -_scaled(dscale, scale) if dscale is not None and log_of == "pdf" else None  # the density's 1 / scale
    dlog = total([dz and gz * _scaled(dz, scale), *(t and g * t for g, t in zip(gshapes, dshapes)), own])
    return dlog if dlog is None or method.startswith("log") else y * dlog


def _scaled(v: Term, scale: Term) -> Term:
    return v if scale.constant == 1 else v / scale


def _log_partials(family: str, log_of: str, z: Term, shapes: tuple[Term, ...]) -> tuple[Term, list[Term]]:
    """d log f / dz of the standard family at z and the shape parameters' partials (`runtime.special.FAMILIES`' in
    primitives); a cdf's d log F / dz is the density over the cdf, exp(log f - log F) (its shape parameters take
    none)."""
    dist = getattr(st, family)
    if log_of == "cdf":
        return apply(np.exp, apply(dist.logpdf, z, *shapes) - apply(dist.logcdf, z, *shapes)), []
    return _DENSITY_PARTIALS[family](z, *shapes)


def _t_partials(z: Term, df: Term) -> tuple[Term, list[Term]]:
    r = z * z + df
    half = 0.5 * (_psi(0.5 * (df + 1.0)) - _psi(0.5 * df) - 1.0 / df - apply(np.log1p, z * z / df))
    return -(df + 1.0) * z / r, [half + 0.5 * (df + 1.0) * z * z / (df * r)]


def _beta_partials(z: Term, a: Term, b: Term) -> tuple[Term, list[Term]]:
    both = _psi(a + b)
    gz = (a - 1.0) / z - (b - 1.0) / (1.0 - z)
    return gz, [apply(np.log, z) - _psi(a) + both, apply(np.log1p, -z) - _psi(b) + both]


def _psi(x: Term) -> Term:
    return apply(sc.digamma, x)


_DENSITY_PARTIALS = {
    "norm": lambda z: (-z, []),
    "t": _t_partials,
    "gamma": lambda z, a: ((a - 1.0) / z - 1.0, [apply(np.log, z) - _psi(a)]),
    "beta": _beta_partials,
    "expon": lambda z: (apply(ZEROS, z) - 1.0, []),  # -1 of z's shape: the result's
}


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
    name, jvp = f"scipy.stats.multivariate_normal.{method}", functools.partial(_mvn_jvp, method)
    return _method(bound, name, ("x", "mean", "cov"), (None, 1), vjp, _mvn_kind, samples, jvp)


def _mvn_jvp(method: str, ts: list, y: Term, x: Term, mean: Term, cov: Term) -> Term | None:
    """With r = x - mean (a row per point) and u = S^-1 r: d log f = -u . (dx - dmean) + (u . dS u - tr(S^-1 dS)) / 2,
    where dS is symmetric, made of dcov's lower triangle, which is what SciPy reads of cov."""
    if cov.constant is not None:
        raise ChadError("the derivative of `multivariate_normal` needs `cov` as a matrix")
    no_mean = mean.atom == ir.Const(None)
    u = _transposed(apply(np.linalg.solve, cov, _transposed(x if no_mean else x - mean)))
    dr = total([ts[0], ts[1] and -ts[1]])
    parts = [dr and -apply(np.sum, u * dr, -1)]
    if ts[2] is not None:
        ds = apply(np.tril, ts[2]) + _transposed(apply(np.tril, ts[2], -1))
        quadratic = apply(np.sum, (u @ ds) * u, -1) - apply(np.sum, apply(np.linalg.inv, cov) * ds)
        parts.append(0.5 * quadratic)
    dlog = total(parts)
    return dlog if dlog is None or method == "logpdf" else y * dlog


def _transposed(a: Term) -> Term:
    return apply(np.transpose, a)


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
    name, jvp = f"scipy.stats.dirichlet.{method}", functools.partial(_dirichlet_jvp, method)
    return _method(bound, name, ("x", "alpha"), (), vjp, _mvn_kind, samples, jvp)


def _dirichlet_jvp(method: str, ts: list, y: Term, x: Term, alpha: Term) -> Term | None:
    """log f = sum_i (alpha_i - 1) log x_i - log B(alpha) over the components (x's first axis, completed: `ON_SIMPLEX`):
    d log f = sum_i (alpha_i - 1) dx_i / x_i + dalpha_i (log x_i - digamma(alpha_i) + digamma(sum alpha))."""
    k = apply(len, alpha)
    full = apply(ON_SIMPLEX, x, k, 1.0)
    parts = [ts[0] and (alpha - 1.0) @ (apply(ON_SIMPLEX, ts[0], k, 0.0) / full)]
    if ts[1] is not None:
        dlog_beta = apply(sc.digamma, alpha) - apply(sc.digamma, apply(np.sum, alpha))
        parts.append(ts[1] @ apply(np.log, full) - ts[1] @ dlog_beta)
    dlog = total(parts)
    return dlog if dlog is None or method == "logpdf" else y * dlog


def _on_simplex_kind(types: list[VType], consts: list[object]) -> VType:
    return arr(as_array(types[0]).rank, "f", True)


# x, a point of the k-simplex along its first axis, with its last component `whole` - the others' sum where x leaves
# it out (as SciPy's dirichlet takes it); whole = 0 completes a tangent
ON_SIMPLEX = Primitive(
    "on_simplex",
    lambda x, k, whole: call(special_runtime.on_simplex, x, k, whole),
    lambda d, y, x, k, whole: [call(special_runtime.on_simplex_ct, d, x), None, None],
    (3, 3),
    _on_simplex_kind,
    aliases="argument",
    jvp=lambda ts, y, x, k, whole: ts[0] and apply(ON_SIMPLEX, ts[0], k, 0.0),
)


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
            jvp=lambda ts, y, k, mu, loc: ts[1] and ts[1] * (k / mu - 1.0),
        ),
        st.binom.logpmf: _method(
            st.binom.logpmf,
            "scipy.stats.binom.logpmf",
            ("k", "n", "p", "loc"),
            (0,),
            lambda d, y, k, n, p, loc: [None, None, call(special_runtime.binom_ct, d, k, n, p), None],
            _DISCRETE_KIND,
            ((2, 5, Reals(0.2, 0.8).of(3), 0),),
            jvp=lambda ts, y, k, n, p, loc: ts[2] and ts[2] * (k / p - (n - k) / (1.0 - p)),
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
    found when it runs (`frozen_rule`, an error for another object); its tangent too (`frozen_tangent`), which has
    no rule of its own: an error, not a zero, where a derivative flows into it (a second derivative)."""
    tangent = Primitive(
        f"the tangent of .{method}",
        lambda d, dx, y, x: call(special_runtime.frozen_tangent, d, method, dx, y, x),
        nargs=(4, 4),
        kind=lambda types, consts: types[2],
        data_only=True,
    )
    return Primitive(
        f".{method}",
        lambda d, x: CallX(Attr(d, method), [x]),
        lambda ct, y, d, x, saved: [None, CallX(saved, [ct, y, x])],
        (2, 2),
        lambda types, consts: scalar("f", True) if is_number(types[1]) else arr(None, "f", True),
        saves=lambda y, d, x: call(special_runtime.frozen_rule, d, method),
        jvp=lambda ts, y, d, x: ts[1] and apply(tangent, d, ts[1], y, x),
    )


DATA_METHODS.update({method: _frozen_method(method) for method in ("logpdf", "pdf", "cdf", "logcdf")})
