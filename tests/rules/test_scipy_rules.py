"""SciPy functions in user code: calls through attribute paths (`scipy.stats.norm.logpdf`, `norm.logpdf`
after `from scipy.stats import norm`) resolve to their rules, never to SciPy's source. Each rule alone is
checked against finite differences by the registry walk (tests/test_rules.py), except where it cannot be:
`cho_solve`, whose first argument is a tuple, and `dirichlet`'s x, defined on the simplex only."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from chadpy.errors import ChadError
from tests.support.fd import assert_grad_matches_fd, rand_array

pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402
from scipy.linalg import cho_factor, cho_solve  # noqa: E402
from scipy.special import expit, logsumexp  # noqa: E402
from scipy.stats import norm  # noqa: E402


def model(w, x, mu, sigma):
    p = expit(x @ w)
    z = logsumexp(x * w, axis=1, keepdims=True)
    return (
        np.sum(scipy.stats.norm.logpdf(w, mu, sigma))
        + np.sum(norm.logcdf(x @ w, loc=mu))
        + np.sum(scipy.special.xlogy(p, p + 1.0))
        + np.sum(z)
        + np.sum(scipy.stats.t.logpdf(w, 3.0, scale=sigma))
    )


def test_scipy_calls_through_attribute_paths():
    args = (rand_array(1, (3,)), rand_array(2, (4, 3)), 0.3, 1.2)
    assert_grad_matches_fd(model, args, argnums=(0, 2, 3))


def t_cdf_in_df(df):
    return scipy.stats.t.cdf(0.5, df)


def test_a_parameter_without_a_derivative_is_a_clear_error():
    with pytest.raises(ChadError, match="no derivative with respect to its argument 2"):
        chad.grad(t_cdf_in_df)(3.0)


def mvn(x, mean, cov):
    return np.sum(scipy.stats.multivariate_normal.logpdf(x, mean, cov @ cov.T + np.eye(3)))


def test_multivariate_normal_through_a_covariance_factor():
    assert_grad_matches_fd(mvn, (rand_array(3, (5, 3)), rand_array(4, (3,)), rand_array(5, (3, 3))), argnums=(0, 1, 2))


# ====================================================================== scipy.linalg's Cholesky factor and solve


def factored_solve(m, b):
    """`cho_solve` of `cho_factor`'s tuple, upper (SciPy's default) and lower."""
    a = m @ m.T + np.eye(3)
    x = cho_solve(cho_factor(a), b)
    factor = cho_factor(a, lower=True)
    y = scipy.linalg.cho_solve(factor, b[:, 0])
    return np.sum(x**2) + np.sum(y * b[:, 1])


def solve_with_own_factor(m, b):
    """A tuple display `(L, True)`: cho_solve reads L's lower triangle only (its upper one is m's)."""
    a = m @ m.T + np.eye(3)
    lower = np.linalg.cholesky(a) + np.triu(m, 1)
    return np.sum(np.sin(cho_solve((lower, True), b)))


def test_cho_solve_in_the_factor_and_the_right_hand_side():
    m, b = rand_array(6, (3, 3)), rand_array(7, (3, 2))
    assert_grad_matches_fd(factored_solve, (m, b), argnums=(0, 1))
    assert_grad_matches_fd(solve_with_own_factor, (m, b), argnums=(0, 1))
    assert_grad_matches_fd(solve_with_own_factor, (m, b[:, 0]), argnums=(0, 1))


def cho_factor_garbage(m):
    """cho_factor's other triangle holds a's own entries: they pass through."""
    c, lower = cho_factor(m @ m.T + np.eye(3) + np.tril(m, -1))
    return np.sum(c * np.arange(9.0).reshape(3, 3))


def test_cho_factor_passes_the_other_triangle_through():
    assert_grad_matches_fd(cho_factor_garbage, (rand_array(8, (3, 3)),))


# ====================================================================== scipy.stats.dirichlet on the simplex


def dirichlet_on_simplex(z, alpha):
    """x = softmax(z) is on the simplex (SciPy checks): the derivative along it is exact whatever the rule
    gives across it."""
    x = scipy.special.softmax(z)
    return scipy.stats.dirichlet.logpdf(x, alpha) + scipy.stats.dirichlet.pdf(x, alpha * 1.5)


def dirichlet_points(z, alpha):
    x = scipy.special.softmax(z, axis=0)  # four points, the components along the first axis
    return np.sum(scipy.stats.dirichlet.logpdf(x, alpha))


def test_dirichlet_through_a_softmax():
    alpha = rand_array(9, (3,), 0.5, 3.0)
    assert_grad_matches_fd(dirichlet_on_simplex, (rand_array(10, (3,)), alpha), argnums=(0, 1))
    assert_grad_matches_fd(dirichlet_points, (rand_array(11, (3, 4)), alpha), argnums=(0, 1))
