"""Backpropagators as module-level functions of the values they read (`chadpy/pullbacks.py`)."""

from __future__ import annotations

import gc
import math

import numpy as np

import chadpy as chad
from tests.support.paths import gradbench

# the determinant by minors along the first row: a recursive closure, one call per minor
det = gradbench().det


def test_a_recursive_function_leaves_the_collector_little_to_track():
    """The forward pass keeps, per call, a tuple of the values the backpropagator reads (no longer
    tracked by the collector once it holds only numbers and arrays), not a closure with a cell per
    value (a function, its tuple of cells and the cells: 6 tracked objects per leaf call of `minor`)."""
    A = np.random.default_rng(3).random((6, 6))
    chad.vjp(det, A)  # built and run once: what the transformation leaves is not counted
    gc.collect()
    before = len(gc.get_objects())
    value, pullback = chad.vjp(det, A)
    gc.collect()
    kept = len(gc.get_objects()) - before
    calls = sum(math.factorial(6) // math.factorial(k) for k in range(1, 7))  # one per minor: 1237
    assert kept < 3 * calls  # 2290 (a tape, its records and a tuple per call with a loop); 9187 as closures
    (dA,) = pullback(1.0)
    assert math.isclose(value, np.linalg.det(A), rel_tol=1e-9)
    np.testing.assert_allclose(dA, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9, atol=1e-12)


g_chad = 3.0  # a module-level name like a generated function's: must not be read by the derivative


def g(y):
    return y * y


def shadows_the_generated_names(x):
    g_chad = x * 2.0  # a variable named like g's CHAD form
    g_bp = g_chad + 1.0  # and like its backpropagator
    return g(g_chad) + g_bp


def test_a_variable_named_like_a_generated_function_does_not_hide_it():
    """f = (2x)^2 + 2x + 1: f' = 8x + 2."""
    x = 1.5
    assert chad.grad(shadows_the_generated_names)(x) == 8 * x + 2
    source = chad.source(shadows_the_generated_names, x)
    assert "def g_chad_1(" in source and "def g_bp_1(" in source  # numbered apart from the variables
