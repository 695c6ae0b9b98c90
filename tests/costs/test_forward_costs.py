"""The cost of forward mode and of second order, on the cost families (tests/support/cost_families.py): a jvp
(the forward-mode code) and a Hessian-vector product (reverse mode over it) each cost at most a constant
times the primal, a ratio flat in n: D <= C' + C * P at every n, and D grows with n as P does (within 0.1 of
its exponent). Costs are chadpy's deterministic counts (bytecode instructions plus array elements)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import chadpy as chad
from chadpy.api.forward import forward_plan, hessian_vector_plan, tangent_arguments
from chadpy.api.plans import target_of
from chadpy.runtime import cost
from tests.support.cost_families import FAMILIES, Point, assert_within_bound, made
from tests.support.differential.check import _direction

pytestmark = pytest.mark.slow  # every family to n = 512: CI runs them, `-m "not slow"` not

NS = [8, 32, 128, 512]
# measured: jvp 2.0-7.3 times its primal, hvp 2.0-74 (rnn_buffer: a matrix-vector product per step, whose
# reverse-over-forward code is four such products and their transposes)
C_JVP, C_JVP_PRIME = 8.0, 400
C_HVP, C_HVP_PRIME = 80.0, 4000


def _measure(family: str, n: int, mode: str) -> Point:
    f, args = made(family, n)
    target = target_of(f)
    values = cost.counted(target.values(args, {}))
    places = target.places(range(len(args)))
    tangents = tuple(_direction(a, np.random.default_rng(0)) for a in args)
    if mode == "jvp":
        plan = forward_plan(target, values, places)
        dargs = tangent_arguments(plan, values, places, tangents)

        def run() -> object:
            return plan.forward(*values, *dargs)
    else:
        products = hessian_vector_plan(target, values, places, tuple(p for p, _ in places))
        dargs = tangent_arguments(products, values, places, tangents)

        def run() -> object:
            return products.backward(products.forward(*values, *dargs)[1], 1.0)

    run()  # first-call effects are not the program's cost
    _, primal = cost.measure(lambda: f(*values))
    _, derivative = cost.measure(run)
    return Point(primal.total, derivative.total)


@functools.cache
def points(family: str, mode: str) -> dict[int, Point]:
    return {n: _measure(family, n, mode) for n in NS}


@pytest.mark.parametrize("family", [f.name for f in FAMILIES])
def test_jvp_costs_a_constant_times_the_primal(family):
    assert_within_bound(points(family, "jvp"), C_JVP, C_JVP_PRIME)


@pytest.mark.parametrize("family", [f.name for f in FAMILIES])
def test_hvp_costs_a_constant_times_the_primal(family):
    assert_within_bound(points(family, "hvp"), C_HVP, C_HVP_PRIME)


def _rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@pytest.mark.parametrize("n", [4, 16, 64])
def test_a_hessian_costs_n_hessian_vector_products(n):
    """chad.hessian is one Hessian-vector product per input element, no more (the API's calls counted too)."""
    x = cost.counted((np.linspace(-1.0, 1.0, n),))[0]
    hessian = chad.hessian(_rosenbrock)
    hessian(x)
    chad.hvp(_rosenbrock, (x,), (np.ones(n),))  # both built before counting
    _, whole = cost.measure(lambda: hessian(x))
    _, one = cost.measure(lambda: chad.hvp(_rosenbrock, (x,), (np.ones(n),)))
    assert whole.total <= 1.1 * n * one.total, f"{whole.total} > 1.1 * {n} * {one.total}"
