"""A loop's one-hots collected in two lists and added once after it (`chadpy.collect`), and loops
where they must not be.

Each program is checked against central differences in every mode (`assert_grad_matches_fd`);
`COLLECTED` names those whose derivative must append to lists, `KEPT` those that must keep their
per-iteration `add_index`/`add_at` (the cotangent is read in the loop, or the array changes), so a
change in what `collect` accepts is seen. The cases cover each path of `arrays.add_columns` (a
float64 vector's columns; tuple places, rows, float32: items) and of `runtime.add_items` (every
key once: a dict; a key twice: added up).
"""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from chadpy.runtime.cost import measure
from tests.support.fd import assert_grad_matches_fd, rand_array, rand_list
from tests.support.programs import horner


def vector_sum(a, w):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i] * a[i] * w
    return s


def vector_recurrence(a, w):
    s = 1.0
    for i in range(len(a)):
        s = s * w + a[i] * s
    return s


def until_large(a, limit):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i] * a[i]
        if s > limit:
            break
    return s


def matrix_elements(m):
    s = 1.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s * 0.5 + m[i, j] * s
    return s


def matrix_rows(m, v):
    s = 0.0
    for i in range(m.shape[0]):
        s = s + np.sum(m[i] * v) * s + m[i, 0]
    return s


def single_precision(a):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i] * a[i]
    return s


def first_and_each(xs, w):
    s = 0.0
    for i in range(len(xs)):
        s = s * w + xs[0] * xs[i]  # xs[0] in every iteration: a key added to more than once
    return s


def from_the_second(a, w):
    s = 0.0
    for i in range(1, len(a)):  # a run of positions that leaves out a[0]
        s = s + a[i] * a[i] * w
    return s


def first_few(a):
    s = 0.0
    for i in range(3):  # three one-hots of a long vector: a Scatter, not a dense array
        s = s + a[i] * a[i]
    return s


def rebound_array(a, w):
    s = 0.0
    for i in range(len(a)):
        b = a * w  # another array in every iteration: its one-hots cannot wait for the loop's end
        s = s + b[i] * s + b[i]
    return s


COLLECTED = [
    (vector_sum, (rand_array(1, 9), 0.7), (0, 1)),
    (vector_recurrence, (rand_array(2, 8, -0.5, 0.5), 0.9), (0, 1)),
    (until_large, (np.linspace(0.5, 1.5, 12), 3.0), 0),
    (matrix_elements, (rand_array(3, (3, 4), -0.5, 0.5),), 0),
    (matrix_rows, (rand_array(4, (4, 3), -0.5, 0.5), rand_array(5, 3)), (0, 1)),
    (horner, (rand_list(6, 7), 0.8), (0, 1)),
    (first_and_each, (rand_list(7, 6), 0.9), (0, 1)),
    (from_the_second, (rand_array(9, 7), 0.6), (0, 1)),
    (first_few, (rand_array(10, 20),), 0),
]
KEPT = [(rebound_array, (rand_array(8, 6, -0.5, 0.5), 0.8), (0, 1))]


@pytest.mark.parametrize("fn, args, argnums", COLLECTED + KEPT, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_matches_finite_differences(fn, args, argnums):
    assert_grad_matches_fd(fn, args, argnums)


@pytest.mark.parametrize("fn, args, argnums", COLLECTED, ids=lambda v: getattr(v, "__name__", ""))
def test_one_hots_are_collected(fn, args, argnums):
    source = chad.source(fn, *args)
    assert "_values.append(" in source and "add_index(" not in source and "add_at(" not in source


@pytest.mark.parametrize("fn, args, argnums", KEPT, ids=lambda v: getattr(v, "__name__", ""))
def test_one_hots_are_kept_where_the_array_changes(fn, args, argnums):
    source = chad.source(fn, *args)
    assert "add_index(" in source and "_values.append(" not in source


def test_vector_one_hots_closed_form_and_a_pullback_called_twice():
    a = np.linspace(-1.0, 1.0, 7)
    value, pullback = chad.vjp(vector_sum, a, 0.7)
    for _ in range(2):  # the lists are made per call of the backpropagator: the second call is the same
        da, dw = pullback(2.0)
        np.testing.assert_allclose(da, 2.0 * 2.0 * a * 0.7, rtol=1e-12)
        np.testing.assert_allclose(dw, 2.0 * np.sum(a * a), rtol=1e-12)


def test_single_precision_closed_form():
    # float32 one-hots are items, not a float64 vector's columns (finite differences are too coarse here)
    a = np.linspace(0.5, 1.5, 6, dtype=np.float32)
    assert "_values.append(" in chad.source(single_precision, a)
    da = chad.grad(single_precision)(a)
    assert da.dtype == np.float32
    np.testing.assert_allclose(da, 2.0 * a, rtol=1e-6)


def test_horner_closed_form():
    coeffs, x = [0.5, -1.0, 2.0, 0.25], 0.8
    dc, dx = chad.grad(horner, argnums=(0, 1))(coeffs, x)
    n = len(coeffs)
    assert dc == pytest.approx([x ** (n - 1 - k) for k in range(n)], rel=1e-12)
    assert dx == pytest.approx(sum(c * (n - 1 - k) * x ** (n - 2 - k) for k, c in enumerate(coeffs[:-1])), rel=1e-12)


def test_places_the_loop_counts_are_not_collected():
    # `for i in indices` appending its own i once per iteration: the places are `indices`, no list of them
    a = rand_array(1, 9)
    assert "_at" not in chad.source(vector_sum, a, 0.7) and "_at" not in chad.source(from_the_second, a, 0.7)
    # a loop that may stop early, or whose inner loop appends too, keeps its list of places
    assert "_at.append(" in chad.source(until_large, np.linspace(0.5, 1.5, 12), 3.0)
    assert "_at.append(" in chad.source(matrix_elements, rand_array(3, (3, 4)))


def test_a_run_of_places_closed_form():
    a = np.linspace(-1.0, 1.0, 7)
    da, dw = chad.grad(from_the_second, argnums=(0, 1))(a, 0.6)
    np.testing.assert_allclose(da, np.r_[0.0, 2.0 * 0.6 * a[1:]], rtol=1e-12)
    assert dw == pytest.approx(np.sum(a[1:] ** 2), rel=1e-12)
    long = np.linspace(0.5, 2.5, 20)
    np.testing.assert_allclose(chad.grad(first_few)(long), np.r_[2.0 * long[:3], np.zeros(17)], rtol=1e-12)


def test_an_iteration_costs_no_append_of_its_place():
    # the cost model's bytecode count per iteration of vector_sum's gradient: 51 with the list of places
    g = chad.grad(vector_sum, argnums=(0, 1))
    opcodes = {}
    for n in (100, 200):
        a = np.linspace(-1.0, 1.0, n)
        g(a, 0.7)
        opcodes[n] = measure(lambda a=a: g(a, 0.7))[1].opcodes
    assert (opcodes[200] - opcodes[100]) / 100 <= 45
