"""A derivative is made once per code and kinds of what the closure holds, not once per function object
(`api/sharing.py`): a closure made afresh takes the derivative made for an earlier one, bound to its own arrays.
Each test counts the transformations (`build` calls) and checks the values against closed forms."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import chadpy as chad
from chadpy import ChadError
from chadpy.api import forward as forward_api
from chadpy.api import plans as plans_api
from chadpy.api import sharing


@pytest.fixture
def builds(monkeypatch):
    """The number of derivatives transformed and compiled since the test began (with no derivative shared from
    an earlier test)."""
    monkeypatch.setattr(sharing, "_TEMPLATES", {})
    count = [0]

    def counting(module):
        made = module.build

        def build(*args, **kwargs):
            count[0] += 1
            return made(*args, **kwargs)

        monkeypatch.setattr(module, "build", build)

    counting(plans_api)
    counting(forward_api)
    return count


def make_loss(X, y):
    def loss(w):
        r = X @ w - y
        return np.sum(r * r)

    return loss


def least_squares_gradient(X, y, w):
    return 2.0 * X.T @ (X @ w - y)


def _data(seed, n=6, d=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal(n), rng.standard_normal(d)


def test_a_closure_made_afresh_reuses_the_derivative_with_its_own_arrays(builds):
    for seed in range(4):  # other arrays, other shapes: one transformation
        X, y, w = _data(seed, n=5 + seed)
        g = chad.grad(make_loss(X, y))(w)
        np.testing.assert_allclose(g, least_squares_gradient(X, y, w), rtol=1e-12)
    assert builds[0] == 1


def test_a_lambda_made_in_a_loop_is_derived_once(builds):
    for seed in range(3):
        X, y, w = _data(seed)
        g = chad.grad(lambda v: np.sum((X @ v - y) ** 2))(w)  # noqa: B023  this iteration's X and y, as meant
        np.testing.assert_allclose(g, least_squares_gradient(X, y, w), rtol=1e-12)
    assert builds[0] == 1


def make_scaled(c):
    def f(x):
        return c * np.sum(x * x)

    return f


def test_a_captured_number_is_part_of_the_key(builds):
    x = np.array([1.0, -2.0])
    assert np.allclose(chad.grad(make_scaled(2.0))(x), 4.0 * x)
    assert np.allclose(chad.grad(make_scaled(3.0))(x), 6.0 * x)
    assert np.allclose(chad.grad(make_scaled(3.0))(x), 6.0 * x)
    assert builds[0] == 2  # 2.0 and 3.0 (a number may be folded into the code); 3.0 again is shared


def test_a_captured_array_of_another_rank_or_dtype_is_derived_again(builds):
    w = np.array([0.5, -1.0, 2.0])
    X, y = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0])
    chad.grad(make_loss(X, y))(w)
    chad.grad(make_loss(X.astype(np.float32), y))(w)  # another dtype
    got = chad.grad(make_loss(X[0], 1.0))(w)  # a vector, and a number for y: another rank, another kind
    assert np.allclose(got, 2.0 * X[0] * (X[0] @ w - 1.0)) and np.any(got)
    assert builds[0] == 3


def make_aliased(a, b):
    def f(x):
        a[0] = x  # a write into the captured array: read back through b when they are one array
        return b[0] * x

    return f


def test_two_names_of_one_array_are_not_two_arrays(builds):
    assert chad.grad(make_aliased(np.zeros(2), np.full(2, 5.0)))(3.0) == pytest.approx(5.0)
    with pytest.raises(ChadError, match="read again later"):  # not the derivative made for two arrays
        one = np.zeros(2)
        chad.grad(make_aliased(one, one))(3.0)
    assert builds[0] == 2


def make_counter():
    calls = 0

    def f(x):
        nonlocal calls
        calls += 1  # a statement run as written: it holds the closure's cells
        return x * x

    return f, lambda: calls


def test_a_closure_whose_code_holds_its_cells_is_derived_for_itself(builds):
    (f, f_calls), (g, g_calls) = make_counter(), make_counter()
    assert chad.grad(f)(3.0) == 6.0 and chad.grad(f)(3.0) == 6.0
    assert chad.grad(g)(2.0) == 4.0
    assert (f_calls(), g_calls()) == (2, 1)  # each counter counts its own calls
    assert builds[0] == 2


def test_a_cell_rebound_after_the_first_gradient_is_read_again(builds):
    X, y, w = _data(3)

    def make():
        data = X

        def f(v):
            return np.sum((data @ v - y) ** 2)

        def rebind(new):
            nonlocal data
            data = new

        return f, rebind

    f, rebind = make()
    g = chad.grad(f)
    np.testing.assert_allclose(g(w), least_squares_gradient(X, y, w), rtol=1e-12)
    rebind(2.0 * X)
    np.testing.assert_allclose(g(w), least_squares_gradient(2.0 * X, y, w), rtol=1e-12)
    assert builds[0] == 1  # the rebound closure found the shared derivative and bound it to the new array


def test_jvp_and_hvp_of_fresh_closures_are_shared(builds):
    for seed in range(3):
        X, y, w = _data(seed)
        v = np.ones_like(w)
        _, tangent = chad.jvp(make_loss(X, y), (w,), (v,))
        assert tangent == pytest.approx(least_squares_gradient(X, y, w) @ v, rel=1e-12)
        np.testing.assert_allclose(chad.hvp(make_loss(X, y), (w,), (v,)), 2.0 * X.T @ X @ v, rtol=1e-12)
    assert builds[0] == 2  # one forward form, one Hessian-vector product


def test_the_shared_derivative_keeps_no_array_of_a_closure(builds):
    X, y, w = _data(5)
    alive = weakref.ref(X)
    chad.grad(make_loss(X, y))(w)
    del X
    gc.collect()
    assert alive() is None


def test_a_fresh_closure_and_its_gradient_leave_no_reference_cycle(builds):
    # freed when the last reference goes, not by the collector's scans: a cycle per closure (a plan held by its own
    # cache; the derivative's functions in the module they read) made every fresh closure pay for collections
    X, y, w = _data(6)
    chad.grad(make_loss(X, y))(w)  # the template
    gc.collect()
    gc.disable()
    try:
        for seed in range(3):
            X, y, w = _data(seed)
            np.testing.assert_allclose(chad.grad(make_loss(X, y))(w), least_squares_gradient(X, y, w), rtol=1e-12)
            np.testing.assert_allclose(chad.grad(make_loss(X, y), argnums=0)(w), least_squares_gradient(X, y, w))
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert builds[0] == 1


SHARED_DATA = np.array([1.0, 2.0, 3.0])


def _reads_the_global(v):
    return np.sum(SHARED_DATA * v)


def make_both(data):
    def f(v):
        return np.sum(data * v) + _reads_the_global(v)

    return f


def test_a_cell_holding_a_global_array_leaves_the_global_as_it_is(builds):
    # the first closure's cell holds the module's array: the derivative reads one object under two names, and
    # rebinding the cell's for the next closure must not move the global's too
    w = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(chad.grad(make_both(SHARED_DATA))(w), 2.0 * SHARED_DATA)
    other = np.array([10.0, 20.0, 30.0])
    np.testing.assert_allclose(chad.grad(make_both(other))(w), other + SHARED_DATA)
