"""GradBench's `ode` eval (cmpad's an_ode): an ODE solved by s Runge-Kutta steps, and the
gradient of the solution's last element, the gradient from chadpy.

y_0' = x_0, y_i' = x_i y_{i-1} (i > 0), y(0) = 0, solved for y(2) by s classical RK4 steps
(as GradBench's C++ reference, ode.hpp); the gradient is d y_{n-1}(2) / d x.
"""

from __future__ import annotations

import numpy as np
from protocol import Function

import chadpy as chad


def ode(x: np.ndarray, s: int) -> np.ndarray:
    """y(2) after s RK4 steps of size h = 2 / s for y' = f(y), f(y) = (x_0, x_1 y_0, ..., x_{n-1} y_{n-2})."""
    h = 2.0 / s

    def f(y):
        return np.concatenate((x[:1], x[1:] * y[:-1]))

    y = np.zeros(len(x))
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def ode_last(x: np.ndarray, s: int) -> float:
    """y_{n-1}(2), the last element of `ode(x, s)`: the value the eval differentiates."""
    return ode(x, s)[-1]


gradient = chad.grad(ode_last)  # d y_{n-1}(2) / d x; s is an int, not differentiated


def prepare(input: dict) -> tuple[np.ndarray, int]:
    """The eval's `{"x": [...], "s": s}` as a float64 array and an int."""
    return np.array(input["x"], dtype=np.float64), int(input["s"])


FUNCTIONS = {
    "primal": Function(ode, prepare=prepare, encode=lambda y: y.tolist()),
    "gradient": Function(gradient, prepare=prepare, encode=lambda g: g.tolist()),
}
