"""GradBench's `llsq` eval (cmpad's llsq_obj): a least-squares polynomial fit and its gradient,
the gradient from chadpy.

y(x) = 1/2 sum_i (s_i - x_0 - x_1 t_i - ... - x_{m-1} t_i^{m-1})^2, with n points
t_i = -1 + 2 i / (n - 1) and s_i = sign(t_i).
"""

from __future__ import annotations

import numpy as np
from protocol import Function

import chadpy as chad


def llsq(x: np.ndarray, n: int) -> float:
    """1/2 sum_i (sign(t_i) - sum_j x_j t_i^j)^2 at the n points t_i evenly spaced in [-1, 1]."""
    t = -1.0 + np.arange(n) * 2.0 / (n - 1)
    r = np.sign(t) - np.vander(t, len(x), increasing=True) @ x  # columns t^0, t^1, ..., t^(m-1)
    return 0.5 * np.sum(r * r)


gradient = chad.grad(llsq)  # d y / d x; n is an int, not differentiated


def prepare(input: dict) -> tuple[np.ndarray, int]:
    """The eval's `{"x": [...], "n": n}` as a float64 array and an int."""
    return np.array(input["x"], dtype=np.float64), int(input["n"])


FUNCTIONS = {
    "primal": Function(llsq, prepare=prepare, encode=float),
    "gradient": Function(gradient, prepare=prepare, encode=lambda g: g.tolist()),
}
