"""Cost of the derivative of loops: linear in the work of the primal.

Costs are deterministic counts from `chadpy.cost` (bytecode instructions over every
frame, chadpy's runtime included, plus elements touched by array operations on
counted arrays), never wall-clock time. For each family we measure the derivative
(`vjp`'s forward pass and the pullback: a loop that carries its result's cotangent
unchanged does its reverse work forward, `fuse`) at sizes n, 2n, 3n, 4n: a linear
cost has constant first differences, a quadratic one (dense one-hot cotangents per
index, the failure the paper's Section 7 is about) grows its differences with n.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from chadpy.runtime.cost import counted, measure


def index_list(a):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i]
    return s


def index_array(a):
    return index_list(a)  # the same loop, given an array (a call adds O(1))


def share_chain(x, n):
    for _ in range(n):
        x = x + x
    return x


def nested(x, n):
    s = 0.0
    for i in range(n):
        for j in range(4):
            s = s + math.sin(x * i + j)
    return s


def iterate_list(xs):
    s = 0.0
    for v in xs:
        s = s + v * v
    return s


def dict_loop(d):
    s = 0.0
    for k in d:
        s = s + d[k] * d[k]
    return s


def _inputs(family, n):
    rng = np.random.default_rng(n)
    if family is index_list or family is iterate_list:
        return ([float(v) for v in rng.uniform(0.5, 1.5, n)],)
    if family is index_array:
        return (counted(rng.uniform(0.5, 1.5, n)),)
    if family is dict_loop:
        return ({f"k{i}": float(v) for i, v in enumerate(rng.uniform(0.5, 1.5, n))},)
    return (0.5, n)


def derivative_cost(family, n) -> int:
    args = _inputs(family, n)
    _, pullback = chad.vjp(family, *args)
    pullback(1.0)  # warm up: first calls of library code are not representative
    _, cost = measure(lambda: chad.vjp(family, *args)[1](1.0))
    return cost.total


def primal_cost(family, n) -> int:
    args = _inputs(family, n)
    family(*args)
    _, cost = measure(lambda: family(*args))
    return cost.total


FAMILIES = [index_list, index_array, share_chain, nested, iterate_list, dict_loop]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__)
def test_derivative_grows_linearly(family):
    n = 400
    costs = [derivative_cost(family, k * n) for k in (1, 2, 3, 4)]
    steps = [b - a for a, b in zip(costs, costs[1:])]
    assert steps[0] > 0
    # equal steps (up to a small constant, e.g. a dict resize) mean linear growth;
    # a quadratic reverse pass would make each step larger than the last by about n
    for s in steps[1:]:
        assert abs(s - steps[0]) <= 0.02 * steps[0], (family.__name__, costs)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__)
def test_derivative_within_a_constant_of_the_primal(family):
    ratios = [derivative_cost(family, n) / primal_cost(family, n) for n in (100, 1000)]
    assert max(ratios) < 40, ratios  # dict_loop: about 19x (a dict entry per key, then scaled)
    # the ratio does not grow with n (a fixed cost, such as adding a loop's collected one-hots after
    # it, makes it smaller at the larger n)
    assert ratios[1] < 1.25 * ratios[0], ratios


def dense_one_hot_sum(a):
    """What per-index dense one-hots cost: the failure chadpy avoids, measured the same way."""
    g = np.zeros_like(a)
    for i in range(len(a)):
        e = np.zeros_like(a)
        e[i] = 1.0
        g = g + e
    return g


def test_the_measure_sees_dense_one_hots_as_quadratic():
    """The cost model is not fooled by work inside one C call (so the tests above can fail)."""
    costs = []
    for n in (400, 800, 1200):
        a = counted(np.ones(n))
        _, c = measure(lambda a=a: dense_one_hot_sum(a))
        costs.append(c.total)
    assert costs[2] - costs[1] > 1.3 * (costs[1] - costs[0])


def test_a_million_iterations_without_recursion():
    """The reverse pass replays a tape of 10^6 records in a loop; recursion would overflow."""
    n = 1_000_000
    x = 0.7
    value, g = chad.value_and_grad(drift)(x, n)
    assert value == drift(x, n)
    # the oracle: forward-mode derivative of the same recurrence, by hand
    s, ds = x, 1.0
    for _ in range(n):
        s, ds = s + 1e-6 * math.sin(s * x), ds + 1e-6 * math.cos(s * x) * (ds * x + s)
    assert g == pytest.approx(ds, rel=1e-9)


def drift(x, n):
    s = x
    for _ in range(n):
        s = s + 1e-6 * math.sin(s * x)
    return s
