"""The functions tests/forward differentiates in forward mode and to second and third order (module-level, so
chadpy reads their source)."""

from __future__ import annotations

import math

import numpy as np
import scipy.special

import chadpy as chad

# ====================================================================== vector functions (Jacobians)


def softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def lotka_volterra(y, a, b, c, d):
    """An ODE right-hand side: predators and prey."""
    prey, predators = y[0], y[1]
    return np.array([a * prey - b * prey * predators, -c * predators + d * prey * predators])


def decay_residuals(params, t, observed):
    """A least-squares residual: amplitude * exp(-rate * t) - observed."""
    amplitude, rate = params[0], params[1]
    return amplitude * np.exp(-rate * t) - observed


def two_arguments(x, y):
    return x * math.sin(y) + y * y * x


def affine_model(params, x):
    """A dict of parameters, as models keep them."""
    return np.tanh(params["w"] * x + params["b"])


def pair_of_outputs(x):
    return np.sum(x**2), np.cos(x)


def with_aux(x):
    return np.sin(x), {"norm": float(np.sum(x * x))}


# ====================================================================== scalar functions (Hessians)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


FEATURES = np.array([[0.5, -1.2, 0.3], [1.1, 0.4, -0.7], [-0.3, 0.8, 1.5], [0.9, -0.1, 0.2]])
LABELS = np.array([1.0, 0.0, 1.0, 0.0])


def logistic_loss(w):
    """A logistic regression's loss on module-level data."""
    z = FEATURES @ w
    return np.sum(np.logaddexp(0.0, z) - LABELS * z)


def sine_series(x, n):
    """A loop: x * sum_i sin(i x)."""
    total = 0.0
    for i in range(1, n + 1):
        total = total + math.sin(i * x)
    return x * total


def cubic_trace(a):
    """A matrix argument: trace(A^3)."""
    return np.trace(a @ a @ a)


def log_sum_exp(x):
    return scipy.special.logsumexp(x)


def gmm_objective(means, log_weights, x):
    """A Gaussian mixture's negative log-likelihood (unit covariances), as GradBench's gmm writes it."""
    total = 0.0
    for i in range(x.shape[0]):
        diffs = x[i] - means
        exponents = log_weights - 0.5 * np.sum(diffs * diffs, axis=1)
        total = total - scipy.special.logsumexp(exponents)
    return total + x.shape[0] * scipy.special.logsumexp(log_weights)


def fourth_power(x):
    return x * x * x * x


def mixed_cubic(x):
    """x0^2 x1 + x1^3: third derivatives 2 (d x0 d x0 d x1) and 6 (d x1^3)."""
    return x[0] * x[0] * x[1] + x[1] ** 3


# ====================================================================== derivatives inside differentiated code


def confused(x):
    """Siskind and Pearlmutter: d/dx [x * d/dy (x + y)] at y = x is 1; confusing the perturbations gives 2."""
    return x * chad.grad(lambda y: x + y)(x)


def confused_product(x):
    """d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x."""
    return x * chad.grad(lambda y: x * y)(1.0)


def nested_closures(x):
    """d/dx [d/dy (d/dz x y z)] = d/dx [x] = 1 (three perturbations, each its own)."""
    inner = lambda y: chad.grad(lambda z: x * y * z)(2.0)  # noqa: E731
    return chad.grad(inner)(3.0)


def calls_jvp(x):
    """d/dx [the tangent of y -> x y^2 at y = x along 1] = d/dx 2 x^2 = 4x."""
    return chad.jvp(lambda y: x * y * y, (x,), (1.0,))[1]


def stopped(x):
    return x * chad.stop_gradient(x) + chad.stop_gradient(x * x)


def broadcast_sum(x):
    """A number made an array's element, then broadcast against a constant: forward over forward once gave
    nan (the rule of `broadcast_like` given no tangent)."""
    a = np.array([-0.75, x]) + np.ones((2, 2))
    return np.sum(a * a)


def powers_of_zero(x):
    """s ** [0, 1] at s = 0 (s depends on x): s ** 0 is constant, so its part of the second derivative is 0, not
    0 * 0 ** -1 = nan (random program seed 7016)."""
    s = math.sin(0.0 * x)
    return np.sum(np.tanh(s ** np.arange(2))) + x * x


def product_of_pair(p, w):
    return p[0] * p[1] * w


def gradient_in_a_pair(w):
    """The gradient with respect to a tuple, taken inside: (2w, w), summed: d/dw = 3 (once typed a float)."""
    d0, d1 = chad.grad(product_of_pair)((1.0, 2.0), w)
    return d0 + d1


def gradient_in_an_array(w):
    """The same with an array, indexed: d/dw = 3 (reverse over it once passed a sparse cotangent to float())."""
    d = chad.grad(product_of_pair)(np.array([1.0, 2.0]), w)
    return d[0] + d[1]


def weighted(params, w):
    return params["a"][0] * w * w + np.sum(params["b"][1] * params["b"][1]) * w


def gradient_in_containers(w):
    """Gradients with respect to a list, a dict of a tuple with an int and an array, and a namedtuple: each
    container's gradient has its structure, None for the int: (6 + 3w) + 4 + (4w + 4) = 14 + 7w."""
    g_list = chad.grad(lambda xs: xs[0] * xs[1] * xs[2])([w, 2.0, 3.0])
    g_dict = chad.grad(weighted)({"a": (w, 7), "b": (1, np.array([w, 1.0]))}, 2.0)
    assert g_dict["a"][1] is None and g_dict["b"][0] is None
    return g_list[0] + g_list[1] + g_dict["a"][0] + np.sum(g_dict["b"][1])
