"""Gradients of the supported language, checked against central differences.

Every function is defined at module level (chadpy reads source with `inspect`).
Each is checked in both code generation modes (simplify=True/False), which must
agree exactly, and the primal value must be unchanged.
"""

from __future__ import annotations

import math
import math as m
import sys
from dataclasses import dataclass
from math import cos as cosine
from math import sin

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chadpy as chad
from chadpy.rules.registry import PRIMITIVES
from tests.support.fd import assert_close, assert_grad_matches_fd, assert_same, central_diff, no_explain

SCALE = 2.5
OFFSET = -0.75
PAIR = (1.5, -2.0)
EXPONENT = 3


# ====================================================================== operators


def op_add(x, y):
    return x + y


def op_sub(x, y):
    return x - y


def op_mul(x, y):
    return x * y


def op_div(x, y):
    return x / y


def op_pow(x, y):
    return x**y


def op_pow_consts(x):
    return x**3 + x**2 + x**1 + x**0 + x**-2 + x**0.5 + x**EXPONENT


def op_floordiv(x, y):
    return (x // y) * x + y


def op_mod(x, y):
    return x % y


def op_unary(x):
    return -x * +x - (-x)


def op_int_constants(x):
    return 3 * x + 2 // 1 - x / 4 + 7 % 4


# ====================================================================== math functions


def m_sin(x):
    return math.sin(x) * x


def m_cos(x):
    return math.cos(2.0 * x)


def m_tan(x):
    return math.tan(x)


def m_asin(x):
    return math.asin(x)


def m_acos(x):
    return math.acos(x) * x


def m_atan(x):
    return math.atan(x * x - 1.0)


def m_atan2(y, x):
    return math.atan2(y, x)


def m_sinh(x):
    return math.sinh(x)


def m_cosh(x):
    return math.cosh(x)


def m_tanh(x):
    return math.tanh(x)


def m_exp(x):
    return math.exp(x)


def m_expm1(x):
    return math.expm1(x)


def m_log(x):
    return math.log(x)


def m_log_base(x, b):
    return math.log(x, b)


def m_log1p(x):
    return math.log1p(x)


def m_log2(x):
    return math.log2(x)


def m_log10(x):
    return math.log10(x)


def m_sqrt(x):
    return math.sqrt(x)


def m_pow(x, y):
    return math.pow(x, y)


def m_hypot2(x, y):
    return math.hypot(x, y)


def m_hypot3(x, y, z):
    return math.hypot(x, y, z)


def m_fabs(x):
    return math.fabs(x) * x


def m_erf(x):
    return math.erf(x)


# ====================================================================== builtins


def b_abs(x, y):
    return abs(x) * y


def b_min3(x, y, z):
    return min(x, y, z)


def b_max3(x, y, z):
    return max(x, y, z) * 2.0


def b_minmax2(x, y):
    return max(x, y) - min(y, x)


def b_relu(x):
    return max(x, 0) + max(0.0, x) * 2.0 + min(x, 0) * 3.0


def b_pow(x, y):
    return pow(x, y)


def b_discrete(x, n):
    return float(n) * x + int(x) + round(x) + round(x, 1)


def b_float_passthrough(x):
    return float(x) * float(x)


def b_int_arg(x, n):
    return x**n + n


# ====================================================================== control flow


def cf_if_else(x, y):
    if x > 1.0:
        z = x * y
    else:
        z = x + y
    return z * z


def cf_elif(x):
    if x < -1.0:
        r = -x * x
    elif x < 1.0:
        r = x * 3.0
    else:
        r = math.sqrt(x)
    return r + x


def cf_early_return(x, y):
    if x < 0.0:
        return y * y
    z = x * y
    return z + x


def cf_nested_partial(x, y):
    if x > 0.0:
        if y > 0.0:
            return x * y
        z = x + y
    else:
        z = x - y
    return z * z


def cf_if_no_else(x, y):
    z = y
    if x > 0.5:
        z = z * x
        w = 2.0
    else:
        w = 3.0
    return z * w + x


def cf_nested_join(x, y):
    if x > 0.0:
        if y > 0.0:
            r = x * y
        else:
            r = x - y
    else:
        r = y
    return r * 2.0


def cf_elif_returns(x):
    if x < 0.0:
        return -x
    elif x < 1.0:
        return x * x
    elif x < 2.0:
        return 2.0 * x - 1.0
    return 3.0


def cf_dead_case_inactive_result(x):
    y = x * 2.0
    w = math.sin(y) if x > 0.0 else 1.0
    if x > 1.0:
        v = math.cos(y)
    else:
        v = 2.0
    t = (w, v * 2.0)  # noqa: F841 (dead on purpose)
    return float(int(x))


def cf_dead_case_in_returning_branch(x, y):
    z = x * y
    if x > 0.0:
        w = math.sin(z) if y > 0.0 else 1.0  # noqa: F841 (dead on purpose)
        return 1.0
    return z


def cf_ifexp(x, y):
    w = x * y if x > y else x - y
    return w * w + (1.0 if y > 0.0 else 2.0) * y


def cf_and_or(x, y):
    return (x > 1.0 and x * y) or y * y


def cf_and_or_operands(x, y):
    a = x and y
    b = x or y
    return a * 2.0 + b * 3.0


def cf_chained(x, y):
    if 0.0 < x < 1.0 <= y:
        return x * y
    return x + y


def cf_not(x):
    if not x > 0.5:
        return x * x
    return 1.0 / x


def cf_discrete_tests(x, n, mode):
    if n == 0 or mode is None:
        return x
    if n != 1 and mode in ("a", "b"):
        return x * x
    return -x


# ====================================================================== tuples


def t_tuple_in(p, s):
    a, b = p
    return a * b + s * p[-1] + p[0]


def t_nested_unpack(q):
    (a, (b, c)), d = q
    return a * b - c * d + q[-1] * q[0][1][0]


def t_negative_index(p):
    return p[-1] * p[-2] + p[-3]


def t_build_and_index(x, y):
    t = (x, y, x * y)
    u = (t, x)
    (a, b, c), e = u
    return u[0][2] + u[-1] * t[-3] + t[1] + a * b * c * e


def t_cond_tuple(x, y):
    a, b = (x, y) if x > y else (y, x)
    return a * 2.0 + b


def t_mixed_tuple(p):
    a, n = p
    return a * n


def t_module_tuple(x):
    a, b = PAIR
    return x * a + b * PAIR[-1]


# ====================================================================== user function calls


def helper_scale(x, factor=2.0):
    return x * factor


def helper_kwonly(x, *, power=2, shift=0.5):
    return x**power + shift


def helper_pair(x, y):
    return (x * y, x - y)


def u_calls(x, y):
    a = helper_scale(x)
    b = helper_scale(y, factor=3.0)
    c = helper_kwonly(x, shift=y)
    d = helper_kwonly(y, power=3)
    e = helper_scale(factor=x, x=y)
    return a * b + c - d + e + helper_scale(2.0)


def u_inactive_kwonly_call(x, y):
    c = helper_kwonly(2.0, shift=0.25)
    e = helper_kwonly(3.0)
    return x * c + y * e + helper_kwonly(y, power=1, shift=x)


def u_tuple_returning(x, y):
    p, q = helper_pair(x, y)
    return p * q + helper_pair(y, x)[0]


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def square(x):
    return x * x


def u_one_param_callee(x, y):
    return square(x) + square(x * y) + square(2.0)


def rec_pair(x, n):
    if n == 0:
        return (x, 1.0)
    a, b = rec_pair(x, n - 1)
    return (a * x, b + a)


def u_rec_tuple(x, n):
    a, b = rec_pair(x, n)
    return a + b


def u_power(x, n):
    return power(x, n)


def even_chain(x, n):
    if n == 0:
        return x
    return odd_chain(x * 1.5, n - 1) + x


def odd_chain(x, n):
    if n == 0:
        return -x
    return even_chain(math.sin(x), n - 1) * 2.0


def u_mutual(x, n):
    return even_chain(x, n)


@chad.reverse
def decorated_helper(x, y):
    return x * x * y


def u_decorated_callee(x, y):
    return decorated_helper(x, y) + decorated_helper(y, 2.0)


# ====================================================================== constants, aliases, statements


def c_constants(x):
    return SCALE * x + OFFSET + math.pi * x**2 + math.e


def c_aliases(x, y):
    return m.exp(x) * sin(y) + cosine(x * y) + m.pi


def s_assert(x, y):
    assert y > 0.0, "y must be positive"
    return math.log(y) * x


def s_reassign(x, y):
    z = x
    z = z * y
    z += x
    z -= y
    z *= 2.0
    z /= y
    z **= 2
    return z


def s_aug_mod(x, y):
    w = x * 1.0
    w %= y
    v = x
    v //= y
    return w + v * y


def s_generated_name_clash(x, d, acc):
    Zero = x * d
    add = Zero + acc
    tuple_part = add * x
    EArr = tuple_part - 1.0
    dx = EArr * 2.0
    cos = 2.0
    return dx + math.sin(x) * cos


def s_docstring_pass(x):
    """A docstring is not code."""
    pass
    return x * 3.0


# ====================================================================== independence


def i_ignores_y(x, y):
    return x * 2.0


def i_constant_out(x):
    return 3.0


def i_through_discrete(x):
    return float(int(x)) * 2.0


# ====================================================================== larger examples


def rosenbrock(x, y):
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


def logistic_loss(w, b, x, label):
    z = w * x + b
    p = 1.0 / (1.0 + math.exp(-z))
    if label == 1:
        return -math.log(p)
    return -math.log(1.0 - p)


def chain20(x):
    a = x * 1.1
    b = a + 0.3
    c = math.sin(b)
    d = c * c
    e = d + x
    f = math.exp(e * 0.5)
    g = f - a
    h = g / (1.0 + x * x)
    i = math.tanh(h)
    j = i * b
    k = j + 2.0
    l_ = math.log(k)
    mm = l_ * l_
    n = mm - c
    o = n * 0.7
    p = math.cos(o)
    q = p + d
    r = q * q
    s = math.sqrt(r + 1.0)
    t = s - e
    return t


# ====================================================================== strategies


def fl(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def away(lo: float, hi: float, *points: float, margin: float = 0.05) -> st.SearchStrategy[float]:
    """Floats in [lo, hi] at least `margin` from each of `points` (branch boundaries, kinks).

    A union of intervals rather than a filter: nothing is rejected, so shrinking stays fast.
    """
    cuts = sorted(p for p in points if lo < p < hi)
    bounds = [lo] + [c for p in cuts for c in (p - margin, p + margin)] + [hi]
    pieces = [fl(a, b) for a, b in zip(bounds[::2], bounds[1::2]) if a < b]
    return st.one_of(*pieces)


def frac_away(v: float, points: tuple[float, ...], margin: float = 0.02) -> bool:
    """The fractional part of v is at least margin from each point (jumps of floor, round)."""
    frac = v - math.floor(v)
    return all(min(abs(frac - p), 1.0 - abs(frac - p)) > margin for p in points)


def spread(values: tuple, margin: float = 0.02) -> bool:
    return all(abs(a - b) > margin for i, a in enumerate(values) for b in values[i + 1 :])


ANY = fl(-3.0, 3.0)
POS = fl(0.1, 4.0)
NONZERO = away(-4.0, 4.0, 0.0, margin=0.1)


@dataclass
class Case:
    fn: object
    args: st.SearchStrategy[tuple]
    argnums: int | tuple[int, ...] = 0

    def __repr__(self) -> str:
        return self.fn.__name__


def all_pos(n: int) -> tuple[int, ...]:
    return tuple(range(n))


CASES = [
    # operators
    Case(op_add, st.tuples(ANY, ANY), (0, 1)),
    Case(op_sub, st.tuples(ANY, ANY), (0, 1)),
    Case(op_mul, st.tuples(ANY, ANY), (0, 1)),
    Case(op_div, st.tuples(ANY, NONZERO), (0, 1)),
    Case(op_pow, st.tuples(POS, fl(-2.0, 2.0)), (0, 1)),
    Case(op_pow_consts, st.tuples(fl(0.2, 3.0))),
    Case(op_floordiv, st.tuples(ANY, away(0.3, 3.0, 1.0)).filter(lambda a: frac_away(a[0] / a[1], (0.0,))), (0, 1)),
    Case(op_mod, st.tuples(ANY, fl(0.3, 3.0)).filter(lambda a: frac_away(a[0] / a[1], (0.0,))), (0, 1)),
    Case(op_unary, st.tuples(ANY)),
    Case(op_int_constants, st.tuples(ANY)),
    # math
    Case(m_sin, st.tuples(ANY)),
    Case(m_cos, st.tuples(ANY)),
    Case(m_tan, st.tuples(fl(-1.2, 1.2))),
    Case(m_asin, st.tuples(fl(-0.9, 0.9))),
    Case(m_acos, st.tuples(fl(-0.9, 0.9))),
    Case(m_atan, st.tuples(ANY)),
    Case(m_atan2, st.tuples(away(-3.0, 3.0, 0.0, margin=0.2), ANY), (0, 1)),
    Case(m_sinh, st.tuples(ANY)),
    Case(m_cosh, st.tuples(ANY)),
    Case(m_tanh, st.tuples(ANY)),
    Case(m_exp, st.tuples(fl(-5.0, 5.0))),
    Case(m_expm1, st.tuples(fl(-5.0, 5.0))),
    Case(m_log, st.tuples(POS)),
    Case(m_log_base, st.tuples(POS, fl(1.5, 10.0)), (0, 1)),
    Case(m_log1p, st.tuples(fl(-0.8, 4.0))),
    Case(m_log2, st.tuples(POS)),
    Case(m_log10, st.tuples(POS)),
    Case(m_sqrt, st.tuples(POS)),
    Case(m_pow, st.tuples(POS, fl(-2.0, 2.0)), (0, 1)),
    Case(m_hypot2, st.tuples(ANY, ANY).filter(lambda a: math.hypot(*a) > 0.2), (0, 1)),
    Case(m_hypot3, st.tuples(ANY, ANY, ANY).filter(lambda a: math.hypot(*a) > 0.2), (0, 1, 2)),
    Case(m_fabs, st.tuples(NONZERO)),
    Case(m_erf, st.tuples(ANY)),
    # builtins
    Case(b_abs, st.tuples(NONZERO, ANY), (0, 1)),
    Case(b_min3, st.tuples(ANY, ANY, ANY).filter(spread), (0, 1, 2)),
    Case(b_max3, st.tuples(ANY, ANY, ANY).filter(spread), (0, 1, 2)),
    Case(b_minmax2, st.tuples(ANY, ANY).filter(spread), (0, 1)),
    Case(b_relu, st.tuples(NONZERO)),
    Case(b_pow, st.tuples(POS, fl(-2.0, 2.0)), (0, 1)),
    Case(
        b_discrete,
        st.tuples(
            ANY.filter(lambda v: frac_away(v, (0.0, 0.5), 0.01) and frac_away(10 * v, (0.5,), 0.01)), st.integers(-3, 3)
        ),
        (0, 1),
    ),
    Case(b_float_passthrough, st.tuples(ANY)),
    Case(b_int_arg, st.tuples(ANY, st.integers(0, 4)), (0, 1)),
    # control flow
    Case(cf_if_else, st.tuples(away(-3.0, 3.0, 1.0), ANY), (0, 1)),
    Case(cf_elif, st.tuples(away(-3.0, 3.0, -1.0, 1.0))),
    Case(cf_early_return, st.tuples(away(-3.0, 3.0, 0.0), ANY), (0, 1)),
    Case(cf_nested_partial, st.tuples(away(-3.0, 3.0, 0.0), away(-3.0, 3.0, 0.0)), (0, 1)),
    Case(cf_if_no_else, st.tuples(away(-3.0, 3.0, 0.5), ANY), (0, 1)),
    Case(cf_nested_join, st.tuples(away(-3.0, 3.0, 0.0), away(-3.0, 3.0, 0.0)), (0, 1)),
    Case(cf_elif_returns, st.tuples(away(-3.0, 3.0, 0.0, 1.0, 2.0))),
    Case(cf_dead_case_inactive_result, st.tuples(ANY.filter(lambda v: frac_away(v, (0.0,))))),
    Case(cf_dead_case_in_returning_branch, st.tuples(away(-3.0, 3.0, 0.0), away(-3.0, 3.0, 0.0)), (0, 1)),
    Case(cf_ifexp, st.tuples(ANY, away(-3.0, 3.0, 0.0)).filter(lambda a: abs(a[0] - a[1]) > 0.05), (0, 1)),
    Case(cf_and_or, st.tuples(away(-3.0, 3.0, 1.0), NONZERO), (0, 1)),
    Case(cf_and_or_operands, st.tuples(NONZERO, ANY), (0, 1)),
    Case(cf_chained, st.tuples(away(-2.0, 2.0, 0.0, 1.0), away(-2.0, 3.0, 1.0)), (0, 1)),
    Case(cf_not, st.tuples(away(0.1, 3.0, 0.5))),
    Case(cf_discrete_tests, st.tuples(ANY, st.integers(0, 2), st.sampled_from(["a", "b", "c", None])), (0, 1, 2)),
    # tuples
    Case(t_tuple_in, st.tuples(st.tuples(ANY, ANY), ANY), (0, 1)),
    Case(t_nested_unpack, st.tuples(st.tuples(st.tuples(ANY, st.tuples(ANY, ANY)), ANY))),
    Case(t_negative_index, st.tuples(st.tuples(ANY, ANY, ANY))),
    Case(t_build_and_index, st.tuples(ANY, ANY), (0, 1)),
    Case(t_cond_tuple, st.tuples(ANY, ANY).filter(spread), (0, 1)),
    Case(t_mixed_tuple, st.tuples(st.tuples(ANY, st.integers(-3, 3)))),
    Case(t_module_tuple, st.tuples(ANY)),
    # user function calls
    Case(u_calls, st.tuples(ANY, ANY), (0, 1)),
    Case(u_inactive_kwonly_call, st.tuples(ANY, ANY), (0, 1)),
    Case(u_tuple_returning, st.tuples(ANY, ANY), (0, 1)),
    Case(u_one_param_callee, st.tuples(ANY, ANY), (0, 1)),
    Case(u_rec_tuple, st.tuples(fl(-1.5, 1.5), st.integers(0, 5)), (0, 1)),
    Case(u_power, st.tuples(fl(-2.0, 2.0), st.integers(0, 6)), (0, 1)),
    Case(u_mutual, st.tuples(fl(-2.0, 2.0), st.integers(0, 5)), (0, 1)),
    Case(u_decorated_callee, st.tuples(ANY, ANY), (0, 1)),
    # constants, aliases, statements
    Case(c_constants, st.tuples(ANY)),
    Case(c_aliases, st.tuples(fl(-2.0, 2.0), ANY), (0, 1)),
    Case(s_assert, st.tuples(ANY, POS), (0, 1)),
    Case(s_reassign, st.tuples(ANY, NONZERO), (0, 1)),
    Case(s_aug_mod, st.tuples(ANY, fl(0.3, 3.0)).filter(lambda a: frac_away(a[0] / a[1], (0.0,))), (0, 1)),
    Case(s_generated_name_clash, st.tuples(ANY, ANY, ANY), (0, 1, 2)),
    Case(s_docstring_pass, st.tuples(ANY)),
    # independence
    Case(i_ignores_y, st.tuples(ANY, ANY), (0, 1)),
    Case(i_constant_out, st.tuples(ANY)),
    Case(i_through_discrete, st.tuples(ANY.filter(lambda v: frac_away(v, (0.0,))))),
    # larger examples
    Case(rosenbrock, st.tuples(fl(-2.0, 2.0), fl(-1.0, 3.0)), (0, 1)),
    Case(logistic_loss, st.tuples(ANY, ANY, ANY, st.sampled_from([0, 1])), (0, 1, 2, 3)),
    Case(chain20, st.tuples(fl(-1.0, 1.0))),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
@no_explain
@given(data=st.data())
def test_gradient_matches_finite_differences(case, data):
    args = data.draw(case.args, label="args")
    assert_grad_matches_fd(case.fn, args, case.argnums)


@pytest.mark.parametrize("case", CASES, ids=repr)
@no_explain
@given(data=st.data())
def test_decorated_call_is_the_original_function(case, data):
    args = data.draw(case.args, label="args")
    decorated = chad.reverse(case.fn)
    assert_same(decorated(*args), case.fn(*args), "decorated(*args)")


# ====================================================================== fixed points: branches and closed forms


FIXED = [
    # (function, args, argnums, expected gradient)
    (cf_if_else, (2.0, 3.0), (0, 1), (2 * 6.0 * 3.0, 2 * 6.0 * 2.0)),
    (cf_if_else, (0.5, 3.0), (0, 1), (2 * 3.5, 2 * 3.5)),
    (cf_elif, (-2.0,), 0, 4.0 + 1.0),
    (cf_elif, (0.0,), 0, 4.0),
    (cf_elif, (4.0,), 0, 0.25 + 1.0),
    (cf_early_return, (-1.0, 3.0), (0, 1), (0.0, 6.0)),
    (cf_early_return, (2.0, 3.0), (0, 1), (4.0, 2.0)),
    (cf_nested_partial, (2.0, 3.0), (0, 1), (3.0, 2.0)),
    (cf_nested_partial, (2.0, -3.0), (0, 1), (-2.0, -2.0)),
    (cf_nested_partial, (-2.0, 3.0), (0, 1), (-10.0, 10.0)),
    (cf_nested_join, (1.0, 2.0), (0, 1), (4.0, 2.0)),
    (cf_nested_join, (1.0, -2.0), (0, 1), (2.0, -2.0)),
    (cf_nested_join, (-1.0, 2.0), (0, 1), (0.0, 2.0)),
    (cf_elif_returns, (-1.5,), 0, -1.0),
    (cf_elif_returns, (0.5,), 0, 1.0),
    (cf_elif_returns, (1.5,), 0, 2.0),
    (cf_elif_returns, (2.5,), 0, 0.0),
    (cf_dead_case_inactive_result, (0.5,), 0, 0.0),
    (cf_dead_case_inactive_result, (1.5,), 0, 0.0),
    (cf_dead_case_inactive_result, (-0.5,), 0, 0.0),
    (cf_dead_case_in_returning_branch, (1.0, 2.0), (0, 1), (0.0, 0.0)),
    (cf_dead_case_in_returning_branch, (-1.0, 2.0), (0, 1), (2.0, -1.0)),
    (cf_ifexp, (3.0, 2.0), (0, 1), (2 * 6.0 * 2.0, 2 * 6.0 * 3.0 + 1.0)),
    (cf_ifexp, (1.0, 2.0), (0, 1), (-2.0, 2.0 + 1.0)),
    (cf_ifexp, (1.0, -2.0), (0, 1), (2 * -2.0 * -2.0, 2 * -2.0 * 1.0 + 2.0)),
    (cf_and_or, (2.0, 3.0), (0, 1), (3.0, 2.0)),
    (cf_and_or, (0.5, 3.0), (0, 1), (0.0, 6.0)),
    (cf_and_or, (2.0, 0.0), (0, 1), (0.0, 0.0)),  # x * y == 0.0 is falsy: `or` returns y * y
    (cf_and_or_operands, (2.0, 5.0), (0, 1), (3.0, 2.0)),
    (cf_and_or_operands, (0.0, 5.0), (0, 1), (2.0, 3.0)),  # x == 0.0: `and` returns x, `or` returns y
    (cf_chained, (0.5, 2.0), (0, 1), (2.0, 0.5)),
    (cf_chained, (0.5, 0.5), (0, 1), (1.0, 1.0)),
    (cf_chained, (1.5, 2.0), (0, 1), (1.0, 1.0)),
    (cf_chained, (-0.5, 2.0), (0, 1), (1.0, 1.0)),
    (cf_not, (0.25,), 0, 0.5),
    (cf_not, (2.0,), 0, -0.25),
    (cf_discrete_tests, (3.0, 0, "a"), (0, 1, 2), (1.0, None, None)),
    (cf_discrete_tests, (3.0, 2, None), (0, 1, 2), (1.0, None, None)),
    (cf_discrete_tests, (3.0, 2, "b"), (0, 1, 2), (6.0, None, None)),
    (cf_discrete_tests, (3.0, 1, "b"), (0, 1, 2), (-1.0, None, None)),
    (cf_discrete_tests, (3.0, 2, "z"), (0, 1, 2), (-1.0, None, None)),
    (b_abs, (-2.0, 3.0), (0, 1), (-3.0, 2.0)),
    (b_abs, (0.0, 3.0), (0, 1), (0.0, 0.0)),  # sign(0) = 0
    (m_fabs, (0.0,), 0, 0.0),
    (b_min3, (1.0, -2.0, 3.0), (0, 1, 2), (0.0, 1.0, 0.0)),
    (b_min3, (1.0, 1.0, 3.0), (0, 1, 2), (1.0, 0.0, 0.0)),  # a tie goes to the first, as builtins.min
    (b_max3, (1.0, -2.0, 3.0), (0, 1, 2), (0.0, 0.0, 2.0)),
    (b_max3, (3.0, -2.0, 3.0), (0, 1, 2), (2.0, 0.0, 0.0)),  # a tie goes to the first, as builtins.max
    (m_hypot3, (1.0, 2.0, 2.0), (0, 1, 2), (1 / 3, 2 / 3, 2 / 3)),
    (m_hypot3, (0.0, 0.0, 0.0), (0, 1, 2), (0.0, 0.0, 0.0)),
    (m_log_base, (8.0, 2.0), (0, 1), (1 / (8.0 * math.log(2.0)), -3.0 / (2.0 * math.log(2.0)))),
    (op_mod, (7.5, 2.0), (0, 1), (1.0, -3.0)),
    (op_mod, (-7.5, 2.0), (0, 1), (1.0, 4.0)),
    (op_pow, (2.0, 3.0), (0, 1), (12.0, 8.0 * math.log(2.0))),
    (op_pow, (0.0, 2.0), (0, 1), (0.0, 0.0)),
    (b_int_arg, (2.0, 3), (0, 1), (12.0, None)),
    (b_int_arg, (2.0, 0), (0, 1), (0.0, None)),
    (t_mixed_tuple, ((2.5, 4),), 0, (4.0, None)),
    (t_tuple_in, ((2.0, 3.0), 5.0), (0, 1), ((3.0 + 1.0, 2.0 + 5.0), 3.0)),
    (t_negative_index, ((1.0, 2.0, 3.0),), 0, (1.0, 3.0, 2.0)),
    (u_power, (1.5, 5), (0, 1), (5 * 1.5**4, None)),
    (u_inactive_kwonly_call, (1.5, 2.0), (0, 1), (4.25 + 1.0, 9.5 + 1.0)),
    (u_one_param_callee, (1.5, 2.0), (0, 1), (2 * 1.5 + 2 * 3.0 * 2.0, 2 * 3.0 * 1.5)),
    (u_rec_tuple, (2.0, 2), (0, 1), (3 * 4.0 + 2 * 2.0 + 1.0, None)),
    (b_relu, (1.5,), 0, 3.0),
    (b_relu, (-1.5,), 0, 3.0),
    (t_cond_tuple, (1.0, 2.0), (0, 1), (1.0, 2.0)),
    (t_cond_tuple, (3.0, 2.0), (0, 1), (2.0, 1.0)),
    (u_power, (1.5, 0), (0, 1), (0.0, None)),
    (i_ignores_y, (1.0, 2.0), (0, 1), (2.0, 0.0)),
    (i_constant_out, (1.0,), 0, 0.0),
    (i_through_discrete, (1.5,), 0, 0.0),
    (rosenbrock, (1.0, 1.0), (0, 1), (0.0, 0.0)),
    (rosenbrock, (0.0, 0.0), (0, 1), (-2.0, 0.0)),
    (logistic_loss, (0.0, 0.0, 2.0, 1), (0, 1, 2, 3), (-1.0, -0.5, 0.0, None)),
    (logistic_loss, (0.0, 0.0, 2.0, 0), (0, 1, 2, 3), (1.0, 0.5, 0.0, None)),
]


@pytest.mark.parametrize("simplify", [True, False])
@pytest.mark.parametrize(("fn", "args", "argnums", "expected"), FIXED, ids=[f"{c[0].__name__}{c[1]}" for c in FIXED])
def test_gradient_at_fixed_points(fn, args, argnums, expected, simplify):
    g = chad.grad(fn, argnums=argnums, simplify=simplify)(*args)
    assert_close(g, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("fn", "args", "argnums"),
    [
        (cf_if_else, (2.0, 3.0), (0, 1)),
        (cf_if_else, (0.5, 3.0), (0, 1)),
        (cf_elif, (-2.0,), 0),
        (cf_elif, (0.0,), 0),
        (cf_elif, (4.0,), 0),
        (cf_nested_partial, (2.0, 3.0), (0, 1)),
        (cf_nested_partial, (2.0, -3.0), (0, 1)),
        (cf_nested_partial, (-2.0, 3.0), (0, 1)),
        (cf_chained, (0.5, 2.0), (0, 1)),
        (cf_chained, (0.5, 0.5), (0, 1)),
        (u_mutual, (0.7, 0), (0, 1)),
        (u_mutual, (0.7, 1), (0, 1)),
        (u_mutual, (0.7, 4), (0, 1)),
        (logistic_loss, (0.3, -0.2, 1.5, 1), (0, 1, 2, 3)),
        (logistic_loss, (0.3, -0.2, 1.5, 0), (0, 1, 2, 3)),
        (chain20, (0.3,), 0),
        (chain20, (-0.9,), 0),
    ],
)
def test_fixed_points_match_finite_differences(fn, args, argnums):
    """Each branch, taken on purpose, at a point well inside it."""
    assert_grad_matches_fd(fn, args, argnums)


def test_rosenbrock_closed_form():
    for x, y in [(-1.2, 1.0), (0.5, -0.3), (2.0, 4.5)]:
        dx = -2.0 * (1.0 - x) - 400.0 * x * (y - x * x)
        dy = 200.0 * (y - x * x)
        for simplify in (True, False):
            assert_close(chad.grad(rosenbrock, argnums=(0, 1), simplify=simplify)(x, y), (dx, dy), 1e-12, 1e-12)


@no_explain
@given(x=fl(-2.0, 2.0), n=st.integers(0, 8))
def test_recursive_power_closed_form(x, n):
    g = chad.grad(power)(x, n)
    expected = 0.0 if n == 0 else n * x ** (n - 1)
    assert_close(g, expected, rtol=1e-12, atol=1e-12)


def test_assert_statement_still_checks_at_run_time():
    with pytest.raises(AssertionError, match="y must be positive"):
        chad.grad(s_assert, argnums=(0, 1))(1.0, -1.0)
    with pytest.raises(AssertionError, match="y must be positive"):
        chad.grad(s_assert, argnums=(0, 1), simplify=False)(1.0, -1.0)


# ====================================================================== API conventions


@chad.reverse
def d_single(x):
    return x * x * x


@chad.reverse
def d_two(x, y):
    return math.sin(x) * y


@chad.reverse
def d_tuple_arg(p):
    a, b = p
    return a * b * b


@chad.reverse
def d_tuple_out(x, y):
    return (x * y, x + y, 7)


@chad.reverse
def d_nested_out(x, y):
    return ((x * y, x), y * y)


def aux_fn(x, y):
    return x * y * y, x + 1.0


def aux_int_fn(x, y):
    return x * y, (3, "label")


def kw_entry(x, y=2.0, *, k=3.0):
    return x * y * k


def test_reverse_grad_single_argument_is_bare():
    g = d_single.grad(2.0)
    assert type(g) is float
    assert g == 12.0


def test_reverse_grad_two_arguments_is_tuple():
    g = d_two.grad(0.5, 3.0)
    assert isinstance(g, tuple) and len(g) == 2
    assert_close(g, (math.cos(0.5) * 3.0, math.sin(0.5)), 1e-15, 0.0)


def test_reverse_grad_single_tuple_argument_is_that_tuple():
    g = d_tuple_arg.grad((2.0, 3.0))
    assert_same(g, (9.0, 12.0))


def test_reverse_value_and_grad():
    value, g = d_two.value_and_grad(0.5, 3.0)
    assert value == math.sin(0.5) * 3.0
    assert_close(g, (math.cos(0.5) * 3.0, math.sin(0.5)), 1e-15, 0.0)
    value, g = d_single.value_and_grad(2.0)
    assert (value, g) == (8.0, 12.0)
    assert type(g) is float


def test_reverse_call_and_repr():
    assert d_two(0.5, 3.0) == math.sin(0.5) * 3.0
    assert d_single(2.0) == 8.0
    assert d_single.__name__ == "d_single"
    assert "d_single" in repr(d_single)


def test_reverse_vjp_scalar():
    y, pullback = d_single.vjp(2.0)
    assert y == 8.0
    ct = pullback(1.0)
    assert isinstance(ct, tuple) and len(ct) == 1
    assert ct == (12.0,)
    assert pullback(2.0) == (24.0,)


def test_vjp_tuple_output_cotangent():
    y, pullback = d_tuple_out.vjp(2.0, 3.0)
    assert y == (6.0, 5.0, 7)
    assert_same(pullback((1.0, 0.5, None)), (3.0 + 0.5, 2.0 + 0.5))
    assert_same(pullback((0.0, 1.0, None)), (1.0, 1.0))
    for simplify in (True, False):
        y, pullback = chad.vjp(d_tuple_out, 2.0, 3.0, simplify=simplify)
        assert y == (6.0, 5.0, 7)
        assert_same(pullback((2.0, 0.0, None)), (6.0, 4.0))


def test_vjp_nested_tuple_output_cotangent():
    y, pullback = chad.vjp(d_nested_out, 2.0, 3.0)
    assert y == ((6.0, 2.0), 9.0)
    assert_same(pullback(((1.0, 1.0), 1.0)), (3.0 + 1.0, 2.0 + 6.0))
    assert_same(pullback(((0.0, 0.0), 0.5)), (0.0, 3.0))


def test_vjp_matches_finite_differences_per_component():
    args = (0.7, -1.3)
    _, pullback = chad.vjp(d_nested_out, *args)
    for k, ct in enumerate([((1.0, 0.0), 0.0), ((0.0, 1.0), 0.0), ((0.0, 0.0), 1.0)]):
        component = [
            lambda x, y: d_nested_out(x, y)[0][0],
            lambda x, y: d_nested_out(x, y)[0][1],
            lambda x, y: d_nested_out(x, y)[1],
        ][k]
        expected = tuple(central_diff(component, args, i) for i in range(2))
        assert_close(pullback(ct), expected)


def test_vjp_with_tuple_input():
    y, pullback = chad.vjp(t_tuple_in, (2.0, 3.0), 5.0)
    assert y == t_tuple_in((2.0, 3.0), 5.0)
    assert_same(pullback(1.0), ((4.0, 7.0), 3.0))


def test_vjp_wrong_cotangent_structure():
    _, pullback = chad.vjp(d_tuple_out, 2.0, 3.0)
    with pytest.raises(chad.ChadTypeError):
        pullback((1.0, 2.0))


def test_has_aux_grad():
    g, aux = chad.grad(aux_fn, has_aux=True)(2.0, 3.0)
    assert g == 9.0 and aux == 3.0
    g, aux = chad.grad(aux_fn, argnums=(0, 1), has_aux=True)(2.0, 3.0)
    assert g == (9.0, 12.0) and aux == 3.0
    g, aux = chad.grad(aux_int_fn, argnums=(0, 1), has_aux=True, simplify=False)(2.0, 3.0)
    assert g == (3.0, 2.0) and aux == (3, "label")


def test_has_aux_value_and_grad():
    (value, aux), g = chad.value_and_grad(aux_fn, argnums=1, has_aux=True)(2.0, 3.0)
    assert value == 18.0 and aux == 3.0 and g == 12.0
    (value, aux), g = chad.value_and_grad(aux_int_fn, argnums=(0, 1), has_aux=True)(2.0, 3.0)
    assert (value, aux, g) == (6.0, (3, "label"), (3.0, 2.0))


def test_has_aux_vjp():
    out, pullback, aux = chad.vjp(aux_fn, 2.0, 3.0, has_aux=True)
    assert out == 18.0 and aux == 3.0
    assert_same(pullback(1.0), (9.0, 12.0))
    assert_same(pullback(0.5), (4.5, 6.0))
    out, pullback, aux = chad.vjp(aux_int_fn, 2.0, 3.0, has_aux=True, simplify=False)
    assert (out, aux) == (6.0, (3, "label"))
    assert_same(pullback(1.0), (3.0, 2.0))


def test_has_aux_needs_a_pair():
    with pytest.raises(chad.ChadTypeError):
        chad.grad(op_mul, has_aux=True)(2.0, 3.0)


def test_argnums_int_vs_tuple():
    f = op_div
    assert chad.grad(f, argnums=0)(3.0, 2.0) == 0.5
    assert chad.grad(f, argnums=1)(3.0, 2.0) == -0.75
    assert chad.grad(f, argnums=(0,))(3.0, 2.0) == (0.5,)
    assert chad.grad(f, argnums=(1, 0))(3.0, 2.0) == (-0.75, 0.5)
    assert chad.grad(f, argnums=(0, 1))(3.0, 2.0) == (0.5, -0.75)
    assert chad.grad(f)(3.0, 2.0) == 0.5  # the default is argnums=0


def test_argnums_negative():
    assert chad.grad(op_div, argnums=-1)(3.0, 2.0) == -0.75
    assert chad.grad(op_div, argnums=-2)(3.0, 2.0) == 0.5
    assert chad.grad(op_div, argnums=(-1, 0))(3.0, 2.0) == (-0.75, 0.5)
    assert chad.value_and_grad(m_hypot3, argnums=-1)(1.0, 2.0, 2.0) == (3.0, 2.0 / 3.0)


def test_argnums_out_of_range():
    with pytest.raises(chad.ChadError):
        chad.grad(op_div, argnums=2)(3.0, 2.0)
    with pytest.raises(chad.ChadError):
        chad.grad(op_div, argnums=(0, -3))(3.0, 2.0)


def test_undifferentiated_float_argument_gets_no_cotangent_work():
    # only argnums=0 is differentiated; the other float is a constant
    assert_close(chad.grad(rosenbrock, argnums=0)(0.5, 1.0), -151.0, 1e-12, 0.0)
    assert_close(chad.grad(rosenbrock, argnums=1)(0.5, 1.0), 150.0, 1e-12, 0.0)


def test_keyword_arguments_at_the_call():
    assert chad.grad(kw_entry)(1.5) == 6.0
    assert chad.grad(kw_entry, argnums=(0, 1))(1.5, 4.0, k=0.5) == (2.0, 0.75)
    assert chad.grad(kw_entry)(1.5, y=4.0) == 12.0
    value, g = chad.value_and_grad(kw_entry, argnums=(0, 1), simplify=False)(1.5, 4.0, k=0.5)
    assert value == kw_entry(1.5, 4.0, k=0.5) and g == (2.0, 0.75)


def test_grad_accepts_decorated_and_plain_functions():
    plain = chad.grad(d_two.__wrapped__, argnums=(0, 1))(0.5, 3.0)
    decorated = chad.grad(d_two, argnums=(0, 1))(0.5, 3.0)
    assert_same(plain, decorated)
    assert_same(decorated, d_two.grad(0.5, 3.0))


def test_source_is_generated_python():
    d_two.grad(0.5, 3.0)
    text = d_two.source
    assert isinstance(text, str)
    assert "def d_two_chad" in text
    compile(text, "<test>", "exec")
    for simplify in (True, False):
        for annotate in (True, False):
            text = chad.source(cf_if_else, 2.0, 3.0, simplify=simplify, annotate=annotate)
            assert "def cf_if_else_chad" in text
            compile(text, "<test>", "exec")
            assert ("# line" in text) == annotate


def test_module_constant_rebinding_invalidates_the_cache(monkeypatch):
    module = sys.modules[__name__]
    assert chad.grad(c_constants)(1.0) == SCALE + 2.0 * math.pi
    monkeypatch.setattr(module, "SCALE", 4.0)
    assert chad.grad(c_constants)(1.0) == 4.0 + 2.0 * math.pi


def test_one_gradient_function_sees_a_rebinding(monkeypatch):
    # a gradient function keeps its plans: a rebound constant must still reach it
    g = chad.grad(c_constants)
    assert g(1.0) == SCALE + 2.0 * math.pi
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 4.0)
    assert g(1.0) == 4.0 + 2.0 * math.pi


def first_row_sum(x, y):
    return np.sum(x[0] * 3.0) + 0.0 * y


def test_one_gradient_function_follows_its_arguments_types():
    # one gradient function, called with arguments of other types and ranks: each gets its own derivative
    g = chad.grad(first_row_sum, argnums=(0, 1))
    rows = [np.ones(2), np.ones(2)]
    for x in (np.ones(3), np.ones((2, 2)), np.ones((2, 2), np.float32), [1.0, 2.0], rows, np.arange(3), np.ones(3)):
        dx, dy = g(x, 2.0)
        if isinstance(x, np.ndarray) and x.dtype.kind == "i":
            assert dx is None  # an int array is not differentiated
        else:
            want = np.zeros(np.shape(x))
            want[0] = 3.0
            assert type(dx) is type(x) and np.array_equal(dx, want)
            assert getattr(dx, "dtype", None) == getattr(x, "dtype", None)
        assert type(dy) is float and dy == 0.0  # a zero cotangent, as a float
    assert chad.source(first_row_sum) == chad.source(first_row_sum, np.ones(3), 2.0)  # the last call's types
    h = chad.grad(first_row_sum, argnums=0)
    for x in (2.0, np.float32(2.0), 2.0):  # a float, then a NumPy scalar (its type comes back)
        dx = h([x, 1.0], 2.0)
        assert type(dx[0]) is type(x) and dx == [3.0, 0.0]


def test_reverse_keeps_one_gradient_function_per_number_of_arguments():
    assert d_two.grad(0.5, 3.0) == (math.cos(0.5) * 3.0, math.sin(0.5))
    assert d_two.value_and_grad(0.5, 3.0) == (d_two(0.5, 3.0), (math.cos(0.5) * 3.0, math.sin(0.5)))
    assert d_two.grad(0.5, y=3.0) == math.cos(0.5) * 3.0  # one positional argument: the bare gradient
    assert d_two.grad(0.5, 3.0) == (math.cos(0.5) * 3.0, math.sin(0.5))


def rebindable(x, k):
    return x * k * 2.0


def rebound(x, k):
    return x * k * 3.0


def u_rebindable(x):
    return rebindable(x, 1.0)


def test_rebinding_a_called_function_invalidates_the_cache(monkeypatch):
    module = sys.modules[__name__]
    assert chad.grad(u_rebindable)(1.5) == 2.0
    monkeypatch.setattr(module, "rebindable", rebound)
    assert chad.grad(u_rebindable)(1.5) == 3.0


def test_discrete_arguments_get_none():
    assert chad.grad(op_mul)(3, 2.0) is None
    assert chad.grad(op_mul, argnums=(0, 1))(3, 2.0) == (None, 3.0)
    assert chad.grad(op_mul, argnums=(0, 1))(True, 2.0) == (None, 1.0)
    g = chad.grad(t_mixed_tuple)((2.0, 5))
    assert_same(g, (5.0, None))
    assert chad.grad(cf_discrete_tests, argnums=(0, 1, 2))(2.0, 2, "a") == (4.0, None, None)


def cube_root_user(x):
    return math.cbrt(x) * 2.0


def test_defvjp_user_rule():
    calls = []

    def cbrt_vjp(d, y, x):
        calls.append((d, y, x))
        return (d / (3.0 * y * y),)

    saved = PRIMITIVES[math.cbrt]
    chad.defvjp(math.cbrt, cbrt_vjp)  # a user rule replaces chadpy's own
    try:
        for simplify in (True, False):
            assert_close(chad.grad(cube_root_user, simplify=simplify)(8.0), 2.0 / 12.0, 1e-15, 0.0)
        assert calls and calls[0][1:] == (2.0, 8.0)
        assert_grad_matches_fd(cube_root_user, (3.3,), 0)
    finally:
        PRIMITIVES[math.cbrt] = saved
