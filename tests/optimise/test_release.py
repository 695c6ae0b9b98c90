"""Arrays the backward pass reads only for their shape are let go in the forward pass (`release`).

The gradients are checked against central differences in every mode; the memory a `vjp`
keeps is measured with tracemalloc (a deterministic count of bytes, not a time).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_grad_matches_fd, rand_array


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


def euler_steps(x, steps):
    """A loop over vectors: each step's intermediates are read back only for their shapes."""
    y = np.zeros(len(x))
    for _ in range(steps):
        k = np.concatenate((x[:1], x[1:] * y[:-1]))
        y = y + 0.1 * k
    return np.sum(y)


def set_on_one_path(x):
    """An array bound in one branch of an iteration is None on the other path's record."""
    total = 1.0
    for i in range(4):
        if i % 2:
            t = x * 2.0
            total = total * 0.5 + np.sum(t)
        else:
            total = total * 0.5 + np.sum(x) * i
    return total


def carried_pair(x):
    """The loop carries an array and a float, updated by one tuple assignment `a_1, s_1 = (a_2, s_2)`
    (not a tuple the iteration makes: seed 60019 took it for one); `a` is read back for its shape."""
    a = x * 1.0
    s = 0.0
    for _ in range(3):
        s = s * 0.5 + np.sum(a)
        a = a + 1.0
    return s


@pytest.mark.parametrize(
    "f, args",
    [
        (euler_steps, (rand_array(10, 6), 5)),
        (set_on_one_path, (rand_array(11, 3),)),
        (carried_pair, (rand_array(14, 4),)),
    ],
)
def test_loops_with_stand_ins_match_finite_differences(f, args):
    assert_grad_matches_fd(f, args, argnums=0)


def test_a_loops_tape_keeps_stand_ins_not_its_intermediates():
    """Per step, `np.concatenate`'s parts and result and `y + 0.1 * k` are read back only for their
    shapes; what the replay reads as values is `x[1:]` and `y[:-1]`, views of arrays alive anyway
    (x, and the previous step's y). So the tape holds about one n-element array per step (each y,
    viewed by the next step's backpropagator), not five."""
    n, steps = 10_000, 20
    x = rand_array(12, n)
    chad.vjp(euler_steps, x, steps)  # build the derivative first
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = chad.vjp(euler_steps, x, steps)
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert steps * 8 * n <= kept < 1.5 * steps * 8 * n, kept / (steps * 8 * n)
    np.testing.assert_allclose(held[1](1.0)[0], chad.grad(euler_steps)(x, steps))
    assert "like(" in chad.source(euler_steps)


def shifted_product(x):
    k = np.concatenate((x[:1], x[1:] * x[:-1]))
    return np.sum(k)


def test_a_tuple_read_for_its_parts_shapes_holds_stand_ins():
    """`np.concatenate`'s rule reads its tuple argument for the shapes of the parts: the product in
    it is let go (the tuple of stand-ins keeps no n-element array; x's views are x's memory)."""
    n = 100_000
    x = rand_array(13, n)
    chad.vjp(shifted_product, x)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = chad.vjp(shifted_product, x)
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert kept < 8 * n / 10, kept
    closed_form = np.concatenate(([1.0 + x[1]], x[2:] + x[:-2], [x[-2]]))  # d/dx of x0 + sum x[i] x[i-1]
    np.testing.assert_allclose(held[1](1.0)[0], closed_form)
    assert "for its parts' shapes" in chad.source(shifted_product)


def fill(x, w):
    out = np.zeros(len(x))
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = out[i - 1] * w + x[i]
    return np.sum(out * x)


def test_a_buffer_written_in_place_is_recorded_as_it_is():
    """The buffer lives on in each write's record: a stand-in per iteration would free nothing."""
    assert_grad_matches_fd(fill, (rand_array(15, 5), 0.7), argnums=(0, 1))
    source = chad.source(fill, rand_array(15, 5), 0.7)
    assert "tape.append" in source and "like(out" not in source, source


def seed_3048(x0, d0):
    """The random program of seed 3048, as generated: `arr1` is made after a `continue`, so the while
    loop's record holds None for it on the other path (a stand-in there crashed)."""
    s1 = x0
    arr0 = np.arctan2(np.array([[d0["bias"], x0, s1], [s1, 1.25, s1]]), 2.0 + np.modf(np.zeros((2, 3)))[0])
    s2 = 0.0
    k0 = 0
    while k0 < 4:
        k0 += 1
        if s2 > s1:
            continue
        s3 = 0.0
        arr1 = np.sin(np.log2(1.0 + np.array([s1, np.median(arr0), s1]) * np.array([s1, np.median(arr0), s1])))
        for row in arr0:
            s3 += math.tanh(math.sqrt(1.0 + np.max(row) * np.max(row)))
            arr1 += np.tanh(np.abs(row))
        s2 = s2 * 0.5 + x0
    return np.sum(arr0) * 1.0 + s2 * 0.5 + d0["b"] * -1.5


def test_the_random_program_of_seed_3048():
    d0 = {"a": 0.7579393951351103, "b": -0.9125341125641682, "bias": 1.104155515669576}
    assert_grad_matches_fd(seed_3048, (-1.0616456489519601, d0), argnums=(0, 1))


def empty_inner_loop(x):
    """A loop carrying nothing ends its iteration with `() = ()`, an assignment of no names, beside
    the outer loop's record (seed 60303: an IndexError in `release`)."""
    s = 0.0
    for _ in range(1, 5):
        for _ in range(2):
            pass
        s = s * 0.5 + np.sum(x * x)
    return s


def test_a_loop_carrying_nothing_beside_a_record():
    x = rand_array(17, 3)
    np.testing.assert_allclose(chad.grad(empty_inner_loop)(x), 1.875 * 2.0 * x)  # s = (1 + .5 + .25 + .125) x.x
    assert_grad_matches_fd(empty_inner_loop, (x,), argnums=0)
