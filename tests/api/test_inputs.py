"""Inputs a derivative cannot be taken of give an error that says what to pass instead, never a silent None or a
wrong number: masked arrays and other array subclasses, complex, integer, bool and object arrays, ints asked for by
argnums. Messages point at the user's call."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from chadpy.errors import ChadTypeError


def total_of_squares(x):
    return np.sum(x * x)


def sin_times(x):
    return math.sin(x) * x


def quadratic(x):
    return x**2 + 3 * x


MASKED = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
MATRIX = np.matrix(np.eye(3))


def masked_product(x):
    return np.sum(MASKED * x)


def matrix_product(x):
    return np.sum(np.tanh(MATRIX @ x))


def masked_data_only(x):
    return np.sum(x * 2.0) + float(MASKED.sum())  # no derivative flows through the masked array: runs as written


@pytest.mark.parametrize(
    "arg, message",
    [
        (np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0]), r"MaskedArray: pass a plain array, np\.ma\.filled\(x, 0\.0\)"),
        (np.matrix([[1.0, 2.0]]), r"a matrix: pass a plain array, np\.asarray\(x\)"),
        (np.array([1.0 + 1j, 2.0]), r"complex array: pass its real and imaginary parts"),
        (np.array([1.0, 2.0], dtype=object), r"array of objects: pass x\.astype\(float\)"),
        (np.array([1, 2]), r"argument 0: an array of int64 has no derivative: pass x\.astype\(float\)"),
        (np.array([True, False]), r"argument 0: an array of bool has no derivative"),
    ],
)
def test_arrays_that_are_not_plain_floats(arg, message):
    with pytest.raises(ChadTypeError, match=message):
        chad.grad(total_of_squares)(arg)


def test_a_masked_gradient_was_wrong_before():
    """The gradient of sum(m * x) over a masked m is [1, 0, 3]; chadpy gave [1, 1, 3] as the mask went unseen."""
    with pytest.raises(ChadTypeError, match=r"`mul` of a NumPy array subclass .* np\.ma\.filled\(a, 0\.0\)"):
        chad.grad(masked_product)(np.ones(3))
    with pytest.raises(ChadTypeError, match=r"`matmul` of a NumPy array subclass"):
        chad.grad(matrix_product)(np.ones(3))
    assert np.array_equal(chad.grad(masked_data_only)(np.ones(3)), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("fn", [sin_times, quadratic])
def test_an_int_asked_for_suggests_a_float(fn):
    for make in (lambda: chad.grad(fn), lambda: chad.grad(fn, argnums=0), lambda: chad.value_and_grad(fn)):
        with pytest.raises(
            ChadTypeError,
            match=r"with respect to argument 0: an int \(2\) has no derivative: pass the "
            r"float 2\.0",
        ):
            make()(2)
    assert chad.grad(fn)(2.0) == pytest.approx(math.sin(2.0) + 2.0 * math.cos(2.0) if fn is sin_times else 7.0)
    with pytest.raises(ChadTypeError, match=r"hessian of \w+ with respect to argument 0: an int"):
        chad.hessian(fn)(2)  # gave nan before
    with pytest.raises(ChadTypeError, match=r"jacfwd of \w+ with respect to argument 0"):
        chad.jacfwd(fn)(np.int64(2))
    with pytest.raises(ChadTypeError, match=r"jvp of \w+ with respect to argument 0: an int"):
        chad.jvp(fn, (2,), (1.0,))


def test_ints_give_none_when_every_argument_is_differentiated():
    def scaled(x, n):
        return x * n

    assert chad.reverse(scaled).grad(2.0, 3) == (3.0, None)
    assert chad.grad(scaled, argnums=(0, 1))(2.0, 3) == (3.0, None)
    assert chad.vjp(scaled, 2.0, 3)[1](1.0) == (3.0, None)
    assert chad.jvp(scaled, (2.0, 3), (1.0, None)) == (6.0, 3.0)  # an int's tangent: None or zero
    assert chad.jvp(scaled, (2.0, 3), (1.0, 0)) == (6.0, 3.0)
    with pytest.raises(ChadTypeError, match=r"argument 1: an int \(3\)"):
        chad.grad(scaled, argnums=1)(2.0, 3)
    with pytest.raises(ChadTypeError, match=r"a list of ints has no derivative: pass floats"):
        chad.grad(lambda xs: xs[0] * xs[1])([2, 3])


def test_complex_and_object_values_anywhere_are_refused():
    with pytest.raises(ChadTypeError, match="complex number: pass x.real and x.imag"):
        chad.grad(quadratic)(2 + 1j)
    with pytest.raises(ChadTypeError, match="complex array"):
        chad.reverse(lambda p: np.sum(p["w"] * p["w"])).grad({"w": np.array([1j])})
    with pytest.raises(ChadTypeError, match="array of objects"):
        chad.vjp(total_of_squares, np.array([1.0], dtype=object))


def test_a_primitive_s_error_is_located_at_the_user_s_call():
    with pytest.raises(ChadTypeError) as e:
        chad.grad(len)([1.0])  # this line
    assert e.value.loc.filename == __file__ and "chad.grad(len)([1.0])" in e.value.loc.line


def dict_product(d):
    return d["a"] * d["b"]


def test_source_without_examples_says_what_it_assumed():
    with pytest.raises(
        ChadTypeError,
        match=r"cannot index a float\n\(with no example arguments .* every parameter of "
        r"dict_product was taken to be a float: give examples",
    ):
        chad.source(dict_product)
    assert "def dict_product_bp" in chad.source(dict_product, {"a": 1.0, "b": 2.0})
