"""Tangent rules of the special functions and distributions (`rules/pointwise.py`, `rules/special.py`,
`rules/stats.py`) where the registry walk (tests/rules/test_rules.py) cannot reach: the primitives only tangent code
calls (digamma and polygamma, to any order; `on_simplex`), `frexp`'s pair with its integer exponent, tuple results
updated in place, strong zeros at poles, the methods of frozen distributions made outside, and second derivatives
through the tangent code (forward over forward, reverse over forward)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_close, inner

try:
    import scipy.special
    import scipy.stats
except ImportError:  # SciPy is optional: its rules register only when it imports
    scipy = None

needs_scipy = pytest.mark.skipif(scipy is None, reason="SciPy is not installed")

_EULER = 0.5772156649015329
_ZETA3 = 1.2020569031595942


def derivative(f, order: int):
    """The order-th derivative of a function of one number, forward over forward (chad.jvp inside chad.jvp)."""
    for _ in range(order):
        f = _tangent_of(f)
    return f


def _tangent_of(f):
    def df(x):
        return chad.jvp(f, (x,), (1.0,))[1]

    return df


def lgamma(x):
    return math.lgamma(x)


def gamma(x):
    return math.gamma(x)


@pytest.mark.parametrize(
    ("order", "expected"),
    [(1, -_EULER), (2, math.pi**2 / 6), (3, -2 * _ZETA3), (4, math.pi**4 / 15)],
)
def test_lgamma_has_derivatives_of_any_order(order, expected):
    """lgamma's tangent calls digamma, whose tangent calls polygamma(1), whose tangent polygamma(2), ...: at 1 they
    are -Euler's constant, zeta(2), -2 zeta(3), 6 zeta(4)."""
    assert derivative(lgamma, order)(1.0) == pytest.approx(expected, rel=1e-13)


def test_gamma_second_derivatives():
    assert derivative(gamma, 2)(1.0) == pytest.approx(_EULER**2 + math.pi**2 / 6, rel=1e-13)
    assert chad.hvp(lgamma, (1.0,), (2.0,)) == pytest.approx(2.0 * math.pi**2 / 6, rel=1e-13)


def test_polygamma_below_zero():
    """Between the poles below 0: lgamma''(x) = psi'(x), and psi'(x) + psi'(1 - x) = pi^2 / sin^2(pi x)."""
    x = -1.3
    second = derivative(lgamma, 2)
    assert second(x) + second(1.0 - x) == pytest.approx(math.pi**2 / math.sin(math.pi * x) ** 2, rel=1e-12)


# ---------------------------------------------------------------- tuple results


def frexp_parts(x):
    m, e = math.frexp(x)
    return m * e


def np_frexp_parts(x):
    m, e = np.frexp(x)
    return m * e


def modf_updated(x):
    """The fraction's tangent is a new array: updating the fraction in place leaves x's tangent as it was."""
    frac, whole = np.modf(x)
    frac *= 3.0
    return frac + whole + x


def divmod_updated(a, b):
    q, r = np.divmod(a, b)
    r *= 2.0
    return r + q + a


@pytest.mark.parametrize(
    ("f", "args"),
    [
        (frexp_parts, (0.7,)),
        (frexp_parts, (-5.3,)),
        (np_frexp_parts, (np.array([[0.3, -5.0, 9.0], [0.1, 1.4, 2.5]]),)),
        (modf_updated, (np.array([[0.3, -5.6, 9.2], [0.1, 1.4, 2.5]]),)),
        (divmod_updated, (np.array([[0.3, -5.6, 9.2], [0.1, 1.4, 2.5]]), np.array([0.7, -1.3, 2.0]))),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_tuple_results(f, args):
    _check(f, *args)


def test_frexp_tangent():
    """The mantissa's tangent is dx 2**-e; the exponent, an int, has none (the registry walk cannot compare the
    value: its int part is not a float)."""
    value, tangent = chad.jvp(math.frexp, (12.0,), (1.0,))
    assert value == (0.75, 4) and tangent == (1.0 / 16, None)
    x = np.array([0.3, -12.0])
    value, tangent = chad.jvp(lambda x: np.frexp(x)[0], (x,), (np.ones(2),))
    np.testing.assert_array_equal(tangent, np.ldexp(1.0, -np.frexp(x)[1]))


# ---------------------------------------------------------------- SciPy


def digamma(x):
    return scipy.special.digamma(x)


def gammaln(x):
    return scipy.special.gammaln(x)


def logit(x):
    return scipy.special.logit(x)


def ndtri(x):
    return scipy.special.ndtri(x)


@needs_scipy
@pytest.mark.parametrize("order", [1, 2, 3])
def test_scipy_digamma_has_derivatives_of_any_order(order):
    x = np.array([0.3, 1.0, 2.5])
    got = derivative(digamma, order)(x)
    np.testing.assert_allclose(got, scipy.special.polygamma(order, x), rtol=1e-13)
    np.testing.assert_allclose(derivative(gammaln, order)(x), scipy.special.polygamma(order - 1, x), rtol=1e-13)


@needs_scipy
@pytest.mark.parametrize(
    ("f", "x"),
    [(gammaln, np.array([0.0, -1.0, 1.0])), (logit, np.array([0.0, 1.0, 0.5])), (ndtri, np.array([0.0, 1.0, 0.5]))],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_zero_tangent_is_zero_at_a_pole(f, x):
    """Strong zeros: where the tangent is 0 so is the result's, even where the partial is infinite (not 0 * inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        _, tangent = chad.jvp(f, (x,), (np.array([0.0, 0.0, 1.0]),))
    assert tangent[0] == 0.0 and tangent[1] == 0.0 and np.isfinite(tangent[2])


def t_cdf(x, df):
    return scipy.stats.t.cdf(x, df)


@needs_scipy
def test_a_cdf_has_no_tangent_in_its_shape_parameters():
    with pytest.raises(chad.ChadTypeError, match="no derivative with respect to its argument 2"):
        chad.jvp(t_cdf, (0.3, 3.0), (1.0, 1.0))


# Frozen distributions made outside the differentiated function: data, whose methods take a derivative in x
if scipy is not None:
    NORM = scipy.stats.norm(0.3, 1.5)
    T = scipy.stats.t(4.0, loc=-0.2, scale=0.8)
    GAMMA = scipy.stats.gamma(2.5, scale=np.array([0.5, 1.0, 2.0]))
    BETA = scipy.stats.beta(2.0, 3.0)
    EXPON = scipy.stats.expon(0.1)
    MVN = scipy.stats.multivariate_normal(np.array([0.1, -0.2]), np.array([[2.0, 0.3], [0.3, 1.0]]))
    DIRICHLET = scipy.stats.dirichlet(np.array([1.5, 2.0, 0.8]))


def norm_methods(x):
    return NORM.logpdf(x) + NORM.pdf(x) + NORM.cdf(x) + NORM.logcdf(x)


def t_logpdf(x):
    return T.logpdf(x)


def gamma_cdf(x):
    return GAMMA.cdf(x)


def beta_pdf(x):
    return BETA.pdf(x)


def expon_logpdf(x):
    return EXPON.logpdf(x) * 2.0


def mvn_logpdf(x):
    return MVN.logpdf(x)


def mvn_pdf(x):
    return MVN.pdf(x)


def dirichlet_logpdf(x):
    return DIRICHLET.logpdf(x)


def dirichlet_pdf(x):
    return DIRICHLET.pdf(x)


@needs_scipy
@pytest.mark.parametrize(
    ("f", "x"),
    [
        (norm_methods, 0.7),
        (norm_methods, np.array([0.7, -0.4])),
        (t_logpdf, np.array([[0.7, -0.4], [1.5, 0.1]])),
        (gamma_cdf, np.array([1.3])),  # x broadcast against the parameters
        (beta_pdf, np.array([0.3, 0.6])),
        (expon_logpdf, np.array([1.0, 2.0])),
        (mvn_logpdf, np.array([0.3, 0.4])),
        (mvn_pdf, np.array([[0.3, 0.4], [-0.5, 0.2], [1.0, 0.0]])),
        (dirichlet_logpdf, np.array([0.2, 0.3])),
        (dirichlet_pdf, np.array([[0.2, 0.1], [0.3, 0.6]])),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_frozen_distributions_made_outside(f, x):
    _check(f, x)


def norm_made_inside(x, mu):
    return scipy.stats.norm(mu, 1.5).logpdf(x)


def t_made_inside(x, df):
    return scipy.stats.t(df, loc=0.2).pdf(x) + scipy.stats.t(3.0, scale=df).cdf(x)


@needs_scipy
@pytest.mark.parametrize(
    ("f", "args"),
    [(norm_made_inside, (np.array([0.7, -0.4]), 0.2)), (t_made_inside, (0.7, 3.0))],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_frozen_distributions_made_inside(f, args):
    """A record of its parameters: its methods are the family's rules, the parameters differentiated too."""
    _check(f, *args)


@needs_scipy
def test_second_derivatives_through_a_frozen_distribution_made_outside_are_an_error():
    with pytest.raises(chad.UnknownFunction, match="no derivative rule for `the tangent of .logpdf`"):
        chad.hvp(t_logpdf, (np.array([0.7, -0.4]),), (np.ones(2),))


# ---------------------------------------------------------------- second derivatives through the tangent code


def norm_all(p):
    return scipy.stats.norm.logpdf(p[0], p[1], p[2]) + scipy.stats.norm.cdf(p[0], p[1], p[2])


def t_all(p):
    return scipy.stats.t.logpdf(p[0], p[1], p[2], p[3]) + scipy.stats.t.logcdf(p[0], 3.0, p[2], p[3])


def beta_all(p):
    return scipy.stats.beta.pdf(p[0], p[1], p[2]) + scipy.stats.beta.logcdf(p[0], 2.0, 2.5)


def expon_all(p):
    return np.sum(scipy.stats.expon.logpdf(np.array([1.0, 2.0]), p[0], p[1])) + scipy.stats.expon.cdf(1.3, p[0], p[1])


def mvn_all(p):
    cov = np.array([[p[0], p[1]], [p[1], p[2]]])
    return scipy.stats.multivariate_normal.logpdf(np.array([[0.1, 0.2], [0.4, -0.3]]), p[3:], cov)[1]


def dirichlet_all(p):
    return scipy.stats.dirichlet.pdf(p[:2], p[2:]) + scipy.stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), p[2:])


def counts(p):
    return scipy.stats.poisson.logpmf(2, p[0]) + scipy.stats.binom.logpmf(2, 5, p[1])


def special_all(p):
    a, b = p[0], p[1]
    return (
        scipy.special.beta(a, b)
        + scipy.special.betaln(b, a)
        + scipy.special.xlogy(a, b)
        + scipy.special.xlog1py(b, a)
        + scipy.special.gamma(a)
        + scipy.special.erfinv(b - 0.5)
        + scipy.special.erfcinv(a - 0.5)
        + scipy.special.ndtri(b - 0.5)
        + scipy.special.log_ndtr(a)
        + scipy.special.expit(b)
        + scipy.special.logit(b - 0.5)
    )


def reductions(p):
    a = np.reshape(p, (2, 2))
    return (
        scipy.special.logsumexp(a, axis=1, b=a * a)[0]
        + np.sum(scipy.special.softmax(a, axis=0) * np.array([[1.0, 2.0], [3.0, 0.5]]))
        + np.sum(scipy.special.log_softmax(a) ** 2)
    )


@needs_scipy
@pytest.mark.parametrize(
    ("f", "x"),
    [
        (norm_all, [0.3, 0.1, 1.2]),
        (t_all, [0.3, 3.0, 0.1, 1.2]),
        (beta_all, [0.3, 2.0, 2.5]),
        (expon_all, [0.1, 1.2]),
        (mvn_all, [2.0, 0.3, 1.0, 0.1, -0.2]),
        (dirichlet_all, [0.2, 0.3, 1.5, 2.0, 0.8]),
        (counts, [1.3, 0.3]),
        (special_all, [1.3, 0.7]),
        (reductions, [0.3, -1.2, 0.8, 2.0]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_hessian_vector_products_through_the_tangent_code(f, x):
    """Reverse over forward: the tangent code is made of primitives, differentiated again."""
    x = np.array(x)
    v = np.random.default_rng(3).standard_normal(x.shape)
    eps = 1e-6
    expected = (chad.grad(f)(x + eps * v) - chad.grad(f)(x - eps * v)) / (2 * eps)
    assert_close(chad.hvp(f, (x,), (v,)), expected, 1e-5, 1e-6, f.__name__)


# ---------------------------------------------------------------- the check


def _check(f, *args: object) -> None:
    """chad.jvp along a random direction against central differences, and <jvp(v), w> = <v, vjp(w)>."""
    rng = np.random.default_rng(1)
    tangents = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal()) for a in args)
    value, tangent = chad.jvp(f, args, tangents)
    assert_close(value, f(*args), 1e-12, 1e-12, f"{f.__name__}: the value")
    eps = 1e-6
    plus, minus = f(*[a + eps * t for a, t in zip(args, tangents)]), f(*[a - eps * t for a, t in zip(args, tangents)])
    assert_close(tangent, (np.asarray(plus) - np.asarray(minus)) / (2 * eps), 1e-5, 1e-6, f.__name__)
    w = rng.standard_normal(np.shape(value)) if np.ndim(value) else float(rng.standard_normal())
    _, pullback = chad.vjp(f, *args)
    cts = pullback(w)
    cts = cts if isinstance(cts, tuple) else (cts,)
    lhs, rhs = inner(tangent, w), sum(inner(t, ct) for t, ct in zip(tangents, cts))
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs)), f"{f.__name__}: <jvp(v), w> = {lhs} but <v, vjp(w)> = {rhs}"
