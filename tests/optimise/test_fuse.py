"""Loops whose reverse pass is added up forward (`chadpy.fuse`), and loops that must not be.

A loop that carries its result's cotangent unchanged (`s = s + f(...)`) adds each
iteration's contributions, per unit of that cotangent, in its forward pass, and keeps
no tape. Each program here is checked against central differences in every mode
(`assert_grad_matches_fd`); `FUSED` names those whose derivative must keep no tape,
`KEPT` those that must keep one (the carried cotangent changes, or a call's
backpropagator runs in the loop), so a change in what `fuse` accepts is seen.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_grad_matches_fd, rand_array, rand_float, rand_list


def sum_with_branch(a, w):
    s = 0.0
    for i in range(len(a)):
        if a[i] > 0:
            s = s + a[i] * w
        else:
            s = s - w * w
    return s


def sum_with_break(x):
    s = 0.0
    for i in range(20):
        s = s + math.sin(x * i)
        if i > 6:
            break
    return s


def sum_in_while(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + math.cos(x * i) * x
        i += 1
    return s


def nested_sums(A, v):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + A[i, j] * v[j] * v[i]
    return s


def inner_sum_outer_recurrence(xs, y):
    """The inner loop's sums ride on the outer loop's tape (its state y changes its cotangent)."""
    for k in range(3):
        t = 0.0
        for x in xs:
            t = t + x * x * (k + 1)
        y = math.sin(y) + t
    return y


def inner_sum_under_a_branch(xs, y):
    for k in range(4):
        if k % 2 == 0:
            t = 0.0
            for x in xs:
                t = t + x * y
            y = y * 0.5 + t
        else:
            y = y * y
    return y


def sum_over_list_and_dict(xs, d):
    s = 0.0
    for x in xs:
        s = s + x * d["w"]
    for k in d:
        s = s + d[k] * d[k]
    return s


def sum_used_after(x, ys):
    s = 0.0
    for y in ys:
        s = s + y * x
    return s * s + x


def sum_of_products(W, hs):
    s = 0.0
    for h in hs:
        s = s + np.sum(np.tanh(W @ h))
    return s


def sum_of_slices(v):
    s = 0.0
    for i in range(len(v) - 2):
        s = s + np.sum(v[i : i + 3] ** 2)
    return s


def helper(x, i):
    return math.sin(x * i)


def sum_calling_a_function(x):
    s = 0.0
    for i in range(5):
        s = s + helper(x, i)
    return s


def running_product(x):
    p = 1.0
    for i in range(1, 6):
        p = p * (x + i)
    return p


def two_sums(x):
    s = 0.0
    t = 0.0
    for i in range(5):
        s = s + x * i
        t = t + s * x
    return t


def array_sum(v):
    acc = np.zeros(3)
    for i in range(4):
        acc = acc + v * i
    return np.sum(acc * acc)


def sum_after_writes(x):
    out = np.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        out[i] = x[i] * 2.0
        s = s + out[i] * x[i]
    return s + np.sum(out)


CASES = {
    sum_with_branch: (rand_array(1, 6, signed=True, lo=0.2), 0.7),
    sum_with_break: (0.3,),
    sum_in_while: (0.4, 6),
    nested_sums: (rand_array(2, (3, 4)), rand_array(3, 4)),
    inner_sum_outer_recurrence: (rand_list(4, 4), 0.3),
    inner_sum_under_a_branch: (rand_list(5, 3), 0.4),
    sum_over_list_and_dict: (rand_list(6, 3), {"w": 0.5, "b": -0.3}),
    sum_used_after: (0.6, rand_list(7, 4)),
    sum_of_products: (rand_array(8, (3, 4)), [rand_array(9 + k, 4) for k in range(3)]),
    sum_of_slices: (rand_array(12, 7),),
    sum_calling_a_function: (rand_float(13),),
    running_product: (rand_float(14),),
    two_sums: (rand_float(15),),
    array_sum: (rand_array(16, 3),),
    sum_after_writes: (rand_array(17, 5),),
}
ARGNUMS = {sum_with_break: 0, sum_in_while: 0}
FUSED = [
    sum_with_branch,
    sum_with_break,
    sum_in_while,
    nested_sums,
    sum_over_list_and_dict,
    sum_used_after,
    sum_of_products,
    sum_of_slices,
]
KEPT = [sum_calling_a_function, running_product, two_sums, array_sum]


@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    args = CASES[f]
    argnums = ARGNUMS.get(f, tuple(range(len(args))))
    assert_grad_matches_fd(f, args, argnums=argnums)


def _source(f) -> str:
    args = CASES[f]
    chad.grad(f, argnums=ARGNUMS.get(f, tuple(range(len(args)))))(*args)
    return chad.source(f)


@pytest.mark.parametrize("f", FUSED, ids=lambda f: f.__name__)
def test_a_sum_keeps_no_tape(f):
    source = _source(f)
    assert "tape" not in source and "_per_" in source, source


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_a_changing_cotangent_keeps_its_tape(f):
    assert "reversed(tape" in _source(f)


def test_the_inner_sums_ride_on_the_outer_tape():
    source = _source(inner_sum_outer_recurrence)
    assert "_per_" in source and source.count("reversed(tape") == 1, source


def test_a_pullback_called_twice_scales_and_keeps_its_sums():
    """The sums made forward are read, never updated, by the pullback: it can run again."""
    a = rand_array(20, 5)
    for f, args in ((sum_of_slices, (a,)), (sum_over_list_and_dict, (rand_list(21, 3), {"w": 0.5, "b": 1.5}))):
        _, pullback = chad.vjp(f, *args)
        first = pullback(1.0)
        second = pullback(-2.5)
        again = pullback(1.0)
        for g1, g2, g3 in zip(first, second, again):
            leaves = [(g1, g2, g3)] if not isinstance(g1, (list, dict)) else None
            if isinstance(g1, dict):
                leaves = [(g1[k], g2[k], g3[k]) for k in g1]
            elif isinstance(g1, list):
                leaves = list(zip(g1, g2, g3))
            for u, v, w in leaves:
                np.testing.assert_allclose(v, -2.5 * np.asarray(u), rtol=1e-13)
                np.testing.assert_array_equal(w, u)


# ---------------------------------------------------------------------- found by the differential tester


def inner_sum_of_an_unused_element(v0, xs0, v1):
    """The inner loop's carried cotangent is a copy of a copy of a zero (seed 650: a NameError)."""
    s0 = sum(np.sum(v0) for u in xs0)
    s1 = 0.5
    s1 -= s0
    s3 = s1
    lst1 = []
    lst1.append(0.5)
    for t in lst1:
        for i in range(4):  # noqa: B007  the program as the tester shrank it
            t = t + np.dot(v1, v1)
        s3 = s3
    return s1


def constant_pair(t, s):
    return (0.5, 1.0)


def zero_read_in_a_branch(d0):
    """A zero cotangent read inside a branch of the moved code (seed 1097: a NameError)."""
    arr0 = np.array([0.3, d0["bias"], d0["w"]])
    s1, s2 = constant_pair(d0["bias"], constant_pair(0.9, 0.5)[1])
    lst1 = [1.25, 0.5, np.sum(arr0)]
    for t in lst1:
        s3 = t < t or d0["c"]  # noqa: F841
        s1 -= d0["bias"]
    return sum(lst1)


def empty_loop_then_a_dict(xs0):
    """An assignment of no names next to a literal dict (seed 205: an IndexError in `tidy`)."""
    for t in xs0:  # noqa: B007
        pass
    dct0 = {"b": 0.5, "w": 0.5, "c": 0.5}  # noqa: F841
    return 2.0


PAIR = (1.0, 1.0)


class Box:
    def __init__(self, a, b):
        self.a = a
        self.c = math.atan(b**2)
        self.b = abs(a)
        self.a -= math.atan(-self.a)


class SubBox(Box):
    def total(self, t):
        s4 = math.tanh(t * self.b if self.c > 0.1 and 0.3 < 0.1 else t + self.c)
        dct0 = {"w": PAIR[0], "b": s4, "bias": PAIR[1]}  # noqa: F841
        return s4


def sum_into_an_unused_object(v0):
    """The sum's cotangent is `Zero`: it only reaches an object nobody reads (seed 6108: a TypeError)."""
    ob0 = SubBox(0.5, 0.5)
    s5 = 0.0
    for i in range(len(v0)):
        s5 = s5 + v0[i]
    ob0 = SubBox(ob0.a, s5)  # noqa: F841
    return np.mean(v0)


FOUND = {
    sum_into_an_unused_object: ((rand_array(34, 3),), 0),
    inner_sum_of_an_unused_element: ((rand_array(30, 3), rand_list(31, 3), rand_array(32, 2)), (0, 2)),
    zero_read_in_a_branch: (({"bias": -0.12, "w": 0.06, "c": -0.77},), 0),
    empty_loop_then_a_dict: ((rand_list(33, 3),), 0),
}


@pytest.mark.parametrize("f", list(FOUND), ids=lambda f: f.__name__)
def test_found_by_the_differential_tester(f):
    args, argnums = FOUND[f]
    assert_grad_matches_fd(f, args, argnums=argnums)
