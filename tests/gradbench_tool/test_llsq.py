"""The `llsq` eval through the protocol: the least-squares objective and its gradient in x."""

import llsq
import numpy as np
import pytest
from protocol import evaluate

from tests.support import fd


def run(function: str, x: np.ndarray, n: int) -> object:
    return evaluate(llsq.FUNCTIONS[function], {"x": x.tolist(), "n": n, "min_runs": 1, "min_seconds": 0})["output"]


def objective_by_loops(x: list, n: int) -> float:
    """The eval's definition term by term: 1/2 sum_i (s_i - sum_j x_j t_i^j)^2."""
    total = 0.0
    for i in range(n):
        t = -1.0 + i * 2.0 / (n - 1)
        r = (t > 0) - (t < 0) - sum(xj * t**j for j, xj in enumerate(x))
        total += r * r
    return total / 2


def residuals_and_design(x: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.linspace(-1.0, 1.0, n)
    V = t[:, None] ** np.arange(len(x))
    return np.sign(t) - V @ x, V


@pytest.mark.parametrize(("n", "m"), [(2, 1), (9, 4), (16, 5), (33, 8)])
def test_primal_matches_the_definition(n, m):
    x = fd.rand_array(n * m, m)
    out = run("primal", x, n)
    assert type(out) is float
    assert out == pytest.approx(objective_by_loops(x.tolist(), n), rel=1e-12)


def test_primal_of_zero_coefficients_counts_nonzero_signs():
    # x = 0: y = 1/2 #{i: t_i != 0}; odd n has t = 0 in the middle, where sign is 0
    assert run("primal", np.zeros(3), 7) == 3.0
    assert run("primal", np.zeros(3), 8) == 4.0


@pytest.mark.parametrize(("n", "m"), [(2, 1), (9, 4), (16, 5), (33, 8)])
def test_gradient_is_minus_design_transpose_residuals(n, m):
    x = fd.rand_array(100 + n * m, m)
    out = run("gradient", x, n)
    assert type(out) is list and len(out) == m and all(type(v) is float for v in out)
    r, V = residuals_and_design(x, n)  # y = |r|^2 / 2 with r = s - V x, so grad y = -V^T r
    np.testing.assert_allclose(out, -(V.T @ r), rtol=1e-11, atol=1e-12)


def test_gradient_matches_finite_differences():
    x = fd.rand_array(5, 6)
    expected = fd.central_diff(llsq.llsq, (x, 20), 0)
    np.testing.assert_allclose(run("gradient", x, 20), expected, rtol=1e-6, atol=1e-7)


def test_gradient_vanishes_at_the_least_squares_fit():
    n, m = 25, 4
    _, V = residuals_and_design(np.zeros(m), n)
    x, *_ = np.linalg.lstsq(V, np.sign(np.linspace(-1.0, 1.0, n)), rcond=None)
    np.testing.assert_allclose(run("gradient", x, n), np.zeros(m), atol=1e-12)
