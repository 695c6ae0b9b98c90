"""Tangent rules (forward mode) of NumPy's functions and reductions where the registry walk
(tests/rules/test_rules.py) cannot reach: tuples with constant elements (whose tangents hold None), methods and
statements (`x.item()`, `x.tolist()`, `np.add.at`), the helpers tangent code calls (`interp_slope`,
`laid_out_weights`), the points without a derivative (the VJP's subgradient), and tangent code differentiated
again (reverse over forward, forward over forward)."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from chadpy.runtime import numpy as numpy_runtime
from chadpy.runtime import reductions as reductions_runtime
from tests.support.fd import assert_close, inner


def _moved(args: tuple, tangents: tuple, eps: float) -> tuple:
    return tuple(a + eps * np.asarray(t) if isinstance(a, np.ndarray) else a + eps * t for a, t in zip(args, tangents))


def _difference(plus: object, minus: object, width: float) -> object:
    if isinstance(plus, list):
        return [_difference(p, m, width) for p, m in zip(plus, minus)]
    return (np.asarray(plus) - np.asarray(minus)) / width


def _close(actual: object, expected: object) -> None:
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{actual!r} for {expected!r}"
        for a, e in zip(actual, expected):
            _close(a, e)
    else:
        assert np.shape(actual) == np.shape(expected)
        np.testing.assert_allclose(actual, expected, 1e-6, 1e-7)


def assert_tangent(f, args: tuple, tangents: tuple, dot_test: bool = True) -> object:
    """chad.jvp's tangent within 1e-6 of central differences along the tangents, and <jvp(v), w> = <v, vjp(w)>."""
    value, tangent = chad.jvp(f, args, tangents)
    eps = 1e-6
    _close(tangent, _difference(f(*_moved(args, tangents, eps)), f(*_moved(args, tangents, -eps)), 2 * eps))
    if dot_test:
        assert_dot_product(f, args, tangents, tangent)
    return tangent


def assert_dot_product(f, args: tuple, tangents: tuple, tangent: object) -> None:
    """<jvp(v), w> = <v, vjp(w)> for a random cotangent w (the tangent rule and the VJP take one subgradient)."""
    rng = np.random.default_rng(3)
    value, pullback = chad.vjp(f, *args)
    w = rng.standard_normal(np.shape(value)) if isinstance(value, np.ndarray) else float(rng.standard_normal())
    lhs = inner(tangent, w)
    rhs = sum(inner(t, ct) for t, ct in zip(tangents, pullback(w)) if ct is not None)
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs)), f"<jvp(v), w> = {lhs} but <v, vjp(w)> = {rhs}"


# ====================================================================== sequences with constant elements


@pytest.mark.parametrize(
    "f",
    [
        lambda a, b: np.sum([a, 2.0, b]),
        lambda a, b: np.mean((a, 2, b)),
        lambda a, b: np.max([a, 0.5, b]),
        lambda a, b: np.prod((a, 0.7, b)),
        lambda a, b: np.std([a, 1.0, b]),
        lambda a, b: np.var([a, 1.0, b], ddof=1),
        lambda a, b: np.median([a, 0.1, b, 0.2]),
        lambda a, b: np.linalg.norm((a, -2.0, b)),
        lambda a, b: np.linalg.norm([a, 0.1, b], np.inf),
        lambda a, b: np.array([a, 2.0, b]),
        lambda a, b: np.asarray((a, 2, b)),
        lambda a, b: np.array([[a, 2.0], [b, 1]]),  # nested, an int among them
    ],
)
def test_a_tuple_with_constants_has_zeros_for_their_tangents(f):
    assert_tangent(f, (0.3, -0.6), (1.3, -0.4))


def test_a_tuple_of_arrays_with_a_constant_row():
    x = np.array([0.3, -0.2, 0.9])
    assert_tangent(lambda a: np.mean([a, np.ones(3), 2 * a], axis=0), (x,), (np.array([1.0, 2.0, -1.0]),))
    assert_tangent(lambda a: np.max((a, np.zeros(3)), axis=0), (x,), (np.array([1.0, 2.0, -1.0]),))


# ====================================================================== methods and statements


def added_at(x, v):
    y = x * 1.0
    np.add.at(y, [0, 0, 2], v)  # position 0 named twice
    return y * y


def test_item_tolist_and_add_at():
    assert_tangent(lambda a: np.sin(a).item() * 2.0, (np.array([[0.5]]),), (np.array([[2.0]]),))
    assert_tangent(lambda a: a.item() * 2.0 + a.tolist(), (np.float64(0.5),), (2.0,))  # a number's tangent: a float
    tangent = assert_tangent(lambda a: (a * a).tolist(), (np.array([[0.5, -1.0]]),), (np.array([[2.0, 3.0]]),), False)
    assert tangent == [[2.0, -6.0]]
    v = np.array([1.0, 2.0, 3.0])
    assert_tangent(added_at, (np.arange(4.0), v), (np.array([1.0, -1.0, 0.5, 2.0]), np.array([0.3, 0.2, -0.1])))


# ====================================================================== exact where a formula would divide by zero


@pytest.mark.parametrize("x", [[0.5, 0.0, -2.0, 0.7], [0.0, 0.3, 0.0, 1.1], [0.0, 0.0, 0.0, 0.0]])
def test_products_are_exact_at_zeros(x):
    """One zero: the others' product at it; two: 0 for prod, the running product up to the second for cumprod."""
    x, v = np.array(x), np.array([0.3, -1.2, 0.8, 0.5])
    assert_tangent(np.prod, (x,), (v,))
    assert_tangent(np.cumprod, (x,), (v,))
    assert_tangent(lambda a: np.prod(a.reshape(2, 2), axis=1, keepdims=True), (x,), (v,))
    assert_tangent(lambda a: np.cumprod(a.reshape(2, 2), axis=0), (x,), (v,))


# ====================================================================== where there is no derivative: the VJP's choice


@pytest.mark.parametrize(
    ("f", "x", "v", "expected"),
    [
        (np.max, [1.0, 3.0, 3.0], [1.0, 2.0, 4.0], 3.0),  # ties split equally
        (np.ptp, [2.0, 2.0], [1.0, 5.0], 0.0),  # a constant group: max and min cancel
        (np.median, [1.0, 1.0, 1.0], [1.0, 2.0, 4.0], 2.0),  # the middle of a stable sort
        (np.std, [1.5, 1.5], [1.0, -3.0], 0.0),
        (np.linalg.norm, [0.0, 0.0], [1.0, -3.0], 0.0),
        (lambda x: np.linalg.norm(x, 1), [0.0, -1.0], [1.0, -3.0], 3.0),
        (lambda x: np.linalg.norm(x, 0.5), [0.0, 0.25], [1.0, 1.0], 1.0),
        (lambda x: np.linalg.norm(x, -np.inf), [-2.0, 1.0, 2.0, -1.0], [1.0, 2.0, 3.0, 4.0], -1.0),
        (lambda x: np.linalg.norm(x.reshape(2, 2), 2), [0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0], 0.0),
        (lambda x: np.maximum(x, 1.0), [1.0, 2.0], [4.0, 4.0], [2.0, 4.0]),
        (lambda x: np.fmax(x, np.nan), [1.0, 2.0], [4.0, 3.0], [4.0, 3.0]),
        (np.nan_to_num, [np.nan, 2.0, np.inf], [4.0, 3.0, 1.0], [0.0, 3.0, 0.0]),
    ],
)
def test_tangents_take_the_vjps_subgradient(f, x, v, expected):
    x, v = np.array(x), np.array(v)
    _, tangent = chad.jvp(f, (x,), (v,))
    np.testing.assert_allclose(tangent, expected)
    assert_dot_product(f, (x,), (v,), tangent)


def test_clip_passes_no_derivative_to_its_bounds():
    """As its VJP: the bounds' tangents are not the result's."""
    f = lambda x, lo: np.clip(x, lo, 0.5)  # noqa: E731
    x = np.array([-0.7, 0.1, 0.9])
    _, tangent = chad.jvp(f, (x, -0.5), (np.ones(3), 10.0))
    np.testing.assert_allclose(tangent, [0.0, 1.0, 0.0])


# ====================================================================== the helpers tangent code calls


def test_interp_slope_and_its_cotangents():
    """interp's slope is piecewise constant in x and linear in fp; its cotangents match finite differences."""
    rng = np.random.default_rng(0)
    x, xp, fp = rng.uniform(-1.5, 1.5, (2, 5)), np.array([-1.0, -0.3, 0.2, 1.0]), rng.uniform(-1, 1, 4)
    d = rng.standard_normal((2, 5))
    slope = numpy_runtime.interp_slope(x, xp, fp)
    assert np.all(slope[(x < -1.0) | (x > 1.0)] == 0.0)
    for which, at in ((1, xp), (2, fp)):
        ct = numpy_runtime.interp_slope_ct(d, x, xp, fp, which)
        for k in range(len(at)):
            e = np.zeros(len(at))
            e[k] = 1e-6
            moved = [(xp + e, fp), (xp - e, fp)] if which == 1 else [(xp, fp + e), (xp, fp - e)]
            fd = inner(numpy_runtime.interp_slope(x, *moved[0]) - numpy_runtime.interp_slope(x, *moved[1]), d) / 2e-6
            assert abs(ct[k] - fd) < 1e-6, (which, k)


@pytest.mark.parametrize(
    ("shape", "axis", "weights"), [((2, 3), 1, (3,)), ((2, 3, 4), (2, 0), (4, 2)), ((2, 3), None, (2, 3))]
)
def test_laid_out_weights_cotangent_is_its_transpose(shape, axis, weights):
    rng = np.random.default_rng(1)
    a, w = rng.standard_normal(shape), rng.uniform(0.2, 2.0, weights)
    laid = reductions_runtime.laid_out_weights(w, a, axis)
    d = rng.standard_normal(laid.shape)
    v = rng.standard_normal(weights)
    ct = reductions_runtime.laid_out_weights_ct(d, w, a, axis)
    assert abs(inner(reductions_runtime.laid_out_weights(v, a, axis), d) - inner(v, ct)) < 1e-12


# ====================================================================== tangent code differentiated again

_XP = np.array([-1.0, -0.3, 0.2, 1.0])
_AT = np.linspace(-1.2, 1.2, 7)  # below, inside and above the knots
_W = np.array([0.5, 1.5, 0.7, 1.1])

SECOND_ORDER = {
    "prod": lambda x: np.sum(np.sin(np.prod(x, axis=1))),
    "cumprod": lambda x: np.sum(np.sin(np.cumprod(x, axis=1))),
    "var": lambda x: np.sum(np.sin(np.var(x, axis=0, ddof=1))),
    "std": lambda x: np.sum(np.sin(np.std(x, axis=0))),
    "max": lambda x: np.sum(np.sin(np.max(x, axis=0))),
    "median": lambda x: np.sum(np.sin(np.median(x, axis=0))),
    "norm": lambda x: np.sin(np.linalg.norm(x)),
    "norm 3": lambda x: np.sum(np.sin(np.linalg.norm(x, 3, axis=1))),
    "norm -inf": lambda x: np.sin(np.linalg.norm(x, -np.inf)),
    "norm nuc": lambda x: np.sin(np.linalg.norm(x, "nuc")),
    "norm 2": lambda x: np.sin(np.linalg.norm(x, 2)),
    "average": lambda x: np.sum(np.sin(np.average(x, axis=1, weights=x[0] ** 2 + 1.0))),
    "interp x": lambda x: np.sum(np.sin(np.interp(x, _XP, _W))),
    "interp xp": lambda x: np.sum(np.sin(np.interp(_AT, np.sort(x[0]) * 3.0, x[1]))),
    "maximum": lambda x: np.sum(np.sin(np.maximum(x, 0.1) * x)),
    "clip": lambda x: np.sum(np.sin(np.clip(x, -0.5, 0.5) * x)),
    "dot": lambda x: np.sum(np.sin(np.dot(x, x.T))),
    "where": lambda x: np.sum(np.sin(np.where(x > 0, x * x, x))),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_hessian_vector_products_match_differences_of_gradients(name):
    f = SECOND_ORDER[name]
    rng = np.random.default_rng(2)
    x, v = rng.uniform(-0.9, 0.9, (3, 4)), rng.standard_normal((3, 4))
    gradient = chad.grad(f)
    expected = (gradient(x + 1e-5 * v) - gradient(x - 1e-5 * v)) / 2e-5
    assert_close(chad.hvp(f, (x,), (v,)), expected, 1e-5, 1e-6, name)


def _interp_tangent(xp, fp, dxp, dfp):
    return chad.jvp(lambda xp, fp: np.sum(np.sin(np.interp(_AT, xp, fp))), (xp, fp), (dxp, dfp))[1]


def _average_tangent(a, w, da, dw):
    return chad.jvp(lambda a, w: np.sum(np.sin(np.average(a, axis=(2, 0), weights=w))), (a, w), (da, dw))[1]


@pytest.mark.parametrize(
    ("f", "shapes"),
    [(_interp_tangent, [(4,), (4,)]), (_average_tangent, [(2, 3, 4), (4, 2)])],
    ids=["interp", "average"],
)
def test_forward_over_forward_matches_differences_of_tangents(f, shapes):
    rng = np.random.default_rng(4)
    args = [_XP if shapes[0] == (4,) else rng.standard_normal(shapes[0]), rng.uniform(0.2, 2.0, shapes[1])]
    tangents = [rng.standard_normal(s) for s in shapes]
    moves = [rng.standard_normal(s) for s in shapes]
    zeros = [np.zeros(s) for s in shapes]
    _, second = chad.jvp(f, (*args, *tangents), (*moves, *zeros))
    eps = 1e-6
    plus = f(*(a + eps * m for a, m in zip(args, moves)), *tangents)
    minus = f(*(a - eps * m for a, m in zip(args, moves)), *tangents)
    assert abs(second - (plus - minus) / (2 * eps)) < 1e-6 * (1 + abs(second))
