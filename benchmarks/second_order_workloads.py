"""The functions benchmarks/second_order.py differentiates in forward mode and to second order, written in NumPy
(the peers run this module again with `np` and `math` bound to their own), each with its directional derivative,
Hessian-vector product and Hessian written by hand."""

from __future__ import annotations

import math

import numpy as np

_rng = np.random.default_rng(0)
FEATURES = _rng.standard_normal((500, 20))
LABELS = (FEATURES @ _rng.standard_normal(20) > 0).astype(float)
STEPS = _rng.standard_normal(200) * 0.5


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def logistic(w):
    z = FEATURES @ w
    return np.sum(np.logaddexp(0.0, z) - LABELS * z)


def recurrent(w):
    """A scalar recurrence: h_t = tanh(w h_{t-1} + s_t), 200 steps."""
    h = 0.0
    for t in range(200):
        h = math.tanh(w * h + STEPS[t])
    return h


# ---------------------------------------------------------------- by hand


def rosenbrock_gradient(x):
    g = np.zeros_like(x)
    inner = x[1:] - x[:-1] ** 2
    g[:-1] = -400.0 * x[:-1] * inner - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * inner
    return g


def rosenbrock_hvp(x, v):
    out = np.zeros_like(x)
    out[:-1] = (1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0) * v[:-1] - 400.0 * x[:-1] * v[1:]
    out[1:] += -400.0 * x[:-1] * v[:-1] + 200.0 * v[1:]
    return out


def rosenbrock_hessian(x):
    n = x.size
    h = np.zeros((n, n))
    k = np.arange(n - 1)
    h[k, k] = 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    h[k + 1, k + 1] += 200.0
    h[k, k + 1] = h[k + 1, k] = -400.0 * x[:-1]
    return h


def logistic_gradient(w):
    p = 1.0 / (1.0 + np.exp(-(FEATURES @ w)))
    return FEATURES.T @ (p - LABELS)


def logistic_hvp(w, v):
    p = 1.0 / (1.0 + np.exp(-(FEATURES @ w)))
    return FEATURES.T @ (p * (1.0 - p) * (FEATURES @ v))


def logistic_hessian(w):
    p = 1.0 / (1.0 + np.exp(-(FEATURES @ w)))
    return (FEATURES.T * (p * (1.0 - p))) @ FEATURES


def recurrent_derivatives(w):
    """(h, dh/dw, d2h/dw2), carried forward through the recurrence."""
    h, dh, ddh = 0.0, 0.0, 0.0
    for t in range(200):
        inner = h + w * dh  # d/dw of (w h_{t-1})
        h = math.tanh(w * h + STEPS[t])
        slope = 1.0 - h * h
        ddh = -2.0 * h * slope * inner * inner + slope * (2.0 * dh + w * ddh)
        dh = slope * inner
    return h, dh, ddh


WORKLOADS = [
    {
        "name": "Rosenbrock, n = 100",
        "fn": rosenbrock,
        "args": lambda: (np.linspace(-1.0, 1.0, 100),),
        "jvp": lambda x, v: (rosenbrock(x), float(rosenbrock_gradient(x) @ v)),
        "hvp": rosenbrock_hvp,
        "hessian": rosenbrock_hessian,
    },
    {
        "name": "logistic loss, 500 x 20 data",
        "fn": logistic,
        "args": lambda: (np.full(20, 0.1),),
        "jvp": lambda w, v: (logistic(w), float(logistic_gradient(w) @ v)),
        "hvp": logistic_hvp,
        "hessian": logistic_hessian,
    },
    {
        "name": "scalar recurrence, 200 steps",
        "fn": recurrent,
        "args": lambda: (0.7,),
        "jvp": lambda w, v: (recurrent(w), recurrent_derivatives(w)[1] * v),
        "hvp": lambda w, v: recurrent_derivatives(w)[2] * v,
        "hessian": lambda w: recurrent_derivatives(w)[2],
    },
]
