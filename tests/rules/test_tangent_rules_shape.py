"""Tangent rules of the shape operations (`rules/shape.py`) where the registry walk (tests/rules/test_rules.py)
cannot reach: integer index arguments held constant, a tuple of parts some of which carry no derivative (an
int array among them), `np.meshgrid(..., indexing="ij")`, `np.pad` with a constant that carries none, the tie
choices of `np.sort` and `np.partition` against their VJPs, and second derivatives through forward code."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_close, inner

_RNG = np.random.default_rng(7)
_M = _RNG.standard_normal((2, 3))
_V = _RNG.standard_normal(3)


def taken(x):
    return np.take(x, np.array([2, 0, 2]), axis=1) + np.take(x, np.array([[5, 0], [0, 3]]))[0, 0]


def repeated(x):
    return np.repeat(x, np.array([1, 0, 3]), axis=1)


def taken_along(x):
    return np.take_along_axis(x, np.array([[2, 2, 0], [1, 0, 1]]), 1)


def taken_along_raveled(x):
    return np.take_along_axis(x, np.array([5, 0, 3, 3]), None) * 2.0


def grid_ij(x, y):
    return np.meshgrid(x, y, indexing="ij")


def grid_with_int_vector(x):
    return np.meshgrid(np.arange(4), x)


def joined_with_constants(x):
    """Tuples whose parts carry no derivative (a float array, an int array, a number) beside x."""
    return (
        np.concatenate((x, np.arange(2), np.ones(1))),
        np.stack((np.zeros(3), x)),
        np.hstack((x, 1.0)),
        np.vstack((np.arange(3), x)),
        np.column_stack((x, np.arange(3))),
    )


def padded_with_constant(x):
    return np.pad(x, ((1, 0), (2, 1)), constant_values=2.5)


def padded_edge(x):
    return np.pad(x, 1, mode="edge")


def padded_constant_array(c):
    return np.pad(np.ones((2, 2)), 1, constant_values=c)


def sorted_rows(x):
    return np.sort(x, axis=0)


def partitioned(x):
    return np.partition(x, 1, axis=None)


def _moved(args: tuple, tangents: tuple, eps: float) -> list:
    return [a + eps * t for a, t in zip(args, tangents)]


def _difference(plus: object, minus: object, width: float) -> object:
    if isinstance(plus, (tuple, list)):
        return type(plus)(_difference(p, m, width) for p, m in zip(plus, minus))
    return (np.asarray(plus, dtype=float) - np.asarray(minus, dtype=float)) / width


def _random_like(value: object, rng: np.random.Generator) -> object:
    if isinstance(value, (tuple, list)):
        return type(value)(_random_like(v, rng) for v in value)
    return rng.standard_normal(np.shape(value))


def _check(f, *args: object, differences: bool = True) -> None:
    """chad.jvp along a random direction against central differences, and <jvp(v), w> = <v, vjp(w)>."""
    rng = np.random.default_rng(1)
    tangents = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal()) for a in args)
    value, tangent = chad.jvp(f, args, tangents)
    assert_close(value, f(*args), 1e-12, 1e-12, f"{f.__name__}: the value")
    if differences:
        eps = 1e-6
        expected = _difference(f(*_moved(args, tangents, eps)), f(*_moved(args, tangents, -eps)), 2 * eps)
        assert_close(tangent, expected, 1e-5, 1e-6, f.__name__)
    w = _random_like(value, rng)
    _, pullback = chad.vjp(f, *args)
    cts = pullback(w)
    cts = cts if isinstance(cts, tuple) else (cts,)
    lhs, rhs = inner(tangent, w), sum(inner(t, ct) for t, ct in zip(tangents, cts))
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs)), f"{f.__name__}: <jvp(v), w> = {lhs} but <v, vjp(w)> = {rhs}"


@pytest.mark.parametrize(
    ("f", "args"),
    [
        (taken, (_M,)),
        (repeated, (_M,)),
        (taken_along, (_M,)),
        (taken_along_raveled, (_M,)),
        (grid_ij, (_V, _V[:2])),
        (grid_with_int_vector, (_V,)),
        (joined_with_constants, (_V,)),
        (padded_with_constant, (_M,)),
        (padded_edge, (_M,)),
        (padded_constant_array, (_RNG.standard_normal((2, 2)),)),
        (padded_constant_array, (0.7,)),
        (sorted_rows, (_M,)),
        (partitioned, (_M,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_tangent_matches_finite_differences_and_the_vjp(f, args):
    _check(f, *args)


@pytest.mark.parametrize(
    ("f", "x"),
    [
        (sorted_rows, np.array([[2.0, 1.0, 1.0], [2.0, 1.0, 0.0], [2.0, 3.0, 1.0]])),
        (partitioned, np.array([[1.0, 1.0, 0.5], [1.0, 0.5, 1.0]])),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_ties_permute_the_tangent_as_the_vjp_permutes_the_cotangent(f, x):
    """At ties the result has no derivative; the tangent takes the same tie choice as the VJP (dot-product test)."""
    _check(f, x, differences=False)


def sorted_weighted(x):
    return np.sum(np.sort(x) ** 3 * np.array([1.0, 2.0, 3.0, 4.0]))


def partitioned_weighted(x):
    return np.sum(np.partition(x, 2) ** 3 * np.array([1.0, 2.0, 3.0, 4.0]))


def joined_squares(x):
    return np.sum(np.concatenate((x**2, np.arange(2), np.flip(x))) ** 2)


def grid_squares(x):
    a, b = np.meshgrid(x, np.arange(3))
    return np.sum((a * b + np.pad(x, 1, mode="reflect")[1:-1]) ** 2)


_SECOND = [sorted_weighted, partitioned_weighted, joined_squares, grid_squares]


@pytest.mark.parametrize("f", _SECOND, ids=lambda f: f.__name__)
def test_hessian_vector_products_through_the_tangent_code(f):
    """Reverse over forward: the tangent code is differentiated again."""
    x, v = np.array([0.3, -1.2, 0.8, 2.0]), np.array([0.5, 1.0, -0.7, 0.2])
    eps = 1e-6
    expected = (chad.grad(f)(x + eps * v) - chad.grad(f)(x - eps * v)) / (2 * eps)
    assert_close(chad.hvp(f, (x,), (v,)), expected, 1e-5, 1e-6, f.__name__)
