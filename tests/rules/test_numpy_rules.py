"""NumPy rules in user code where the registry walk (tests/rules/test_rules.py) cannot reach: `np.add.at`, a
statement; the choices at points without a derivative (`np.interp` at a knot, `np.partition` at ties); the
clear errors (`np.pad` with a mode whose derivative chadpy does not know)."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from chadpy.errors import ChadError
from tests.support.fd import assert_close, assert_grad_matches_fd, rand_array

# ====================================================================== np.add.at

_IDX = np.array([0, 2, 2, 4, 2, 0])  # positions named twice and three times


def accumulated(w, v):
    b = np.zeros(5)
    np.add.at(b, _IDX, v * w)
    return np.sum(b**2) + b[2] * w


def accumulated_in_a_loop(v):
    """A histogram-like buffer, read between updates; the key an expression evaluated once per call."""
    counts = np.ones(4)
    total = 0.0
    for t in range(3):
        np.add.at(counts, _IDX[t : t + 3] % 4, v[t] * counts[t])
        total = total + np.sum(np.sin(counts))
    return total + np.sum(counts**2)


def accumulated_rows(v, s):
    """A 2-d buffer: (rows, columns) pairs, a pair named twice; a row of a scalar."""
    h = np.zeros((3, 4))
    np.add.at(h, (np.array([0, 2, 0, 1]), np.array([1, 3, 1, 0])), v)
    np.add.at(h, 1, s)
    return np.sum(np.tanh(h) * np.arange(12.0).reshape(3, 4))


def accumulated_broadcast(v):
    h = np.zeros((4, 3))
    np.add.at(h, np.array([3, 1, 3]), v)  # v is one row, added to rows 3, 1 and 3
    return np.sum(h**3)


def test_add_at_gradients_match_finite_differences():
    assert_grad_matches_fd(accumulated, (1.3, rand_array(1, (6,))), argnums=(0, 1))
    assert_grad_matches_fd(accumulated_in_a_loop, (rand_array(2, (3,)),))
    assert_grad_matches_fd(accumulated_rows, (rand_array(3, (4,)), 0.7), argnums=(0, 1))
    assert_grad_matches_fd(accumulated_broadcast, (rand_array(4, (3,)),))


def test_add_at_accumulates_unbuffered_like_numpy():
    """A position named twice gets both values (`b[idx] += v` would keep the last one), and the same floats."""
    v = rand_array(5, (6,))
    b = np.zeros(5)
    np.add.at(b, _IDX, v * 1.3)
    value, _ = chad.value_and_grad(accumulated, argnums=1)(1.3, v)
    assert value == np.sum(b**2) + b[2] * 1.3
    # d/dv_j = 1.3 * (2 b[idx_j] + 1.3 [idx_j == 2]): every value named at position 2 gets that position's cotangent
    assert_close(chad.grad(accumulated, argnums=1)(1.3, v), 1.3 * (2.0 * b[_IDX] + 1.3 * (_IDX == 2)), 1e-12, 1e-12)


def add_into_argument(b, v):
    np.add.at(b, _IDX, v)
    return np.sum(b)


def test_add_at_on_an_argument_is_a_clear_error():
    with pytest.raises(ChadError, match="argument"):
        chad.grad(add_into_argument, argnums=1)(np.zeros(5), rand_array(6, (6,)))


# ====================================================================== choices where no derivative exists


def interp_at(x):
    return np.interp(x, np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    ("x", "slope"),
    [(0.0, 2.0), (1.0, 0.5), (3.0, 0.5), (-1.0, 0.0), (4.0, 0.0), (0.5, 2.0)],
)
def test_interp_takes_the_piece_on_the_right_of_a_knot_and_zero_outside(x, slope):
    """A knot starts the piece on its right (the last knot ends the last piece); NumPy clamps outside."""
    assert chad.grad(interp_at)(x) == slope


def partitioned(x):
    return np.sum(np.partition(x, 2) * np.arange(1.0, 6.0))


def test_partition_at_ties_follows_a_permutation_that_makes_its_result():
    x = np.array([3.0, 1.0, 3.0, 0.0, 3.0])
    y = np.partition(x, 2)
    g = chad.grad(partitioned)(x)
    # each weight k + 1 goes to one element of x equal to y[k], each element of x taking one weight
    assert sorted(g) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert all(y[int(k) - 1] == x[i] for i, k in enumerate(g))


def padded(x, mode):
    return np.sum(np.pad(x, 2, mode=mode) ** 2)


def padded_by_mean(x):
    return np.sum(np.pad(x, 1, mode="mean"))


def test_pad_with_a_mode_chadpy_cannot_differentiate_is_a_clear_error():
    with pytest.raises(ChadError, match="mode='maximum'"):
        chad.grad(padded)(rand_array(7, (3,)), "maximum")  # a mode known when the code runs
    with pytest.raises(ChadError, match="(?s)mode='mean'.*line"):
        chad.grad(padded_by_mean)(rand_array(7, (3,)))  # a constant mode: at the call
    assert_grad_matches_fd(padded, (rand_array(8, (3,)), "wrap"))


def pad_of_data(w):
    return w * np.sum(np.pad(np.arange(3.0), 2, mode="maximum"))


def test_pad_of_data_runs_in_any_mode():
    assert chad.grad(pad_of_data)(2.0) == np.sum(np.pad(np.arange(3.0), 2, mode="maximum"))
