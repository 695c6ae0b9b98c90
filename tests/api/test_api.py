"""The entry points: `grad`, `value_and_grad`, `vjp`, `defvjp`, `reverse`, of functions, primitives, methods and
the derivatives chadpy made."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import scipy.special

import chadpy as chad
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff

# ====================================================================== 5. decorated functions and derivatives


def fourth_power(x):
    return x**4


def negated(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return -fn(x)

    return wrapper


@negated
def negated_cube(x):
    return x**3


def calls_a_derivative(x):
    return DERIVATIVE(x) * x


DERIVATIVE = chad.grad(fourth_power)


def test_a_wraps_decorator_is_differentiated_as_called():
    assert_grad_matches_fd(negated_cube, (2.0,))
    assert chad.grad(negated_cube)(2.0) == -12.0


def test_a_derivative_is_differentiated_again():
    """grad of grad, and grad of a function calling a gradient chadpy made at module level: d/dx 4x^3 = 12x^2,
    d/dx (4x^3 * x) = 16x^3 (closed forms)."""
    assert chad.grad(chad.grad(fourth_power))(2.0) == pytest.approx(48.0, rel=1e-12)
    assert chad.grad(calls_a_derivative)(2.0) == pytest.approx(128.0, rel=1e-12)


# ====================================================================== 6-9. the API


def expit_twice(x):
    return scipy.special.expit(x) * 2.0


def expit_sum(v):
    return np.sum(scipy.special.expit(v))


@pytest.fixture
def expit_rule():
    builtin = chad.rules.registry.PRIMITIVES.pop(scipy.special.expit, None)  # a user rule replaces chadpy's
    chad.defvjp(scipy.special.expit, lambda d, y, x: [d * y * (1 - y)])
    yield
    del chad.rules.registry.PRIMITIVES[scipy.special.expit]
    if builtin is not None:
        chad.rules.registry.PRIMITIVES[scipy.special.expit] = builtin


def test_defvjp_of_a_ufunc(expit_rule):
    assert_grad_matches_fd(expit_twice, (0.3,))
    assert_grad_matches_fd(expit_sum, (np.array([0.1, -0.2, 2.0]),))


def with_dict_aux(x):
    return x * x, {"a": x, "b": [x, 2.0]}


def with_list_aux(x):
    return x * x, [x, 2.0 * x]


@pytest.mark.parametrize("fn", [with_dict_aux, with_list_aux])
def test_has_aux_of_any_structure(fn):
    g, aux = chad.grad(fn, has_aux=True)(0.3)
    assert g == pytest.approx(0.6) and aux == fn(0.3)[1]
    out, pullback, aux = chad.vjp(fn, 0.3, has_aux=True)
    assert out == pytest.approx(0.09) and pullback(1.0) == (pytest.approx(0.6),) and aux == fn(0.3)[1]


@pytest.mark.parametrize(("fn", "x"), [(math.sin, 0.3), (math.exp, -1.2), (np.sum, np.array([1.0, 2.0, 3.0]))])
def test_grad_of_a_primitive(fn, x):
    assert_close(chad.grad(fn)(x), central_diff(fn, (x,), 0))


def test_vjp_of_a_primitive():
    x = np.array([0.3, -1.0])
    y, pullback = chad.vjp(np.tanh, x)
    assert_close(y, np.tanh(x))
    assert_close(pullback(np.ones(2))[0], 1.0 - np.tanh(x) ** 2)


@pytest.mark.parametrize("value", [42, "f", None])
def test_grad_of_a_non_function_is_a_clear_error(value):
    with pytest.raises(chad.ChadError, match="differentiates functions"):
        chad.grad(value)


class Model:
    def __init__(self, scale):
        self.scale = scale

    @chad.reverse
    def predict(self, x):
        return x * 2.0 + math.sin(x)

    def loss(self, x, y):
        return (x - y) ** 2 * 3.0


def test_reverse_on_a_method():
    m = Model(1.5)
    assert m.predict(0.5) == 0.5 * 2.0 + math.sin(0.5)
    assert m.predict.grad(0.5) == pytest.approx(2.0 + math.cos(0.5))
    assert Model.predict(m, 0.5) == m.predict(0.5)


def test_grad_of_a_bound_method():
    m = Model(1.5)
    assert chad.grad(m.loss, argnums=(0, 1))(1.0, 0.25) == (pytest.approx(4.5), pytest.approx(-4.5))


class Quadratic:
    """A callable object: chadpy differentiates its `__call__`, the object's attributes data."""

    def __init__(self, k):
        self.k = k

    def __call__(self, x, y=1.0):
        return self.k * x * x * y


def test_grad_of_a_callable_object():
    """`chad.grad(obj)` of an instance with `__call__` is the gradient of that method with the object
    bound, as for a bound method (it was "no rule ... register its derivative with chadpy.defvjp")."""
    q = Quadratic(3.0)
    assert chad.grad(q)(2.0) == 12.0
    assert chad.grad(q, argnums=(0, 1))(2.0, 0.5) == (6.0, 12.0)
    value, pullback = chad.vjp(q, 2.0)
    assert value == 12.0 and pullback(1.0) == (12.0,)
    assert "def __call___chad" in chad.source(q, 2.0)


def test_an_object_without_call_is_a_clear_error():
    with pytest.raises(chad.ChadError, match="chadpy differentiates functions; got the object"):
        chad.grad(object())(1.0)


def test_grad_of_closures_of_one_code_compiles_their_python_once():
    # `grad(f)` can be differentiated again (it is Python chadpy reads): that text is compiled once per code of f
    # and argnums, not once per closure
    def make(c):
        return lambda x: c * x**2

    first, second = chad.grad(make(2.0)), chad.grad(make(3.0))
    assert first.__chad_code__.__code__ is second.__chad_code__.__code__
    assert chad.grad(first)(1.0) == 4.0 and chad.grad(second)(1.0) == 6.0
