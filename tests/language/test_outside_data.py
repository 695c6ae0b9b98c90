"""Data read from outside the function (issue 14): module globals, closure cells and defaults holding
arrays, containers, objects and random generators. They carry no derivative, are read when the
derivative runs (never copied into it), and a rebinding rebuilds the derivative."""

import functools
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.optimize
import scipy.special

import chadpy as chad
from chadpy.errors import ChadError
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff
from tests.support.paths import ROOT

RNG = np.random.default_rng(7)
X = RNG.normal(size=(20, 3))
Y = (X @ np.array([1.0, -2.0, 0.5]) + 0.3 * RNG.normal(size=20) > 0).astype(float)


def logistic_loss(w):
    """autograd's and JAX's example style: the data are module-level names."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(Y * np.log(p) + (1.0 - Y) * np.log(1.0 - p)) + 0.01 * np.sum(w * w)


def test_a_loss_reading_module_level_data():
    assert_grad_matches_fd(logistic_loss, (np.array([0.1, -0.2, 0.3]),))


def test_scipy_minimize_with_chadpy_jacobian():
    w0 = np.zeros(3)
    result = scipy.optimize.minimize(logistic_loss, w0, jac=chad.grad(logistic_loss), method="BFGS")
    assert result.success
    assert np.linalg.norm(chad.grad(logistic_loss)(result.x)) < 1e-5
    reference = scipy.optimize.minimize(logistic_loss, w0, method="BFGS")  # finite-difference jacobian
    assert_close(result.fun, reference.fun, rtol=1e-6, atol=1e-8)


SCALE = np.array([1.0, 2.0])


def scaled_norm(v):
    return np.sum((SCALE * v) ** 2)


def test_a_global_array_changed_between_two_calls():
    global SCALE
    v = np.array([0.5, -1.0])
    g = chad.grad(scaled_norm)
    assert_close(g(v), 2 * SCALE**2 * v)
    SCALE[1] = 3.0  # mutated in place: the derivative reads the same array
    assert_close(g(v), 2 * np.array([1.0, 9.0]) * v)
    SCALE = np.array([0.5, 0.5])  # rebound: the derivative is rebuilt
    assert_close(g(v), 2 * 0.25 * v)
    SCALE = np.array([[1.0, 2.0], [0.5, 1.0]])  # another rank: rebuilt for it
    assert_close(g(v), central_diff(scaled_norm, (v,), 0))
    SCALE = np.array([1.0, 2.0])


def test_an_array_that_changes_rank_in_place_rebuilds_the_derivative():
    global SCALE
    SCALE = np.array([1.0, 2.0, 3.0, 4.0])
    v = np.ones(2)
    g = chad.grad(scaled_norm)
    with pytest.raises(ValueError):  # shapes (4,) and (2,) do not broadcast: Python says so too
        g(v)
    SCALE.shape = (2, 2)  # same object, now rank 2
    assert_close(g(v), central_diff(scaled_norm, (v,), 0))
    SCALE = np.array([1.0, 2.0])


def make_loss(A, b):
    """A factory: the loss closes over its data."""

    def loss(w):
        r = A @ w - b
        return 0.5 * np.dot(r, r)

    return loss


def test_a_closure_over_data():
    A, b = X[:5], Y[:5]
    loss = make_loss(A, b)
    w = np.array([0.2, 0.1, -0.4])
    assert_close(chad.grad(loss)(w), A.T @ (A @ w - b))
    assert_grad_matches_fd(loss, (w,))


LAYERS = [np.eye(2), np.array([[0.5, 1.0], [-1.0, 0.25]])]
TABLE = {"shift": np.array([0.1, -0.2]), "gain": 1.5}
PAIR = (np.array([1.0, 2.0]), 3.0)


def through_containers(x):
    h = x
    for layer in LAYERS:
        h = np.tanh(layer @ h + TABLE["shift"])
    a, c = PAIR
    return TABLE["gain"] * np.sum(h * a) + c * np.sum(x)


def with_a_default(x, weights=np.array([0.5, -1.5])):  # noqa: B008  a default array is data
    return np.sum(weights * np.sin(x))


def test_lists_dicts_tuples_and_defaults_of_arrays():
    x = np.array([0.3, -0.7])
    assert_grad_matches_fd(through_containers, (x,))
    assert_grad_matches_fd(with_a_default, (x,))


def array_methods(w):
    n = X.shape[0]
    return np.sum(X.T @ (X @ w)) / n + X.sum() * w[0] + X.mean(axis=0) @ w


def test_attributes_and_methods_of_an_outside_array():
    assert_grad_matches_fd(array_methods, (np.array([0.1, 0.2, -0.3]),))


RS = np.random.RandomState(0)
GEN = np.random.default_rng(0)


def noisy(w):
    e = RS.randn(2) + GEN.standard_normal(2) + np.random.normal(size=2)
    return np.sum(w * e)


def test_random_draws_are_data():
    w = np.array([1.0, -1.0])
    for seed in (0, 1):
        RS.seed(seed)
        GEN.bit_generator.state = np.random.default_rng(seed).bit_generator.state
        np.random.seed(seed)
        g = chad.grad(noisy)(w)
        expected = (
            np.random.RandomState(seed).randn(2)
            + np.random.default_rng(seed).standard_normal(2)
            + np.random.RandomState(seed).normal(size=2)
        )
        assert_close(g, expected)


HISTORY = []
BEST = None


def appends_to_outside_data(x):
    HISTORY.append(x)
    return x * 2.0


def sets_a_global(x):
    global BEST
    loss = np.sum(x**3)
    BEST = loss
    return loss


class _Tracked:
    def __init__(self):
        self.history, self.best, self.cache = [], np.inf, None

    def objective(self, x):
        loss = np.sum(x**2)
        self.history.append(loss)
        if loss < self.best:
            self.best = loss
        self.cache = x
        return loss * 2

    def logged_by_a_helper(self, x):
        loss = np.sum(x**2)
        self._log(loss)
        return loss

    def _log(self, v):
        self.history.append(v)

    def read_back(self, x):
        self.cache = x * 2
        return np.sum(self.cache)

    def read_back_by_a_method(self, x):
        self.cache = x * 2
        return self._total()

    def _total(self):
        return np.sum(self.cache)


def _last_logged():
    return HISTORY[-1]


def read_back_by_a_helper(x):
    loss = np.sum(x**3)
    HISTORY.append(loss)
    return loss + _last_logged()


def read_back_in_a_loop(x):
    acc = 0.0
    for i in range(2):
        if HISTORY:
            acc = acc + 1.0
        HISTORY.append(x[i] * 2)
    return np.sum(x) + acc


def test_a_differentiated_value_stored_into_outside_data_not_read_again():
    """Stored as in the plain call (its primal value), the derivative unchanged: a history list, a global, the
    instance of a bound method (`self.history.append(loss)`, `self.best = loss`, `self.cache = x`); an attribute
    of the instance read again is a variable of the call, given back at its end."""
    HISTORY.clear()
    assert chad.grad(appends_to_outside_data)(1.5) == 2.0
    assert HISTORY == [1.5]
    x = np.array([1.0, 2.0])
    assert_close(chad.grad(sets_a_global)(x), 3 * x**2)
    assert BEST == 9.0
    tracked = _Tracked()
    value, grad = chad.value_and_grad(tracked.objective)(x)
    assert value == 10.0
    assert_close(grad, 4 * x)
    assert tracked.history == [5.0] and tracked.best == 5.0 and tracked.cache is x
    value, grad = chad.value_and_grad(tracked.read_back)(x)  # read again: a variable of the call (`local_state`)
    assert value == 6.0
    assert_close(grad, np.full(2, 2.0))
    assert_close(tracked.cache, 2 * x)


BUFFER = np.zeros(2)
SAME_BUFFER = BUFFER  # another name of one array
BUFFER_HEAD = BUFFER[:1]  # a view of it


def read_back_by_another_name(x):
    BUFFER[0] = x[0]
    return SAME_BUFFER[0] * x[1]


def read_back_through_a_view(x):
    BUFFER[0] = x[0]
    return BUFFER_HEAD[0] * x[1]


def _times_buffer_head(v):
    return SAME_BUFFER[0] * v


def read_back_by_a_helper_under_another_name(x):
    BUFFER[0] = x[0]
    return _times_buffer_head(x[1])


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (_Tracked().logged_by_a_helper, "which the caller gave"),
        (_Tracked().read_back_by_a_method, "read again later"),
        (read_back_by_a_helper, "which `_last_logged` may read"),
        (read_back_in_a_loop, "read again later"),
        # read back under another name of the object: once a silent wrong gradient ([0, 1] for the true [2, 1])
        (read_back_by_another_name, "read again later"),
        (read_back_through_a_view, "read again later"),
        (read_back_by_a_helper_under_another_name, "which `_times_buffer_head` may read"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_a_differentiated_value_stored_and_read_again_is_refused(fn, message):
    """What the call reads back would carry no derivative: refused where it may be read again and is not followed
    (by a method of `self`, by a caller, by another function, outside data in a loop around the store)."""
    HISTORY.clear()
    with pytest.raises(ChadError, match=message):
        chad.grad(fn)(np.array([1.0, 2.0]))


def weighted(a, x, scale=1.0):
    return scale * np.sum(a * x**2)


WEIGHTS = np.array([1.0, 2.0])
WEIGHTED = functools.partial(weighted, WEIGHTS, scale=3.0)


def calls_a_partial(x):
    return WEIGHTED(x) + WEIGHTED(x * 2.0, scale=0.5)


def test_functools_partial_differentiated():
    x = np.array([0.5, -1.0])
    assert_close(chad.grad(WEIGHTED)(x), 3.0 * 2 * WEIGHTS * x)
    assert_close(chad.grad(functools.partial(math.pow, 2.0))(3.0), 8 * math.log(2.0))
    twice = functools.partial(functools.partial(weighted, WEIGHTS), scale=0.25)  # functools flattens it
    assert_close(chad.grad(twice)(x), 0.25 * 2 * WEIGHTS * x)
    assert_grad_matches_fd(WEIGHTED, (x,))


def test_functools_partial_called_inside():
    x = np.array([0.5, -1.0])
    assert_close(chad.grad(calls_a_partial)(x), 3.0 * 2 * WEIGHTS * x + 0.5 * 2 * WEIGHTS * 4 * x)
    assert_grad_matches_fd(calls_a_partial, (x,))


@pytest.mark.slow  # 1.6 s (an example script in a subprocess): the whole suite runs it, the subset leaves it
def test_the_scipy_example_runs():
    root = str(ROOT)
    path = os.path.join(root, "examples", "scipy_logistic.py")
    subprocess.run([sys.executable, path], check=True, capture_output=True, cwd=root)


class _Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * x * x

    def total(self, x):
        return self.k + x


_SCALER = _Scaler(1.5)


def calls_an_outside_callable_object(x):
    return _SCALER(x) + _SCALER.total(x) * _SCALER.k


def test_an_outside_object_with_call_is_data_and_callable():
    """A module-level object whose class has `__call__` was taken for a function (`callable`), so
    `O(x)`, `O.total(x)` and `O.k` were all rejected (random programs with outside_callable).
    f(x) = 1.5 x^2 + 1.5 (1.5 + x): f'(x) = 3 x + 1.5."""
    assert_grad_matches_fd(calls_an_outside_callable_object, (0.8,))
