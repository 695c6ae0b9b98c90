"""The cotangent of a whole array's sum or mean, one number at every element, meets an array of its shape as
the number (`uniforms`): `dy = d * y * 2.0` for `np.sum(y * y)`, not a broadcast view made dense and multiplied
twice.

Gradients are checked against central differences; the work saved is counted by the cost model (array elements
touched, a deterministic count, not a time).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from chadpy.runtime.cost import counted, measure
from tests.support.fd import assert_grad_matches_fd, rand_array


def sum_of_squares(y):
    return np.sum(y * y)


def mean_squared_error(y, t):
    return np.mean((y - t) ** 2)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def broadcast_operand(a, b):
    """The sum's number reaches `a[:, None]` summed over b's length: each of its elements stands for len(b)."""
    return np.sum(a[:, None] * 2.0 + b) * 3.0


def two_sums_scaled(x):
    return -np.sum(x * x) / 4.0 + np.mean(np.sin(x)) * 2.0


def sum_in_a_loop(W, h):
    total = 0.0
    for _ in range(3):
        h = np.tanh(W @ h)
        total = total + np.sum(h * h)
    return total


CASES = [
    (sum_of_squares, (rand_array(1, 6),), 0),
    (mean_squared_error, (rand_array(2, (3, 4)), rand_array(3, (3, 4))), (0, 1)),
    (rosenbrock, (rand_array(4, 7),), 0),
    (broadcast_operand, (rand_array(5, 3), rand_array(6, 4)), (0, 1)),
    (two_sums_scaled, (rand_array(7, 5),), 0),
    (sum_in_a_loop, (rand_array(8, (3, 3)), rand_array(9, 3)), (0, 1)),
]


@pytest.mark.parametrize(("fn", "args", "argnums"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_match_finite_differences(fn, args, argnums):
    assert_grad_matches_fd(fn, args, argnums)


def test_the_sum_of_squares_multiplies_its_array_once():
    code = chad.source(sum_of_squares, rand_array(1, 6))
    assert "dy = as_number(d) * y * 2.0" in code and "sum_ct" not in code and "dense(" not in code


def _elements(fn, *args) -> int:
    """Array elements the gradient touches beyond the primal's (the cost model's count)."""
    g = chad.grad(fn, argnums=tuple(range(len(args))))
    g(*args)
    grad = measure(lambda: g(*map(counted, args)))[1].elements
    primal = measure(lambda: fn(*map(counted, args)))[1].elements
    return grad - primal


@pytest.mark.parametrize(
    ("fn", "arrays", "most"),
    [
        (sum_of_squares, 1, 4),  # the forward pass again (2 n), d * y * 2.0 (n), the gradient's copy (n): 5 n before
        (mean_squared_error, 2, 2),  # 3 n before
        (rosenbrock, 1, 15),  # 17 n before
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_the_backward_pass_makes_no_array_of_one_number(fn, arrays, most):
    n = 1000
    args = [np.linspace(-1.0, 1.0, n) + k for k in range(arrays)]
    assert _elements(fn, *args) <= most * n + 10


def test_a_float32_gradient_stays_float32():
    y = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
    g = chad.grad(sum_of_squares)(y)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2.0 * y, rtol=1e-6)


class _Box:
    """An object made beside the sum (the random program's, shrunk): its `tanh` of `np.prod(v)` has a rule that
    divides by NumPy in the Hessian-vector product's backward pass."""

    def __init__(self, a, b):
        self.a = a
        if a <= b:
            self.c = b
        else:
            self.c = b
        self.b = math.tanh(b)
        self.a += math.tanh(self.a)


def square_sum_beside_an_object(v):
    arr = np.square(v)
    _Box(0.25, np.prod(v))
    return np.sum(arr)


def test_a_hessian_vector_product_through_a_dense_sum():
    # reverse over forward: the backward pass's cotangent of the sum may be Zero, and what follows its `dense` calls
    # NumPy on it (`np.divide`, which takes no Zero): there the number is 0.0 (random programs, seeds 9227 and 10414:
    # a TypeError out of the generated code)
    v, t = np.array([-0.22, -1.09, 0.08]), np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(chad.hvp(square_sum_beside_an_object, (v,), (t,)), 2.0 * t, rtol=1e-12)
