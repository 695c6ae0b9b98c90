"""The run-time halves of the SciPy rules (`rules/special.py`, `rules/stats.py`); imported only when
SciPy is.

A distribution's partial derivatives are written once per family, on the standardised variable
`z = (x - loc) / scale`: `d log f / dz` and those of its shape parameters; `location_scale` turns them
into the partials of `x`, `loc` and `scale`. `pdf` and `cdf` are `exp` of `logpdf` and `logcdf`: their
partials are the result times those of the logarithm. The partials of a `cdf` with respect to a shape
parameter (`t`'s `df`, `gamma`'s `a`, `beta`'s `a` and `b`) have no closed form: their rules take none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sc
import scipy.stats as st

from ..errors import ChadError
from .array_cotangents import ndarray_of, unbroadcast
from .arrays import python_scalar
from .linalg import _lower_read
from .numpy import _expand, linear


def _summed_to(g: Any, x: Any) -> Any:
    g = unbroadcast(np.asarray(g), x)
    return g if isinstance(x, np.ndarray) else python_scalar(g)


# ====================================================================== scipy.special


@linear
def logsumexp_ct(d: Any, y: Any, a: Any, axis: Any, b: Any, keepdims: bool, which: int) -> Any:
    """Cotangent of `a` (which=0) or `b` (which=2) in `y = logsumexp(a, axis, b, keepdims)`:
    d exp(a - y) times b (for a) or alone (for b)."""
    nd = np.ndim(a) if b is None else np.broadcast(a, b).ndim
    ye, de = _expand(y, nd, axis, keepdims), _expand(ndarray_of(d), nd, axis, keepdims)
    w = de * np.exp(np.asarray(a) - ye)
    return _summed_to(w if which == 2 or b is None else w * b, (a, None, b)[which])


@linear
def softmax_ct(d: Any, y: Any, axis: Any) -> Any:
    """Cotangent of `x` in `y = softmax(x, axis)`: y (d - sum(d y))."""
    d = ndarray_of(d)
    return y * (d - np.sum(d * y, axis=axis, keepdims=True))


@linear
def log_softmax_ct(d: Any, y: Any, axis: Any) -> Any:
    """Cotangent of `x` in `y = log_softmax(x, axis)`: d - exp(y) sum(d)."""
    d = ndarray_of(d)
    return d - np.exp(y) * np.sum(d, axis=axis, keepdims=True)


# ====================================================================== scipy.stats: the families


def _norm(z: Any, log_of: str) -> tuple[Any, list]:
    if log_of == "pdf":
        return -z, []
    return np.exp(st.norm.logpdf(z) - st.norm.logcdf(z)), []


def _t(z: Any, df: Any, log_of: str) -> tuple[Any, list]:
    if log_of == "pdf":
        r = z * z + df
        ddf = 0.5 * (sc.digamma(0.5 * (df + 1.0)) - sc.digamma(0.5 * df) - 1.0 / df - np.log1p(z * z / df))
        return -(df + 1.0) * z / r, [ddf + 0.5 * (df + 1.0) * z * z / (df * r)]
    return np.exp(st.t.logpdf(z, df) - st.t.logcdf(z, df)), [None]


def _gamma(z: Any, a: Any, log_of: str) -> tuple[Any, list]:
    if log_of == "pdf":
        return (a - 1.0) / z - 1.0, [np.log(z) - sc.digamma(a)]
    return np.exp(st.gamma.logpdf(z, a) - st.gamma.logcdf(z, a)), [None]


def _beta(z: Any, a: Any, b: Any, log_of: str) -> tuple[Any, list]:
    if log_of == "pdf":
        both = sc.digamma(a + b)
        return (a - 1.0) / z - (b - 1.0) / (1.0 - z), [
            np.log(z) - sc.digamma(a) + both,
            np.log1p(-z) - sc.digamma(b) + both,
        ]
    return np.exp(st.beta.logpdf(z, a, b) - st.beta.logcdf(z, a, b)), [None, None]


def _expon(z: Any, log_of: str) -> tuple[Any, list]:
    if log_of == "pdf":
        return -np.ones_like(z), []
    return 1.0 / np.expm1(z), []


FAMILIES: dict[str, tuple[Callable[..., tuple[Any, list]], int]] = {
    # name: (d log f / dz and the shape parameters' partials, the number of shape parameters)
    "norm": (_norm, 0),
    "t": (_t, 1),
    "gamma": (_gamma, 1),
    "beta": (_beta, 2),
    "expon": (_expon, 0),
}


def location_scale(family: str, log_of: str, x: Any, *params: Any) -> list[Any]:
    """The partials of log pdf (log_of="pdf") or log cdf of a location-scale family at x with
    (*shapes, loc, scale): [x, *shapes, loc, scale] (None where there is none)."""
    partials, n = FAMILIES[family]
    shapes, (loc, scale) = params[:n], params[n:]
    z = (np.asarray(x, dtype=float) - loc) / scale
    gz, gshapes = partials(z, *shapes, log_of)
    gscale = -(gz * z + (1.0 if log_of == "pdf" else 0.0)) / scale
    return [gz / scale, *gshapes, -gz / scale, gscale]


@linear
def stats_ct(d: Any, y: Any, family: str, method: str, which: int, *args: Any) -> Any:
    """Cotangent of argument `which` of `scipy.stats.<family>.<method>(*args)` (`y` its result)."""
    log_of = "pdf" if "pdf" in method else "cdf"
    g = location_scale(family, log_of, *args)[which]
    scale = y if method in ("pdf", "cdf") else 1.0
    return _summed_to(ndarray_of(d) * scale * g, args[which])


@linear
def poisson_ct(d: Any, k: Any, mu: Any) -> Any:
    """Cotangent of `mu` in `scipy.stats.poisson.logpmf(k, mu)`: k / mu - 1."""
    return _summed_to(ndarray_of(d) * (np.asarray(k) / mu - 1.0), mu)


@linear
def binom_ct(d: Any, k: Any, n: Any, p: Any) -> Any:
    """Cotangent of `p` in `scipy.stats.binom.logpmf(k, n, p)`: k / p - (n - k) / (1 - p)."""
    k = np.asarray(k)
    return _summed_to(ndarray_of(d) * (k / p - (n - k) / (1.0 - np.asarray(p))), p)


@linear
def mvn_ct(d: Any, y: Any, method: str, which: int, x: Any, mean: Any, cov: Any) -> Any:
    """Cotangent of x (which=0), mean (1) or cov (2) in `scipy.stats.multivariate_normal.logpdf(x, mean, cov)`
    (or `.pdf`): with r = x - mean and S^-1 r = u, -u for x, u for mean, (u u.T - S^-1) / 2 for cov
    (which SciPy reads by its lower triangle), each weighted by d (times the pdf for `.pdf`)."""
    cov = np.asarray(cov, dtype=float)
    if cov.ndim != 2:
        raise ChadError("the derivative of `multivariate_normal` needs `cov` as a matrix")
    xa = np.asarray(x, dtype=float)
    k = cov.shape[0]
    r = xa.reshape(-1, k) - (0.0 if mean is None else np.asarray(mean))
    w = np.broadcast_to(np.asarray(ndarray_of(d) * (y if method == "pdf" else 1.0)).reshape(-1), r.shape[:1])
    u = np.linalg.solve(cov, r.T).T  # one row per point
    if which == 0:
        return _summed_to((-u * w[:, None]).reshape(xa.shape), x)
    if which == 1:
        return _summed_to(np.sum(u * w[:, None], axis=0), mean)
    g = 0.5 * ((u * w[:, None]).T @ u - np.sum(w) * np.linalg.inv(cov))
    return _lower_read(g)


@linear
def dirichlet_ct(d: Any, y: Any, method: str, which: int, x: Any, alpha: Any) -> Any:
    """Cotangent of x (which=0) or alpha (1) in `scipy.stats.dirichlet.logpdf(x, alpha)` (or `.pdf`), where
    log f = sum_i (alpha_i - 1) log x_i - log B(alpha) over the components (x's first axis; without the last
    one, it is 1 minus the others' sum). x_i gets (alpha_i - 1) / x_i (0 where alpha_i is 1: SciPy's xlogy),
    and a left-out last component's goes to each of the others, negated; alpha_i gets log x_i -
    digamma(alpha_i) + digamma(sum alpha), summed over the points. Each is weighted by d (times the pdf for
    `.pdf`). The value is defined on the simplex only: x's is the gradient of the formula, exact along it."""
    alpha = np.asarray(alpha, dtype=float)
    xa = np.asarray(x, dtype=float)
    k = alpha.shape[0]
    full = xa if xa.shape[0] == k else np.concatenate([xa, 1.0 - np.sum(xa, axis=0, keepdims=True)])
    w = np.broadcast_to(ndarray_of(d) * (y if method == "pdf" else 1.0), full.shape[1:])
    column = (slice(None),) + (None,) * (full.ndim - 1)  # alpha along the components' axis
    if which == 0:
        power = (alpha - 1.0)[column]
        g = np.where(power == 0.0, 0.0, power / np.where(power == 0.0, 1.0, full)) * w
        return _summed_to(g if xa.shape[0] == k else g[:-1] - g[-1:], x)
    g = (np.log(full) - sc.digamma(alpha)[column] + sc.digamma(np.sum(alpha))) * w
    return _summed_to(np.sum(g.reshape(k, -1), axis=1), alpha)


def on_simplex(x: Any, k: int, whole: float) -> Any:
    """x, a point of the k-simplex along its first axis (`dirichlet`'s), with its last component, `whole` minus the
    others' sum, where x leaves it out; `whole=0.0` completes a tangent."""
    x = np.asarray(x, dtype=float)
    return x if x.shape[0] == k else np.concatenate([x, whole - np.sum(x, axis=0, keepdims=True)])


@linear
def on_simplex_ct(d: Any, x: Any) -> Any:
    """Cotangent of x in `on_simplex(x, k, whole)`: d, less its completed last component's where there is one."""
    d = ndarray_of(d)
    return d if d.shape[0] == np.shape(x)[0] else d[:-1] - d[-1:]


# ====================================================================== frozen distributions

_MVN_FROZEN = type(st.multivariate_normal([0.0]))
_DIRICHLET_FROZEN = type(st.dirichlet([1.0, 1.0]))


def frozen_rule(obj: Any, method: str) -> Callable[[Any, Any, Any], Any]:
    """The cotangent of x in `obj.method(x)`, as a function of (d, y, x), for a frozen SciPy distribution obj
    (`scipy.stats.norm(0, 1)` made outside: its parameters are data) of a family with a rule; a ChadError for
    any other object."""
    family = getattr(getattr(obj, "dist", None), "name", None)
    if family in FAMILIES and method in ("logpdf", "pdf", "cdf", "logcdf") and hasattr(obj, "args"):
        shapes, loc, scale = obj.dist._parse_args(*obj.args, **obj.kwds)
        return lambda d, y, x: stats_ct(d, y, family, method, 0, x, *shapes, loc, scale)
    if isinstance(obj, _MVN_FROZEN) and method in ("logpdf", "pdf"):
        return lambda d, y, x: mvn_ct(d, y, method, 0, x, obj.mean, obj.cov)
    if isinstance(obj, _DIRICHLET_FROZEN) and method in ("logpdf", "pdf"):
        return lambda d, y, x: dirichlet_ct(d, y, method, 0, x, obj.alpha)
    raise ChadError(
        f"`.{method}(x)` of {type(obj).__name__}: chadpy has a derivative for it on a frozen SciPy distribution of "
        f"the families {' '.join(FAMILIES)} multivariate_normal dirichlet; here a derivative flows into x"
    )


def frozen_tangent(obj: Any, method: str, dx: Any, y: Any, x: Any) -> Any:
    """The tangent of `y = obj.method(x)` along dx (a distribution `frozen_rule` takes): each result element's
    gradient in its own point of x (the cotangent of ones, x spread to one point per element for an elementwise family)
    against dx there."""
    rule, ones = frozen_rule(obj, method), np.ones(np.shape(y))
    if isinstance(obj, _MVN_FROZEN):  # a point per k consecutive elements
        t = np.sum(np.reshape(rule(ones, y, x) * dx, (np.size(y), -1)), axis=1).reshape(np.shape(y))
    elif isinstance(obj, _DIRICHLET_FROZEN):  # a point per column
        t = np.sum(rule(ones, y, x) * dx, axis=0)
    else:
        t = rule(ones, y, np.broadcast_to(x, np.shape(y))) * dx
    return t if isinstance(y, np.ndarray) else python_scalar(t)
