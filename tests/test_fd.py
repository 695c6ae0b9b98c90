"""The finite-difference helpers themselves (`fd.py`), on closed-form gradients.

No chadpy here: these check that `central_diff`, `inner`, `assert_close`, `assert_same`
and `assert_same_value` handle floats, NumPy scalars and arrays, tuples, lists and
dicts (nested too) as the gradient tests rely on.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from tests.support.fd import (
    assert_close,
    assert_same,
    assert_same_value,
    central_diff,
    inner,
    rand_array,
    rand_float,
    rand_list,
)

# ====================================================================== central_diff


def quad_form(A, x):
    return x @ A @ x


def list_poly(xs, c):
    return sum(v**3 for v in xs) * c


def dict_fn(d, x):
    return d["a"] * d["b"] * x + math.sin(d["c"])


def nested_fn(p):
    return p["w"][0] @ p["w"][1] + sum(p["xs"]) * p["t"][0] + np.sum(p["M"] ** 2)


def mixed_discrete(p, n):
    return p[0] * n + p[1] ** 2


def test_array_gradient_has_shape_and_dtype():
    A = rand_array(1, (3, 3))
    x = rand_array(2, 3)
    gx = central_diff(quad_form, (A, x), 1)
    assert type(gx) is np.ndarray and gx.shape == (3,) and gx.dtype == np.float64
    assert_close(gx, (A + A.T) @ x, rtol=1e-8, atol=1e-9)
    gA = central_diff(quad_form, (A, x), 0)
    assert gA.shape == (3, 3)
    assert_close(gA, np.outer(x, x), rtol=1e-8, atol=1e-9)


def test_matrix_and_higher_rank_arrays():
    X = rand_array(3, (2, 3, 2))
    g = central_diff(lambda X: np.sum(np.sin(X)), (X,), 0)
    assert g.shape == (2, 3, 2)
    assert_close(g, np.cos(X), rtol=1e-8, atol=1e-9)


def test_zero_dimensional_array_and_numpy_scalar():
    g = central_diff(lambda a: float(a) ** 2, (np.array(1.5),), 0)
    assert type(g) is np.ndarray and g.shape == ()
    assert_close(g, np.array(3.0), rtol=1e-8, atol=1e-9)
    g = central_diff(lambda s: s**3, (np.float64(2.0),), 0)
    assert type(g) is np.float64
    assert abs(g - 12.0) < 1e-6


def test_float32_array_keeps_its_dtype():
    x = np.array([0.5, -1.0], dtype=np.float32)
    g = central_diff(lambda x: float(np.sum(x.astype(np.float64) ** 2)), (x,), 0)
    assert g.dtype == np.float32


def test_list_gradient():
    xs = rand_list(4, 5)
    g = central_diff(list_poly, (xs, 2.0), 0)
    assert type(g) is list and len(g) == 5
    assert all(type(v) is float for v in g)
    assert_close(g, [6.0 * v * v for v in xs], rtol=1e-8, atol=1e-9)
    assert_close(central_diff(list_poly, (xs, 2.0), 1), sum(v**3 for v in xs), rtol=1e-8, atol=1e-9)


def test_dict_gradient():
    d = {"a": 1.5, "b": -2.0, "c": 0.3}
    g = central_diff(dict_fn, (d, 0.5), 0)
    assert type(g) is dict and list(g) == ["a", "b", "c"]
    assert_close(g, {"a": -1.0, "b": 0.75, "c": math.cos(0.3)}, rtol=1e-8, atol=1e-9)


def test_nested_structures():
    p = {
        "w": (rand_array(5, 3), rand_array(6, 3)),
        "xs": rand_list(7, 2),
        "t": (0.5, 3),
        "M": rand_array(8, (2, 2)),
    }
    g = central_diff(nested_fn, (p,), 0)
    expected = {
        "w": (p["w"][1], p["w"][0]),
        "xs": [0.5, 0.5],
        "t": (sum(p["xs"]), None),
        "M": 2.0 * p["M"],
    }
    assert_close(g, expected, rtol=1e-8, atol=1e-9)


def test_discrete_parts_get_none():
    assert central_diff(mixed_discrete, ((2.0, 3.0), 4), 1) is None
    assert_close(central_diff(mixed_discrete, ((2.0, 3.0), 4), 0), (4.0, 6.0), rtol=1e-8, atol=1e-9)
    for discrete in (3, True, "s", None, np.int64(2), np.array([1, 2]), np.array([True])):
        assert central_diff(lambda x, d: x * 2.0, (1.0, discrete), 1) is None


def test_arguments_are_not_mutated():
    A = rand_array(9, (2, 2))
    xs = rand_list(10, 3)
    d = {"a": 1.0, "b": 2.0, "c": 3.0}
    saved = copy.deepcopy((A, xs, d))
    central_diff(lambda A: np.sum(A**2), (A,), 0)
    central_diff(list_poly, (xs, 1.0), 0)
    central_diff(dict_fn, (d, 1.0), 0)
    assert_same((A, xs, d), saved)


def test_numpy_scalar_result_is_accepted():
    x = rand_array(11, 4)
    g = central_diff(lambda x: np.sum(x**2), (x,), 0)  # f returns np.float64
    assert_close(g, 2.0 * x, rtol=1e-8, atol=1e-9)


def test_unsupported_argument_type():
    with pytest.raises(TypeError, match="set"):
        central_diff(lambda s: 1.0, ({1.0},), 0)


# ====================================================================== inner


def test_inner():
    a = rand_array(12, (2, 3))
    b = rand_array(13, (2, 3))
    assert inner(a, b) == pytest.approx(float(np.sum(a * b)))
    assert inner([1.0, 2.0], [3.0, 4.0]) == 11.0
    assert inner({"x": 2.0, "y": (1.0, 3)}, {"x": 0.5, "y": (2.0, None)}) == 3.0
    assert inner((np.array([1.0, 2.0]), 3.0), (np.array([1.0, 1.0]), 2.0)) == 9.0


# ====================================================================== assert_close, assert_same, assert_same_value


def test_assert_close_structures():
    assert_close([1.0, np.array([2.0])], [1.0 + 1e-9, np.array([2.0])])
    assert_close({"a": 1.0}, {"a": 1.0})
    with pytest.raises(AssertionError, match="keys"):
        assert_close({"a": 1.0}, {"b": 1.0})
    with pytest.raises(AssertionError, match="list"):
        assert_close((1.0,), [1.0])
    with pytest.raises(AssertionError, match="shape"):
        assert_close(np.zeros(3), np.zeros((3, 1)))
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(np.zeros(3, dtype=np.float32), np.zeros(3))
    with pytest.raises(AssertionError, match="ndarray"):
        assert_close([0.0, 0.0], np.zeros(2))
    with pytest.raises(AssertionError, match=r"1 of 3 elements differ, first at \(1,\)"):
        assert_close(np.array([1.0, 2.1, 3.0]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(AssertionError, match="not finite"):
        assert_close(np.array([np.nan]), np.array([1.0]))


def test_assert_close_scalar_types():
    with pytest.raises(AssertionError, match="expected a float"):
        assert_close(np.float64(1.0), 1.0)  # a float argument's gradient is exactly a float
    assert_close(1.0, np.float64(1.0))  # a NumPy scalar's may be either
    assert_close(np.float64(1.0), np.float64(1.0))
    with pytest.raises(AssertionError):
        assert_close(np.array(1.0), np.float64(1.0))


def test_assert_same():
    assert_same(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    assert_same({"a": [1.0, (2.0, None)]}, {"a": [1.0, (2.0, None)]})
    assert_same(np.array([1, 2]), np.array([1, 2]))
    with pytest.raises(AssertionError, match="dtype"):
        assert_same(np.array([1.0, 2.0], dtype=np.float32), np.array([1.0, 2.0]))
    with pytest.raises(AssertionError, match="shape"):
        assert_same(np.zeros((1, 2)), np.zeros(2))
    with pytest.raises(AssertionError):
        assert_same(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-15]))
    with pytest.raises(AssertionError, match="type"):
        assert_same(np.float64(1.0), 1.0)
    with pytest.raises(AssertionError):
        assert_same([1.0], (1.0,))
    with pytest.raises(AssertionError, match="keys"):
        assert_same({"a": 1.0}, {"a": 1.0, "b": 2.0})
    with pytest.raises(AssertionError):
        assert_same("a", "b")


def test_assert_same_value_relaxes_only_scalar_float_types():
    assert_same_value(np.float64(2.5), 2.5)
    assert_same_value(2.5, np.float64(2.5))
    assert_same_value((np.float64(1.0), [2.0]), (1.0, [np.float64(2.0)]))
    assert_same_value(float("nan"), np.float64("nan"))
    with pytest.raises(AssertionError):
        assert_same_value(np.float64(2.5), 2.5 + 1e-15)
    with pytest.raises(AssertionError, match="ndarray"):
        assert_same_value(np.float64(1.0), np.array(1.0))
    with pytest.raises(AssertionError, match="type"):
        assert_same_value(1, 1.0)


# ====================================================================== seeded inputs


def test_seeded_inputs_are_deterministic():
    assert_same(rand_array(3, (2, 2)), rand_array(3, (2, 2)))
    assert rand_list(4, 3) == rand_list(4, 3)
    assert rand_float(5) == rand_float(5) == rand_list(5, 1)[0]
    assert all(type(v) is float for v in rand_list(6, 4))


def test_signed_inputs_stay_away_from_zero():
    v = rand_array(7, 200, 0.2, 1.0, signed=True)
    assert np.all(np.abs(v) >= 0.2) and np.any(v < 0.0) and np.any(v > 0.0)
