"""Checks of array cotangents against finite differences, in any of the runtime's representations."""

import numpy as np

from chadpy.runtime.array_cotangents import dense
from tests.support.fd import vjp_fd


def random_ct(rng, y):
    """A random cotangent for the primal result y: a Python float for a scalar result."""
    if np.ndim(y) == 0:
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(y))


def check_vjp(f, x, ct, d, rtol: float = 1e-6, atol: float = 1e-7):
    """ct (any cotangent representation) equals the finite-difference J^T d, with x's shape."""
    expected = vjp_fd(f, x, d)
    if isinstance(x, np.ndarray):
        got = dense(ct, x)
        assert got.shape == x.shape
    else:
        assert isinstance(ct, float), type(ct)
        got = ct
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
