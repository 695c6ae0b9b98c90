"""A callee's backpropagator adds into its caller's cotangent (`into_callers`, optimise/caller_accumulators.py):
`dminor, _, _ = minor_bp(saved, d, dminor)`, not a cotangent of its own that the caller merges.

Gradients are checked against closed forms and central differences; the objects saved are counted (sparse
cotangents made per gradient, a deterministic count, not a time).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from chadpy.runtime import array_cotangents
from tests.support.fd import assert_grad_matches_fd
from tests.support.paths import gradbench

det_by_minors = gradbench().det  # the determinant by minors along the first row: a recursive closure


def scaled_power(a, x, n):
    def power(k):  # a * x ** k, by recursion: each call reads the captured a and x
        if k == 0:
            return 1.0
        return a * x * power(k - 1)

    return power(n)


def read_between(a, x):
    def g(t):
        return a * t * t

    first = g(x)
    second = g(first)  # the first call's cotangent of g's captured `a` is read by nothing between: it is added
    return first + second * x


@pytest.mark.parametrize("ell", [1, 2, 3, 4, 5])
def test_det_by_minors_has_the_adjugate_as_gradient(ell):
    A = np.random.default_rng(ell).standard_normal((ell, ell)) + ell * np.eye(ell)
    np.testing.assert_allclose(chad.grad(det_by_minors)(A), np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9)


def test_a_recursions_calls_add_into_one_cotangent(monkeypatch):
    # ell = 5: 206 calls, 120 of them at 1 x 1 minors. Each call made a sparse cotangent of its own before (206
    # Scatters, merged by the callers); now a group of siblings adds into their caller's, and a loop's one-hots
    # go into the cotangent as it is.
    made = [0]
    init = array_cotangents.Scatter.__init__

    def counting(self, *args, **kwargs):
        made[0] += 1
        init(self, *args, **kwargs)

    A = np.random.default_rng(0).standard_normal((5, 5))
    g = chad.grad(det_by_minors)
    g(A)
    monkeypatch.setattr(array_cotangents.Scatter, "__init__", counting)
    np.testing.assert_allclose(g(A), np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9)
    assert made[0] <= 1 + (1 + 5 + 20 + 60)  # the leaves of each call with minors of its own share one
    assert "minor_bp(minor_1_saved, dminor_1, dminor)" in chad.source(det_by_minors, A, annotate=False)


def test_a_captured_floats_cotangent_accumulates_through_the_recursion():
    for n in (0, 1, 4):
        ga, gx = chad.grad(scaled_power, argnums=(0, 1))(1.3, 0.9, n)
        assert ga == pytest.approx(n * 1.3 ** (n - 1) * 0.9**n if n else 0.0, rel=1e-12)
        assert gx == pytest.approx(n * 1.3**n * 0.9 ** (n - 1) if n else 0.0, rel=1e-12)
    assert "into_0" in chad.source(scaled_power, 1.3, 0.9, 4, annotate=False)


def test_calls_that_do_not_add_into_a_cotangent_pass_zero():
    assert_grad_matches_fd(read_between, (0.7, 1.1), argnums=(0, 1))
    x = 1.1
    first = 0.7 * x * x
    # d/da of first + a * first^2 * x, first = a x^2
    want = x * x + (first**2 + 0.7 * 2 * first * x * x) * x
    assert chad.grad(read_between)(0.7, x) == pytest.approx(want, rel=1e-12)
    assert not math.isnan(chad.grad(read_between, argnums=1)(0.7, x))
