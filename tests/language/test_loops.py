"""Gradients through loops, checked against central differences.

`for` over `range` (1-3 arguments), lists, tuples, arrays (first axis), `enumerate`
and `zip`; `while`; `break`, `continue` and `return` inside loops; loop-carried
floats, tuples, lists, dicts and arrays; trip counts that depend on the data;
nested loops, loops with branches, loops calling user functions.

Every function is defined at module level (chadpy reads source with `inspect`) and
checked by `assert_grad_matches_fd`: both code generation modes, the primal value,
no mutation of the arguments. Inputs are seeded, and chosen away from the points
where a trip count or a branch changes, so that central differences are exact
enough.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_grad_matches_fd, rand_array, rand_float, rand_list

# ====================================================================== for over range


def lp_range1(x):
    s = 0.0
    for _ in range(4):
        s = s * x + 1.0
    return s


def lp_range1_arg(x, n):
    s = x
    for _ in range(n):
        s = math.sin(s) * x + 0.5 * s
    return s


def lp_range2(x):
    s = 0.0
    for i in range(2, 6):
        s = s + x**i / i
    return s


def lp_range3(x, y):
    s = y
    for i in range(1, 10, 3):
        s = s + math.sin(i * x) * s
    for j in range(10, 0, -4):
        s = s - x * j
    return s


def lp_range_empty(x):
    s = x
    for _ in range(0):
        s = s * 100.0
    for _ in range(5, 2):
        s = s * 100.0
    return s * s


def lp_aug_assign(x, y):
    s = 1.0
    t = 0.0
    for i in range(1, 5):
        s *= x
        t += s * y
        t -= x / i
    return s + t


# ====================================================================== for over containers


def lp_over_tuple(p, w):
    s = 0.0
    for v in p:
        s = s + w * v * v
    return s


def lp_over_constant_tuple(x):
    s = 0.0
    for c in (0.5, -1.0, 2.0):
        s = s + math.exp(c * x)
    return s


def lp_over_list(xs, w):
    s = 0.0
    for v in xs:
        s = s + math.tanh(w * v)
    return s


def lp_over_array_elements(v):
    s = 0.0
    for e in v:
        s = s + e * e * e
    return s


def lp_over_array_rows(X, w):
    s = 0.0
    for row in X:
        s = s + np.tanh(row @ w)
    return s


def lp_enumerate(xs, x):
    s = 0.0
    for i, v in enumerate(xs):
        s = s + v * x**i
    return s


def lp_enumerate_array(v):
    s = 0.0
    for i, e in enumerate(v):
        s = s + math.cos(e) * (i + 1)
    return s


def lp_zip(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


def lp_zip_list_array(xs, v):
    s = 0.0
    for a, b in zip(xs, v):
        s = s + math.sin(a) * b
    return s


# ====================================================================== while, data-dependent trip counts


def lp_while_counter(x, n):
    i = 0
    while i < n:
        x = math.sin(x) + 0.5 * x
        i = i + 1
    return x


def lp_while_halving(x):
    n = 0
    while x > 1.0:
        x = x / 2.0
        n += 1
    return x * n + x * x


def lp_newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def lp_newton_cubic(c):
    # the root of y**3 + y = c, with a tolerance and an iteration cap
    y = 0.0
    for _ in range(50):
        r = y**3 + y - c
        if abs(r) < 1e-13:
            break
        y = y - r / (3.0 * y * y + 1.0)
    return y


def lp_while_euler(k, x0):
    # a damped oscillator integrated to t = 1; the trip count depends on t only
    t = 0.0
    x = x0
    v = 0.0
    while t < 1.0:
        x, v = x + 0.1 * v, v - 0.1 * (x + k * v)
        t = t + 0.1
    return x * x + v


# ====================================================================== break, continue, return


def lp_break(x):
    s = 0.0
    for i in range(10):
        s = s + x * i
        if s > 5.0:
            break
    return s


def lp_break_in_while(x):
    while x < 100.0:
        x = x * 1.7 + 0.3
        if x > 50.0:
            break
    return x


def lp_while_true_break(x):
    y = x
    while True:
        y = y * y + 0.1
        if y > 3.0:
            break
    return y + x


def lp_continue(xs):
    s = 0.0
    for v in xs:
        if v < 0.0:
            continue
        s = s + v * v
    return s


def lp_continue_in_range(x):
    s = 0.0
    for i in range(8):
        if i % 3 == 0:
            continue
        s = s + math.sin(x * i)
    return s


def lp_break_and_continue(xs, t):
    s = 0.0
    for v in xs:
        if v < 0.0:
            continue
        if s > t:
            break
        s = s + v * t
    return s


def lp_return_in_for(x):
    for i in range(20):
        x = x * 1.5
        if x > 10.0:
            return x * i
    return -x


def lp_return_in_while(x):
    while True:
        x = x * x + 0.1
        if x > 3.0:
            return x


def lp_return_in_nested(xs, ys):
    s = 0.0
    for a in xs:
        for b in ys:
            s = s + a * b
            if s > 1.5:
                return s * a
    return s


# ====================================================================== loop-carried state of each type


def lp_tuple_state(x):
    p = (x, 1.0)
    for _ in range(6):
        p = (p[1], p[0] + x * p[1])
    return p[0] + p[1]


def lp_tuple_unpack_state(a, b):
    for _ in range(5):
        a, b = b, 0.5 * a + math.sin(b)
    return a * b


def lp_list_state(x):
    xs = [x, 2.0 * x, 3.0 * x]
    for _ in range(3):
        xs = [math.sin(v) + 0.5 * v for v in xs]
    return xs[0] * xs[1] + xs[2]


def lp_dict_state(x):
    d = {"a": x, "b": 1.0}
    for _ in range(4):
        d = {"a": d["a"] * d["b"], "b": d["b"] + 0.1 * d["a"]}
    return d["a"] + d["b"]


def lp_array_state(v):
    for _ in range(5):
        v = 0.5 * v + np.sin(v)
    return np.sum(v * v)


def lp_mixed_state(x, v):
    s = 0.0
    t = (x, x)
    u = v
    for _ in range(3):
        u = u * t[0] + s
        s = s + np.sum(u) * 0.1
        t = (t[1], math.cos(s))
    return s + t[0] * t[1]


# ====================================================================== nested loops, branches, calls


def lp_nested_triangular(x, y):
    s = 0.0
    for i in range(3):
        for j in range(i + 1):
            s = s + x**i * y**j
    return s


def lp_nested_while_in_for(xs):
    s = 0.0
    for v in xs:
        while v > 1.0:
            v = v / 3.0
        s = s + v * v
    return s


def lp_nested_break(xs, ys):
    s = 0.0
    for a in xs:
        for b in ys:
            if b < 0.0:
                break
            s = s + a * b
    return s


def lp_branches(x):
    s = 0.0
    for i in range(6):
        if i % 2 == 0:
            s = s + x * i
        elif s > 2.0:
            s = s * 0.5
        else:
            s = s - math.cos(x)
    return s


def lp_branch_on_data(xs, w):
    s = 0.0
    for v in xs:
        z = v * w
        if z > 0.0:
            s = s + z
        else:
            s = s + 0.1 * z
    return s


def loop_step(x, y, h):
    return (x + h * y, y - h * math.sin(x))


def lp_calls(x, y):
    for _ in range(4):
        x, y = loop_step(x, y, 0.1)
    return x * y


def loop_poly(coeffs, x):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def lp_calls_looping_function(x):
    s = 0.0
    for k in range(3):
        s = s + loop_poly((1.0, -0.5, 0.25), x + k)
    return s


def loop_power(x, n):
    if n == 0:
        return 1.0
    return x * loop_power(x, n - 1)


def lp_calls_recursive(x):
    s = 0.0
    for n in range(4):
        s = s + loop_power(x, n) / (n + 1)
    return s


# ====================================================================== cases


def case(fn, *args, argnums=None, rtol=1e-5, atol=1e-6, id=None):
    """One gradient check; argnums defaults to every argument."""
    if argnums is None:
        argnums = tuple(range(len(args)))
    return pytest.param(fn, args, argnums, rtol, atol, id=id or fn.__name__)


CASES = [
    # for over range
    case(lp_range1, rand_float(1)),
    case(lp_range1_arg, rand_float(2), 5),
    case(lp_range1_arg, rand_float(3), 0, id="lp_range1_arg-zero-trips"),
    case(lp_range2, rand_float(4, 0.5, 1.5)),
    case(lp_range3, rand_float(5), rand_float(6)),
    case(lp_range_empty, rand_float(7)),
    case(lp_aug_assign, rand_float(8), rand_float(9)),
    # for over containers
    case(lp_over_tuple, tuple(rand_list(10, 4)), rand_float(11)),
    case(lp_over_constant_tuple, rand_float(12)),
    case(lp_over_list, rand_list(13, 5), rand_float(14)),
    case(lp_over_array_elements, rand_array(15, 6)),
    case(lp_over_array_rows, rand_array(16, (4, 3)), rand_array(17, 3)),
    case(lp_enumerate, rand_list(18, 5), rand_float(19)),
    case(lp_enumerate_array, rand_array(20, 5)),
    case(lp_zip, rand_list(21, 4), rand_list(22, 4)),
    case(lp_zip, rand_list(23, 5), rand_list(24, 3), id="lp_zip-unequal-lengths"),
    case(lp_zip_list_array, rand_list(25, 4), rand_array(26, 4)),
    # while, data-dependent trip counts
    case(lp_while_counter, rand_float(27), 6),
    case(lp_while_halving, 13.7),  # 4 halvings; 13.7 is far from 8 and 16
    case(lp_while_halving, 0.6, id="lp_while_halving-no-trips"),
    case(lp_newton_sqrt, rand_float(28, 0.5, 20.0)),
    case(lp_newton_cubic, rand_float(29, -3.0, 3.0)),
    case(lp_while_euler, rand_float(30, 0.1, 1.0), rand_float(31)),
    # break, continue, return
    case(lp_break, 0.37),  # s = 0.37 * (0 + 1 + ... + i) first exceeds 5 at i = 5 (5.55)
    case(lp_break, 0.05, id="lp_break-no-break"),  # s stays below 5 (2.25)
    case(lp_break_in_while, 1.3),  # 2.51, 4.57, 8.07, 14.0, 24.1, 41.3, 70.5: breaks at 70.5
    case(lp_while_true_break, 1.1),  # 1.31, 1.82, 3.40
    case(lp_continue, rand_list(32, 6, 0.2, 1.0, signed=True)),
    case(lp_continue_in_range, rand_float(33)),
    case(lp_break_and_continue, [0.8, -0.3, 0.6, 0.9, -0.5, 0.7], 1.2),  # s: 0.96, 1.68 > 1.2: breaks at 0.9
    case(lp_return_in_for, 0.8),  # returns at i = 6 with x = 13.67
    case(lp_return_in_for, -0.5, id="lp_return_in_for-after-loop"),
    case(lp_return_in_while, 1.1),
    case(lp_return_in_nested, [0.5, 0.9, 1.3], [0.4, 0.8]),  # returns inside the second outer trip
    case(lp_return_in_nested, [0.1, 0.2], [0.3, 0.4], id="lp_return_in_nested-after-loop"),
    # loop-carried state
    case(lp_tuple_state, rand_float(34)),
    case(lp_tuple_unpack_state, rand_float(35), rand_float(36)),
    case(lp_list_state, rand_float(37)),
    case(lp_dict_state, rand_float(38)),
    case(lp_array_state, rand_array(39, (2, 3))),
    case(lp_mixed_state, rand_float(40), rand_array(41, 3)),
    # nested loops, branches, calls
    case(lp_nested_triangular, rand_float(42), rand_float(43)),
    case(lp_nested_while_in_for, [5.3, 0.4, 2.5, 17.0, 0.9]),  # 0.59, 0.4, 0.83, 0.63, 0.9
    case(lp_nested_break, rand_list(44, 3), [0.6, 0.3, -0.4, 0.7]),
    case(lp_branches, 0.9),  # s: 0, -0.62, 1.18, 0.56, 4.16, 2.08
    case(lp_branch_on_data, rand_list(45, 6, 0.2, 1.0, signed=True), 0.7),
    case(lp_calls, rand_float(46), rand_float(47)),
    case(lp_calls_looping_function, rand_float(48)),
    case(lp_calls_recursive, rand_float(49)),
]


@pytest.mark.parametrize(("fn", "args", "argnums", "rtol", "atol"), CASES)
def test_gradient_matches_finite_differences(fn, args, argnums, rtol, atol):
    assert_grad_matches_fd(fn, args, argnums, rtol, atol)


# ====================================================================== closed forms


def test_newton_sqrt_is_the_derivative_of_sqrt():
    for a in (0.3, 2.0, 9.0):
        g = chad.grad(lp_newton_sqrt)(a)
        assert abs(g - 0.5 / math.sqrt(a)) < 1e-9


def test_range_polynomial_closed_form():
    # lp_range1: s = x**3 + x**2 + x + 1
    x = 0.7
    g = chad.grad(lp_range1)(x)
    assert abs(g - (3 * x * x + 2 * x + 1)) < 1e-12


def test_halving_gradient_is_a_power_of_two():
    # 13.7 is halved 4 times: f = 4 * x / 16 + (x / 16) ** 2
    x = 13.7
    g = chad.grad(lp_while_halving)(x)
    assert abs(g - (4.0 / 16.0 + 2.0 * x / 256.0)) < 1e-12


def squares_of_elements(a, w):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i] * a[i] * w + a[i] * a[len(a) - 1 - i]
    return s


def test_two_reads_of_one_element_add_one_one_hot():
    # `a[i] * a[i]` contributes u + v to a[i] once (tidy.merge_one_hots); a[len(a)-1-i] stays its own
    a = np.linspace(-1.0, 2.0, 7)
    source = chad.source(squares_of_elements, a, 0.5)
    assert source.count("_values.append(") == 2  # the loop's one-hots, collected (`collect`)
    ga, gw = chad.grad(squares_of_elements, argnums=(0, 1))(a, 0.5)
    np.testing.assert_allclose(ga, 2.0 * a * 0.5 + 2.0 * a[::-1], rtol=1e-12)
    np.testing.assert_allclose(gw, np.sum(a * a), rtol=1e-12)
    assert_grad_matches_fd(squares_of_elements, (a, 0.5), argnums=(0, 1))


def weighted_until(xs, w, limit):
    s = 0.0
    for i in range(len(xs)):
        s = s * w + xs[i] * i
        if s > limit:
            break
    return s


def keyed_recurrence(d, w):
    s = 1.0
    for k in d:
        s = s * w + d[k] * s
    return s


def test_a_loops_count_is_read_again_not_recorded():
    # the count of a `for` loop comes back in the reverse pass from what it counted (a range, or a
    # dict's keys), also when `break` leaves the tape shorter than the sequence
    xs = [0.5, 1.5, -0.25, 2.0, 0.75, 1.25]
    source = chad.source(weighted_until, xs, 0.9, 2.0)
    assert "zip(reversed(indices[:len(tape)]), reversed(tape))" in source
    for limit in (2.0, 100.0):  # leaves after 4 of the 6 iterations; runs them all
        gxs, gw = chad.grad(weighted_until, argnums=(0, 1))(xs, 0.9, limit)
        s, ds_dw, ds_dx = 0.0, 0.0, [0.0] * len(xs)
        for i, x in enumerate(xs):  # forward-mode by hand: s and its derivatives
            ds_dw, s = ds_dw * 0.9 + s, s * 0.9 + x * i
            ds_dx = [v * 0.9 for v in ds_dx]
            ds_dx[i] += i
            if s > limit:
                break
        np.testing.assert_allclose(gxs, ds_dx, rtol=1e-12)
        np.testing.assert_allclose(gw, ds_dw, rtol=1e-12)
    assert_grad_matches_fd(weighted_until, (xs, 0.9, 2.0), argnums=(0, 1))
    assert_grad_matches_fd(keyed_recurrence, ({"b": 0.5, "a": -0.3, "c": 1.2}, 0.7), argnums=(0, 1))


def loop_carrying_nothing(xs, y):
    for x in xs:  # noqa: B007  (a loop that runs for nothing it keeps)
        pass
    return y * y


def test_a_loop_carrying_nothing_sets_no_state():
    # its state was an empty tuple, set before the loop and again in every iteration: `() = ()`
    source = chad.source(loop_carrying_nothing, [1.0, 2.0], 3.0)
    assert "() = ()" not in source
    assert chad.grad(loop_carrying_nothing, argnums=(0, 1))([1.0, 2.0], 3.0) == ([0.0, 0.0], 6.0)


# ====================================================================== 11. false rejections


def append_with_break(x, n):
    values = []
    for i in range(n):
        if i > 2:
            break
        values.append(x * i)
    return sum(values)


def comprehension_in_one_branch(x):
    if x > 0:
        t = sum([y * 2 for y in [x, x]])
    else:
        t = x
    y = t * 3
    return y


def sum_passed_to_a_call_in_a_loop(a, b):
    total = 0.0
    for _ in range(3):
        s = a + b
        total = total + math.sin(s)
        a = s * 0.5
    return total


def list_sum_passed_to_a_call_in_a_loop(a, b):
    total = 0.0
    for k in range(3):
        s = [a * k] + [b]
        total = total + sum(s)
    return total


def test_appending_in_a_loop_with_break():
    assert_grad_matches_fd(append_with_break, (0.5, 5))
    assert chad.grad(append_with_break)(0.5, 5) == 3.0


def test_a_comprehension_variable_is_not_the_functions():
    assert_grad_matches_fd(comprehension_in_one_branch, (0.5,))
    assert_grad_matches_fd(comprehension_in_one_branch, (-0.5,))


def test_values_passed_to_calls_in_loops():
    assert_grad_matches_fd(sum_passed_to_a_call_in_a_loop, (0.3, 0.4), argnums=(0, 1))
    assert_grad_matches_fd(list_sum_passed_to_a_call_in_a_loop, (0.3, 0.4), argnums=(0, 1))


def enumerates_and_zips_a_dict(d, xs):
    s = 0.0
    for i, k in enumerate(d):
        s = s + i * d[k]
    for k, x in zip(d, xs):
        s = s + d[k] * x
    return s


def test_enumerate_and_zip_of_a_dict_yield_its_keys():
    """`enumerate(d)` and `zip(d, ...)` read each dict at position k (`d[0]`): a run-time KeyError,
    not a ChadError. They iterate the dict's keys, as `for k in d` does."""
    assert_grad_matches_fd(enumerates_and_zips_a_dict, ({"a": 1.0, "b": 2.0}, [3.0, 4.0]), argnums=(0, 1))
