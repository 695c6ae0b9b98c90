"""The `ode` eval through the protocol: y(2) of y_0' = x_0, y_i' = x_i y_{i-1}, y(0) = 0 by
s RK4 steps, and the gradient of its last element."""

import math

import numpy as np
import ode
import pytest
from protocol import evaluate

from tests.support import fd


def run(function: str, x: np.ndarray, s: int) -> object:
    return evaluate(ode.FUNCTIONS[function], {"x": x.tolist(), "s": s, "min_runs": 1, "min_seconds": 0})["output"]


def exact(x: np.ndarray) -> np.ndarray:
    """The exact solution at t = 2: y_i(2) = x_0 x_1 ... x_i 2^(i+1) / (i+1)!."""
    return np.array([np.prod(x[: i + 1]) * 2.0 ** (i + 1) / math.factorial(i + 1) for i in range(len(x))])


def rk4_by_loops(x: list, s: int) -> list:
    """The RK4 steps element by element, as GradBench's C++ reference writes them."""
    n, h = len(x), 2.0 / s

    def f(y):
        return [x[0]] + [x[i] * y[i - 1] for i in range(1, n)]

    y = [0.0] * n
    for _ in range(s):
        k1 = f(y)
        k2 = f([y[i] + h * k1[i] / 2 for i in range(n)])
        k3 = f([y[i] + h * k2[i] / 2 for i in range(n)])
        k4 = f([y[i] + h * k3[i] for i in range(n)])
        y = [y[i] + h * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) / 6 for i in range(n)]
    return y


@pytest.mark.parametrize(("n", "s"), [(1, 1), (3, 1), (4, 1), (4, 5)])
def test_primal_is_exact_for_solutions_of_degree_up_to_4(n, s):
    # y_i(t) is a polynomial of degree i + 1 and RK4 integrates these linear ODEs exactly up to degree 4
    x = fd.rand_array(n + s, n, 0.5, 1.5)
    out = run("primal", x, s)
    assert type(out) is list and len(out) == n and all(type(v) is float for v in out)
    np.testing.assert_allclose(out, exact(x), rtol=1e-13)


@pytest.mark.parametrize(("n", "s"), [(6, 1), (10, 3), (12, 10)])
def test_primal_matches_the_steps_element_by_element(n, s):
    x = fd.rand_array(n * s, n)
    out = run("primal", x, s)
    assert type(out) is list and len(out) == n and all(type(v) is float for v in out)
    np.testing.assert_allclose(out, rk4_by_loops(x.tolist(), s), rtol=1e-13, atol=1e-16)


def test_primal_converges_to_the_exact_solution_at_fourth_order():
    x = fd.rand_array(7, 8, 0.5, 1.5)
    errors = [np.max(np.abs(np.array(run("primal", x, s)) - exact(x))) for s in (10, 20, 40)]
    assert errors[2] < 1e-6
    for coarse, fine in zip(errors, errors[1:]):
        assert 12 < coarse / fine < 20  # halving h divides the error by about 2^4


@pytest.mark.parametrize("s", [1, 4])
def test_gradient_of_the_exact_last_element(s):
    x = fd.rand_array(30 + s, 4, 0.5, 1.5)  # y_3(2) = x_0 x_1 x_2 x_3 2^4 / 4!, so d y_3 / d x_i = y_3 / x_i
    out = run("gradient", x, s)
    assert type(out) is list and len(out) == 4 and all(type(v) is float for v in out)
    np.testing.assert_allclose(out, exact(x)[-1] / x, rtol=1e-13)


@pytest.mark.parametrize(("n", "s"), [(6, 2), (9, 3)])
def test_gradient_matches_finite_differences(n, s):
    x = fd.rand_array(40 + n, n, 0.5, 1.5)
    out = run("gradient", x, s)
    assert type(out) is list and len(out) == n and all(type(v) is float for v in out)
    expected = fd.central_diff(ode.ode_last, (x, s), 0)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-9)


def test_last_element_out_of_reach_is_zero():
    # each step moves information at most 4 places down y: after s steps y_i = 0 for i >= 4 s
    x = fd.rand_array(50, 9, 0.5, 1.5)
    assert run("primal", x, 2)[-1] == 0.0
    assert run("gradient", x, 2) == [0.0] * 9
