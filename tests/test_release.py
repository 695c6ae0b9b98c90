"""Arrays the backward pass reads only for their shape are let go in the forward pass (`release`).

The gradients are checked against central differences in every mode; the memory a `vjp`
keeps is measured with tracemalloc (a deterministic count of bytes, not a time).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from fd import assert_grad_matches_fd, rand_array

import chadpy as chad


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def mlp(W1, b1, W2, x):
    h = np.tanh(W1 @ x + b1)
    y = W2 @ h
    return np.sum(y * y)


def returned_too(x):
    """`y` is read for its shape by the backward pass and returned: it stays."""
    y = x * 2.0
    return np.sum(y), y


def mean_of_a_temporary(x):
    t = np.exp(x) + 1.0
    u = np.log(t)
    return np.mean(u) + math.sin(np.sum(x))


def loop_then_alias(v0):
    """An assignment of no names before an alias of an array (seed 5350: an IndexError in `release`)."""
    for i in range(1, 4):  # noqa: B007  the program as the tester shrank it
        pass
    arr0 = v0  # noqa: F841
    return 0.5


CASES = {
    rosenbrock: ((rand_array(1, 7),), 0),
    mlp: ((rand_array(2, (4, 3)), rand_array(3, 4), rand_array(4, (2, 4)), rand_array(5, 3)), (0, 1, 2, 3)),
    mean_of_a_temporary: ((rand_array(6, 5),), 0),
    loop_then_alias: ((rand_array(7, 3),), 0),
}


@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    args, argnums = CASES[f]
    assert_grad_matches_fd(f, args, argnums=argnums)


def test_a_returned_array_is_kept_and_its_gradient_right():
    x = rand_array(8, 4)
    (total, y), pullback = chad.vjp(returned_too, x)
    np.testing.assert_array_equal(y, x * 2.0)
    (g,) = pullback((1.0, np.ones(4)))
    np.testing.assert_array_equal(g, np.full(4, 4.0))


def test_the_forward_pass_keeps_only_what_the_backward_pass_reads_as_values():
    """Rosenbrock's backward pass reads two of its seven n-element intermediates as values
    (`x[1:] - x[:-1] ** 2` and `1.0 - x[:-1]`); the others only for their shape."""
    n = 100_000
    x = rand_array(9, n)
    chad.vjp(rosenbrock, x)  # build the derivative first
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = chad.vjp(rosenbrock, x)
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert 2 * 8 * (n - 1) <= kept < 3 * 8 * n, kept
    np.testing.assert_allclose(held[1](1.0)[0], chad.grad(rosenbrock)(x))
    assert "like(" in chad.source(rosenbrock) and "del " in chad.source(rosenbrock)
