"""SciPy functions in user code: calls through attribute paths (`scipy.stats.norm.logpdf`, `norm.logpdf`
after `from scipy.stats import norm`) resolve to their rules, never to SciPy's source. Each rule alone is
checked against finite differences by the registry walk (tests/test_rules.py)."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from chadpy.errors import ChadError
from tests.support.fd import assert_grad_matches_fd, rand_array

pytest.importorskip("scipy")
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402
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
