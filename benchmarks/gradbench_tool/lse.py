"""GradBench's `lse` eval: LogSumExp of a vector and its gradient, the gradient from chadpy.

LSE(x) = a + log sum_i exp(x_i - a), with a = max_i x_i (the max subtracted for stability).
"""

from __future__ import annotations

import numpy as np
from protocol import Function

import chadpy as chad


def logsumexp(x: np.ndarray) -> float:
    """log sum_i exp(x_i), computed as a + log sum_i exp(x_i - a) with a = max x."""
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


gradient = chad.grad(logsumexp)


def prepare(input: dict) -> tuple[np.ndarray]:
    """The eval's `{"x": [...]}` as a float64 array."""
    return (np.array(input["x"], dtype=np.float64),)


FUNCTIONS = {
    "primal": Function(logsumexp, prepare=prepare, encode=float),
    "gradient": Function(gradient, prepare=prepare, encode=lambda g: g.tolist()),
}
