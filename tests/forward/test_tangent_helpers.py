"""The helpers forward-mode code calls (`rules/tangents.py`), each through a program that uses it: the tangent
against a closed form, and the Hessian-vector product (reverse mode over the tangent code, so the helper's own
VJP) against a closed form or central differences of the gradient."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from tests.forward import helper_programs as H


def _hvp_by_differences(f, args: tuple, v: object, step: float = 1e-6) -> object:
    """Central differences of chadpy's gradient along v (first argument)."""
    g = chad.grad(f)
    plus, minus = (args[0] + step * v, *args[1:]), (args[0] - step * v, *args[1:])
    return (np.asarray(g(*plus)) - np.asarray(g(*minus))) / (2 * step)


def test_part_or_none():
    x = 2.25
    assert chad.jvp(H.attempted, (x,), (1.0,))[1] == pytest.approx(1.5 * np.sqrt(x), rel=1e-12)
    assert chad.hvp(H.attempted, (x,), (1.0,)) == pytest.approx(0.75 / np.sqrt(x), rel=1e-12)
    assert chad.jvp(H.attempted, (-1.0,), (1.0,)) == (-0.0, 0.0)


def test_from_parts():
    x, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.5, -0.25])
    assert chad.jvp(H.gradient_inside, (x,), (v,))[1] == pytest.approx(float(np.sum(9 * x**2 * v)), rel=1e-12)
    np.testing.assert_allclose(chad.hvp(H.gradient_inside, (x,), (v,)), 18 * x * v, rtol=1e-12)


def test_safe_divisor_and_where_nonzero():
    x, y = np.array([0.0, 3.0]), np.array([0.0, 4.0])
    _, tangent = chad.jvp(H.hypotenuse, (x, y), (np.ones(2), np.ones(2)))
    assert tangent == pytest.approx(7.0 / 5.0, rel=1e-12)  # 0 at the origin (the VJP's choice), (3 + 4) / 5
    v = np.array([0.0, 1.0])
    np.testing.assert_allclose(chad.hvp(H.hypotenuse, (x, y), (v, np.zeros(2))), [0.0, 16 / 125], atol=1e-12)


def test_broadcast_like():
    x = 0.3
    expected = 2 * float(np.sum(x + H.SHIFTS))
    assert chad.jvp(H.shifted, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-12)
    assert chad.hessian(H.shifted)(x) == pytest.approx(2.0 * H.SHIFTS.size, rel=1e-12)


def test_strong_zero():
    x = np.array([0.0, 4.0])
    _, tangent = chad.jvp(H.roots, (x,), (np.array([0.0, 1.0]),))
    assert tangent == 0.25  # not NaN: the tangent into sqrt at 0 is 0
    v = np.array([0.0, 1.0])
    assert chad.hvp(H.roots, (x,), (v,))[1] == pytest.approx(-1 / 32, rel=1e-12)


def test_rekeyed():
    a, b = 0.7, -1.2
    # (a b)(a + b): d/da = b (a + b) + a b, d/db = a (a + b) + a b
    expected = (b * (a + b) + a * b) * 1.0 + (a * (a + b) + a * b) * 2.0
    assert chad.jvp(H.keyed, (a, b), (1.0, 2.0))[1] == pytest.approx(expected, rel=1e-12)
    assert chad.hvp(H.keyed, (a, b), (1.0, 0.0)) == pytest.approx(2 * b, rel=1e-12)  # d2/da2 = 2b


def test_filled_at():
    x = 1.3
    assert chad.jvp(H.filled, (x,), (1.0,))[1] == pytest.approx(3 * x * x, rel=1e-12)
    assert chad.hessian(H.filled)(x) == pytest.approx(6 * x, rel=1e-12)
    assert chad.hvp(H.filled, (x,), (1.0,)) == pytest.approx(float(_hvp_by_differences(H.filled, (x,), 1.0)), rel=1e-6)
