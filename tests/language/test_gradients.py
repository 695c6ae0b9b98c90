"""Gradients of the supported language, checked against central differences.

Every function is defined at module level (chadpy reads source with `inspect`).
Each is checked in both code generation modes (simplify=True/False), which must
agree exactly, and the primal value must be unchanged.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chadpy as chad
from chadpy.rules.registry import PRIMITIVES
from tests.language import gradient_programs as P
from tests.support.fd import assert_close, assert_grad_matches_fd, assert_same, central_diff, no_explain

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
    Case(P.op_add, st.tuples(ANY, ANY), (0, 1)),
    Case(P.op_sub, st.tuples(ANY, ANY), (0, 1)),
    Case(P.op_mul, st.tuples(ANY, ANY), (0, 1)),
    Case(P.op_div, st.tuples(ANY, NONZERO), (0, 1)),
    Case(P.op_pow, st.tuples(POS, fl(-2.0, 2.0)), (0, 1)),
    Case(P.op_pow_consts, st.tuples(fl(0.2, 3.0))),
    Case(P.op_floordiv, st.tuples(ANY, away(0.3, 3.0, 1.0)).filter(lambda a: frac_away(a[0] / a[1], (0.0,))), (0, 1)),
    Case(P.op_mod, st.tuples(ANY, fl(0.3, 3.0)).filter(lambda a: frac_away(a[0] / a[1], (0.0,))), (0, 1)),
    Case(P.op_unary, st.tuples(ANY)),
    Case(P.op_int_constants, st.tuples(ANY)),
    # math
    Case(P.m_sin, st.tuples(ANY)),
    Case(P.m_cos, st.tuples(ANY)),
    Case(P.m_tan, st.tuples(fl(-1.2, 1.2))),
    Case(P.m_asin, st.tuples(fl(-0.9, 0.9))),
    Case(P.m_acos, st.tuples(fl(-0.9, 0.9))),
    Case(P.m_atan, st.tuples(ANY)),
    Case(P.m_atan2, st.tuples(away(-3.0, 3.0, 0.0, margin=0.2), ANY), (0, 1)),
    Case(P.m_sinh, st.tuples(ANY)),
    Case(P.m_cosh, st.tuples(ANY)),
    Case(P.m_tanh, st.tuples(ANY)),
    Case(P.m_exp, st.tuples(fl(-5.0, 5.0))),
    Case(P.m_expm1, st.tuples(fl(-5.0, 5.0))),
    Case(P.m_log, st.tuples(POS)),
    Case(P.m_log_base, st.tuples(POS, fl(1.5, 10.0)), (0, 1)),
    Case(P.m_log1p, st.tuples(fl(-0.8, 4.0))),
    Case(P.m_log2, st.tuples(POS)),
    Case(P.m_log10, st.tuples(POS)),
    Case(P.m_sqrt, st.tuples(POS)),
    Case(P.m_pow, st.tuples(POS, fl(-2.0, 2.0)), (0, 1)),
    Case(P.m_hypot2, st.tuples(ANY, ANY).filter(lambda a: math.hypot(*a) > 0.2), (0, 1)),
    Case(P.m_hypot3, st.tuples(ANY, ANY, ANY).filter(lambda a: math.hypot(*a) > 0.2), (0, 1, 2)),
    Case(P.m_fabs, st.tuples(NONZERO)),
    Case(P.m_erf, st.tuples(ANY)),
    # builtins
    Case(P.b_abs, st.tuples(NONZERO, ANY), (0, 1)),
    Case(P.b_min3, st.tuples(ANY, ANY, ANY).filter(spread), (0, 1, 2)),
    Case(P.b_max3, st.tuples(ANY, ANY, ANY).filter(spread), (0, 1, 2)),
    Case(P.b_minmax2, st.tuples(ANY, ANY).filter(spread), (0, 1)),
    Case(P.b_relu, st.tuples(NONZERO)),
    Case(P.b_pow, st.tuples(POS, fl(-2.0, 2.0)), (0, 1)),
    Case(
        P.b_discrete,
        st.tuples(
            ANY.filter(lambda v: frac_away(v, (0.0, 0.5), 0.01) and frac_away(10 * v, (0.5,), 0.01)), st.integers(-3, 3)
        ),
        (0, 1),
    ),
    Case(P.b_float_passthrough, st.tuples(ANY)),
    Case(P.b_int_arg, st.tuples(ANY, st.integers(0, 4)), (0, 1)),
    # control flow
    Case(P.cf_if_else, st.tuples(away(-3.0, 3.0, 1.0), ANY), (0, 1)),
    Case(P.cf_elif, st.tuples(away(-3.0, 3.0, -1.0, 1.0))),
    Case(P.cf_early_return, st.tuples(away(-3.0, 3.0, 0.0), ANY), (0, 1)),
    Case(P.cf_nested_partial, st.tuples(away(-3.0, 3.0, 0.0), away(-3.0, 3.0, 0.0)), (0, 1)),
    Case(P.cf_if_no_else, st.tuples(away(-3.0, 3.0, 0.5), ANY), (0, 1)),
    Case(P.cf_nested_join, st.tuples(away(-3.0, 3.0, 0.0), away(-3.0, 3.0, 0.0)), (0, 1)),
    Case(P.cf_elif_returns, st.tuples(away(-3.0, 3.0, 0.0, 1.0, 2.0))),
    Case(P.cf_dead_case_inactive_result, st.tuples(ANY.filter(lambda v: frac_away(v, (0.0,))))),
    Case(P.cf_dead_case_in_returning_branch, st.tuples(away(-3.0, 3.0, 0.0), away(-3.0, 3.0, 0.0)), (0, 1)),
    Case(P.cf_ifexp, st.tuples(ANY, away(-3.0, 3.0, 0.0)).filter(lambda a: abs(a[0] - a[1]) > 0.05), (0, 1)),
    Case(P.cf_and_or, st.tuples(away(-3.0, 3.0, 1.0), NONZERO), (0, 1)),
    Case(P.cf_and_or_operands, st.tuples(NONZERO, ANY), (0, 1)),
    Case(P.cf_chained, st.tuples(away(-2.0, 2.0, 0.0, 1.0), away(-2.0, 3.0, 1.0)), (0, 1)),
    Case(P.cf_not, st.tuples(away(0.1, 3.0, 0.5))),
    Case(P.cf_discrete_tests, st.tuples(ANY, st.integers(0, 2), st.sampled_from(["a", "b", "c", None])), (0, 1, 2)),
    # tuples
    Case(P.t_tuple_in, st.tuples(st.tuples(ANY, ANY), ANY), (0, 1)),
    Case(P.t_nested_unpack, st.tuples(st.tuples(st.tuples(ANY, st.tuples(ANY, ANY)), ANY))),
    Case(P.t_negative_index, st.tuples(st.tuples(ANY, ANY, ANY))),
    Case(P.t_build_and_index, st.tuples(ANY, ANY), (0, 1)),
    Case(P.t_cond_tuple, st.tuples(ANY, ANY).filter(spread), (0, 1)),
    Case(P.t_mixed_tuple, st.tuples(st.tuples(ANY, st.integers(-3, 3)))),
    Case(P.t_module_tuple, st.tuples(ANY)),
    # user function calls
    Case(P.u_calls, st.tuples(ANY, ANY), (0, 1)),
    Case(P.u_inactive_kwonly_call, st.tuples(ANY, ANY), (0, 1)),
    Case(P.u_tuple_returning, st.tuples(ANY, ANY), (0, 1)),
    Case(P.u_one_param_callee, st.tuples(ANY, ANY), (0, 1)),
    Case(P.u_rec_tuple, st.tuples(fl(-1.5, 1.5), st.integers(0, 5)), (0, 1)),
    Case(P.u_power, st.tuples(fl(-2.0, 2.0), st.integers(0, 6)), (0, 1)),
    Case(P.u_mutual, st.tuples(fl(-2.0, 2.0), st.integers(0, 5)), (0, 1)),
    Case(P.u_decorated_callee, st.tuples(ANY, ANY), (0, 1)),
    # constants, aliases, statements
    Case(P.c_constants, st.tuples(ANY)),
    Case(P.c_aliases, st.tuples(fl(-2.0, 2.0), ANY), (0, 1)),
    Case(P.s_assert, st.tuples(ANY, POS), (0, 1)),
    Case(P.s_reassign, st.tuples(ANY, NONZERO), (0, 1)),
    Case(P.s_aug_mod, st.tuples(ANY, fl(0.3, 3.0)).filter(lambda a: frac_away(a[0] / a[1], (0.0,))), (0, 1)),
    Case(P.s_generated_name_clash, st.tuples(ANY, ANY, ANY), (0, 1, 2)),
    Case(P.s_docstring_pass, st.tuples(ANY)),
    # independence
    Case(P.i_ignores_y, st.tuples(ANY, ANY), (0, 1)),
    Case(P.i_constant_out, st.tuples(ANY)),
    Case(P.i_through_discrete, st.tuples(ANY.filter(lambda v: frac_away(v, (0.0,))))),
    # larger examples
    Case(P.rosenbrock, st.tuples(fl(-2.0, 2.0), fl(-1.0, 3.0)), (0, 1)),
    Case(P.logistic_loss, st.tuples(ANY, ANY, ANY, st.sampled_from([0, 1])), (0, 1, 2, 3)),
    Case(P.chain20, st.tuples(fl(-1.0, 1.0))),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
@no_explain
@given(data=st.data())
def test_gradient_matches_finite_differences(case, data):
    args = data.draw(case.args, label="args")
    assert_grad_matches_fd(case.fn, args, case.argnums)


@pytest.mark.parametrize("case", CASES, ids=repr)
@settings(no_explain, max_examples=5)  # a plain call of the function; the gradient tests above draw 30
@given(data=st.data())
def test_decorated_call_is_the_original_function(case, data):
    args = data.draw(case.args, label="args")
    decorated = chad.reverse(case.fn)
    assert_same(decorated(*args), case.fn(*args), "decorated(*args)")


# ====================================================================== fixed points: branches and closed forms


FIXED = [
    # (function, args, argnums, expected gradient)
    (P.cf_if_else, (2.0, 3.0), (0, 1), (2 * 6.0 * 3.0, 2 * 6.0 * 2.0)),
    (P.cf_if_else, (0.5, 3.0), (0, 1), (2 * 3.5, 2 * 3.5)),
    (P.cf_elif, (-2.0,), 0, 4.0 + 1.0),
    (P.cf_elif, (0.0,), 0, 4.0),
    (P.cf_elif, (4.0,), 0, 0.25 + 1.0),
    (P.cf_early_return, (-1.0, 3.0), (0, 1), (0.0, 6.0)),
    (P.cf_early_return, (2.0, 3.0), (0, 1), (4.0, 2.0)),
    (P.cf_nested_partial, (2.0, 3.0), (0, 1), (3.0, 2.0)),
    (P.cf_nested_partial, (2.0, -3.0), (0, 1), (-2.0, -2.0)),
    (P.cf_nested_partial, (-2.0, 3.0), (0, 1), (-10.0, 10.0)),
    (P.cf_nested_join, (1.0, 2.0), (0, 1), (4.0, 2.0)),
    (P.cf_nested_join, (1.0, -2.0), (0, 1), (2.0, -2.0)),
    (P.cf_nested_join, (-1.0, 2.0), (0, 1), (0.0, 2.0)),
    (P.cf_elif_returns, (-1.5,), 0, -1.0),
    (P.cf_elif_returns, (0.5,), 0, 1.0),
    (P.cf_elif_returns, (1.5,), 0, 2.0),
    (P.cf_elif_returns, (2.5,), 0, 0.0),
    (P.cf_dead_case_inactive_result, (0.5,), 0, 0.0),
    (P.cf_dead_case_inactive_result, (1.5,), 0, 0.0),
    (P.cf_dead_case_inactive_result, (-0.5,), 0, 0.0),
    (P.cf_dead_case_in_returning_branch, (1.0, 2.0), (0, 1), (0.0, 0.0)),
    (P.cf_dead_case_in_returning_branch, (-1.0, 2.0), (0, 1), (2.0, -1.0)),
    (P.cf_ifexp, (3.0, 2.0), (0, 1), (2 * 6.0 * 2.0, 2 * 6.0 * 3.0 + 1.0)),
    (P.cf_ifexp, (1.0, 2.0), (0, 1), (-2.0, 2.0 + 1.0)),
    (P.cf_ifexp, (1.0, -2.0), (0, 1), (2 * -2.0 * -2.0, 2 * -2.0 * 1.0 + 2.0)),
    (P.cf_and_or, (2.0, 3.0), (0, 1), (3.0, 2.0)),
    (P.cf_and_or, (0.5, 3.0), (0, 1), (0.0, 6.0)),
    (P.cf_and_or, (2.0, 0.0), (0, 1), (0.0, 0.0)),  # x * y == 0.0 is falsy: `or` returns y * y
    (P.cf_and_or_operands, (2.0, 5.0), (0, 1), (3.0, 2.0)),
    (P.cf_and_or_operands, (0.0, 5.0), (0, 1), (2.0, 3.0)),  # x == 0.0: `and` returns x, `or` returns y
    (P.cf_chained, (0.5, 2.0), (0, 1), (2.0, 0.5)),
    (P.cf_chained, (0.5, 0.5), (0, 1), (1.0, 1.0)),
    (P.cf_chained, (1.5, 2.0), (0, 1), (1.0, 1.0)),
    (P.cf_chained, (-0.5, 2.0), (0, 1), (1.0, 1.0)),
    (P.cf_not, (0.25,), 0, 0.5),
    (P.cf_not, (2.0,), 0, -0.25),
    (P.cf_discrete_tests, (3.0, 0, "a"), (0, 1, 2), (1.0, None, None)),
    (P.cf_discrete_tests, (3.0, 2, None), (0, 1, 2), (1.0, None, None)),
    (P.cf_discrete_tests, (3.0, 2, "b"), (0, 1, 2), (6.0, None, None)),
    (P.cf_discrete_tests, (3.0, 1, "b"), (0, 1, 2), (-1.0, None, None)),
    (P.cf_discrete_tests, (3.0, 2, "z"), (0, 1, 2), (-1.0, None, None)),
    (P.b_abs, (-2.0, 3.0), (0, 1), (-3.0, 2.0)),
    (P.b_abs, (0.0, 3.0), (0, 1), (0.0, 0.0)),  # sign(0) = 0
    (P.m_fabs, (0.0,), 0, 0.0),
    (P.b_min3, (1.0, -2.0, 3.0), (0, 1, 2), (0.0, 1.0, 0.0)),
    (P.b_min3, (1.0, 1.0, 3.0), (0, 1, 2), (1.0, 0.0, 0.0)),  # a tie goes to the first, as builtins.min
    (P.b_max3, (1.0, -2.0, 3.0), (0, 1, 2), (0.0, 0.0, 2.0)),
    (P.b_max3, (3.0, -2.0, 3.0), (0, 1, 2), (2.0, 0.0, 0.0)),  # a tie goes to the first, as builtins.max
    (P.m_hypot3, (1.0, 2.0, 2.0), (0, 1, 2), (1 / 3, 2 / 3, 2 / 3)),
    (P.m_hypot3, (0.0, 0.0, 0.0), (0, 1, 2), (0.0, 0.0, 0.0)),
    (P.m_log_base, (8.0, 2.0), (0, 1), (1 / (8.0 * math.log(2.0)), -3.0 / (2.0 * math.log(2.0)))),
    (P.op_mod, (7.5, 2.0), (0, 1), (1.0, -3.0)),
    (P.op_mod, (-7.5, 2.0), (0, 1), (1.0, 4.0)),
    (P.op_pow, (2.0, 3.0), (0, 1), (12.0, 8.0 * math.log(2.0))),
    (P.op_pow, (0.0, 2.0), (0, 1), (0.0, 0.0)),
    (P.b_int_arg, (2.0, 3), (0, 1), (12.0, None)),
    (P.b_int_arg, (2.0, 0), (0, 1), (0.0, None)),
    (P.t_mixed_tuple, ((2.5, 4),), 0, (4.0, None)),
    (P.t_tuple_in, ((2.0, 3.0), 5.0), (0, 1), ((3.0 + 1.0, 2.0 + 5.0), 3.0)),
    (P.t_negative_index, ((1.0, 2.0, 3.0),), 0, (1.0, 3.0, 2.0)),
    (P.u_power, (1.5, 5), (0, 1), (5 * 1.5**4, None)),
    (P.u_inactive_kwonly_call, (1.5, 2.0), (0, 1), (4.25 + 1.0, 9.5 + 1.0)),
    (P.u_one_param_callee, (1.5, 2.0), (0, 1), (2 * 1.5 + 2 * 3.0 * 2.0, 2 * 3.0 * 1.5)),
    (P.u_rec_tuple, (2.0, 2), (0, 1), (3 * 4.0 + 2 * 2.0 + 1.0, None)),
    (P.b_relu, (1.5,), 0, 3.0),
    (P.b_relu, (-1.5,), 0, 3.0),
    (P.t_cond_tuple, (1.0, 2.0), (0, 1), (1.0, 2.0)),
    (P.t_cond_tuple, (3.0, 2.0), (0, 1), (2.0, 1.0)),
    (P.u_power, (1.5, 0), (0, 1), (0.0, None)),
    (P.i_ignores_y, (1.0, 2.0), (0, 1), (2.0, 0.0)),
    (P.i_constant_out, (1.0,), 0, 0.0),
    (P.i_through_discrete, (1.5,), 0, 0.0),
    (P.rosenbrock, (1.0, 1.0), (0, 1), (0.0, 0.0)),
    (P.rosenbrock, (0.0, 0.0), (0, 1), (-2.0, 0.0)),
    (P.logistic_loss, (0.0, 0.0, 2.0, 1), (0, 1, 2, 3), (-1.0, -0.5, 0.0, None)),
    (P.logistic_loss, (0.0, 0.0, 2.0, 0), (0, 1, 2, 3), (1.0, 0.5, 0.0, None)),
]


@pytest.mark.parametrize("simplify", [True, False])
@pytest.mark.parametrize(("fn", "args", "argnums", "expected"), FIXED, ids=[f"{c[0].__name__}{c[1]}" for c in FIXED])
def test_gradient_at_fixed_points(fn, args, argnums, expected, simplify):
    g = chad.grad(fn, argnums=argnums, simplify=simplify)(*args)
    assert_close(g, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("fn", "args", "argnums"),
    [
        (P.cf_if_else, (2.0, 3.0), (0, 1)),
        (P.cf_if_else, (0.5, 3.0), (0, 1)),
        (P.cf_elif, (-2.0,), 0),
        (P.cf_elif, (0.0,), 0),
        (P.cf_elif, (4.0,), 0),
        (P.cf_nested_partial, (2.0, 3.0), (0, 1)),
        (P.cf_nested_partial, (2.0, -3.0), (0, 1)),
        (P.cf_nested_partial, (-2.0, 3.0), (0, 1)),
        (P.cf_chained, (0.5, 2.0), (0, 1)),
        (P.cf_chained, (0.5, 0.5), (0, 1)),
        (P.u_mutual, (0.7, 0), (0, 1)),
        (P.u_mutual, (0.7, 1), (0, 1)),
        (P.u_mutual, (0.7, 4), (0, 1)),
        (P.logistic_loss, (0.3, -0.2, 1.5, 1), (0, 1, 2, 3)),
        (P.logistic_loss, (0.3, -0.2, 1.5, 0), (0, 1, 2, 3)),
        (P.chain20, (0.3,), 0),
        (P.chain20, (-0.9,), 0),
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
            assert_close(chad.grad(P.rosenbrock, argnums=(0, 1), simplify=simplify)(x, y), (dx, dy), 1e-12, 1e-12)


@no_explain
@given(x=fl(-2.0, 2.0), n=st.integers(0, 8))
def test_recursive_power_closed_form(x, n):
    g = chad.grad(P.power)(x, n)
    expected = 0.0 if n == 0 else n * x ** (n - 1)
    assert_close(g, expected, rtol=1e-12, atol=1e-12)


def test_assert_statement_still_checks_at_run_time():
    with pytest.raises(AssertionError, match="y must be positive"):
        chad.grad(P.s_assert, argnums=(0, 1))(1.0, -1.0)
    with pytest.raises(AssertionError, match="y must be positive"):
        chad.grad(P.s_assert, argnums=(0, 1), simplify=False)(1.0, -1.0)


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
    y, pullback = chad.vjp(P.t_tuple_in, (2.0, 3.0), 5.0)
    assert y == P.t_tuple_in((2.0, 3.0), 5.0)
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
        chad.grad(P.op_mul, has_aux=True)(2.0, 3.0)


def test_argnums_int_vs_tuple():
    f = P.op_div
    assert chad.grad(f, argnums=0)(3.0, 2.0) == 0.5
    assert chad.grad(f, argnums=1)(3.0, 2.0) == -0.75
    assert chad.grad(f, argnums=(0,))(3.0, 2.0) == (0.5,)
    assert chad.grad(f, argnums=(1, 0))(3.0, 2.0) == (-0.75, 0.5)
    assert chad.grad(f, argnums=(0, 1))(3.0, 2.0) == (0.5, -0.75)
    assert chad.grad(f)(3.0, 2.0) == 0.5  # the default is argnums=0


def test_argnums_negative():
    assert chad.grad(P.op_div, argnums=-1)(3.0, 2.0) == -0.75
    assert chad.grad(P.op_div, argnums=-2)(3.0, 2.0) == 0.5
    assert chad.grad(P.op_div, argnums=(-1, 0))(3.0, 2.0) == (-0.75, 0.5)
    assert chad.value_and_grad(P.m_hypot3, argnums=-1)(1.0, 2.0, 2.0) == (3.0, 2.0 / 3.0)


def test_argnums_out_of_range():
    with pytest.raises(chad.ChadError):
        chad.grad(P.op_div, argnums=2)(3.0, 2.0)
    with pytest.raises(chad.ChadError):
        chad.grad(P.op_div, argnums=(0, -3))(3.0, 2.0)


def test_undifferentiated_float_argument_gets_no_cotangent_work():
    # only argnums=0 is differentiated; the other float is a constant
    assert_close(chad.grad(P.rosenbrock, argnums=0)(0.5, 1.0), -151.0, 1e-12, 0.0)
    assert_close(chad.grad(P.rosenbrock, argnums=1)(0.5, 1.0), 150.0, 1e-12, 0.0)


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
            text = chad.source(P.cf_if_else, 2.0, 3.0, simplify=simplify, annotate=annotate)
            assert "def cf_if_else_chad" in text
            compile(text, "<test>", "exec")
            assert ("# line" in text) == annotate


def test_module_constant_rebinding_invalidates_the_cache(monkeypatch):
    module = P
    assert chad.grad(P.c_constants)(1.0) == P.SCALE + 2.0 * math.pi
    monkeypatch.setattr(module, "SCALE", 4.0)
    assert chad.grad(P.c_constants)(1.0) == 4.0 + 2.0 * math.pi


def test_one_gradient_function_sees_a_rebinding(monkeypatch):
    # a gradient function keeps its plans: a rebound constant must still reach it
    g = chad.grad(P.c_constants)
    assert g(1.0) == P.SCALE + 2.0 * math.pi
    monkeypatch.setattr(P, "SCALE", 4.0)
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
    """When every argument is differentiated (argnums naming them all, `f.grad`, `vjp`); asked for alone, an int
    is an error (`tests/api/test_inputs.py`)."""
    assert chad.reverse(P.op_mul).grad(3, 2.0) == (None, 3.0)
    assert chad.vjp(P.op_mul, 3, 2.0)[1](1.0) == (None, 3.0)
    assert chad.grad(P.op_mul, argnums=(0, 1))(3, 2.0) == (None, 3.0)
    assert chad.grad(P.op_mul, argnums=(0, 1))(True, 2.0) == (None, 1.0)
    g = chad.grad(P.t_mixed_tuple)((2.0, 5))
    assert_same(g, (5.0, None))
    assert chad.grad(P.cf_discrete_tests, argnums=(0, 1, 2))(2.0, 2, "a") == (4.0, None, None)


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
