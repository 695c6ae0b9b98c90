"""A function value read only for its captured values is the tuple of them (`tidy`'s `closure_tuples`): a
recursion's calls make no `Closure` object each. Gradients against closed forms; the objects counted."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from chadpy.runtime import closures
from tests.optimise.test_into_callers import det_by_minors


def twice_through(f, x):
    return f(f(x))


def passed_on(a, x):
    def scale(t):
        return a * t

    return twice_through(scale, x) + scale(x)  # `scale` itself is passed on: read as a value


@pytest.fixture
def closures_made(monkeypatch):
    made = [0]
    init = closures.Closure.__init__

    def counting(self, *args):
        made[0] += 1
        init(self, *args)

    monkeypatch.setattr(closures.Closure, "__init__", counting)
    return made


def test_a_recursive_closure_makes_no_closure_object(closures_made):
    A = np.random.default_rng(1).standard_normal((5, 5))
    g = chad.grad(det_by_minors)
    np.testing.assert_allclose(g(A), np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9)
    closures_made[0] = 0
    g(A)
    assert closures_made[0] == 0  # 207 before: one per call of minor, one in det


def test_a_function_value_passed_to_another_function_keeps_its_gradient():
    ga, gx = chad.grad(passed_on, argnums=(0, 1))(1.5, 0.7)
    assert ga == pytest.approx(2 * 1.5 * 0.7 + 0.7, rel=1e-12)
    assert gx == pytest.approx(1.5**2 + 1.5, rel=1e-12)
