"""Gradients through higher-order Python (issue 5), checked against central differences.

- lambdas and nested defs reading variables of the enclosing function (floats,
  arrays, lists, tuples, dicts, values computed before them, loop variables);
- closures passed to other user functions, returned from helpers and called later,
  stored in tuples, lists (one lambda/def site per list) and dicts with constant keys;
- recursive nested defs and closures nested two and three deep;
- functions as arguments of the differentiated function: numerical integrators,
  an ODE solver, Newton's method and a fixed-point iteration taking module-level
  functions, lambdas written at the call site, or `math` primitives as values;
- `map` (one and two lists), `functools.reduce`, `sorted`/`max`/`min` with `key=`
  (discrete: the gradient flows to the selected elements), comprehensions calling
  closures;
- closures created in loops (called in the same iteration), the default-argument
  idiom `lambda y, k=k: ...` for closures kept past their iteration;
- late binding: a named closure called after a variable it reads is reassigned
  sees the new value, as in Python (tests/test_late_binding.py);
- errors: late binding of a closure that is kept (stored past its iteration),
  differentiating with respect to a function.

Every function is defined at module level (chadpy reads source with `inspect`; so
are the module-level functions passed as values) and checked by
`assert_grad_matches_fd` (or `assert_vjp_matches_fd`): every stage in `fd.MODES`,
the primal value, no mutation of the arguments. Inputs are fixed or seeded, and kept
away from ties of sort keys and from branch boundaries.
"""

# Closures over loop variables, called in the same iteration or rejected, are the point here.
# ruff: noqa: B023

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest
import scipy.special

import chadpy as chad
from tests.language import higher_order_programs as P
from tests.support.fd import (
    assert_close,
    assert_grad_matches_fd,
    assert_vjp_matches_fd,
    rand_array,
    rand_float,
    rand_list,
)
from tests.support.located import assert_located

# ====================================================================== cases


def case(fn, *args, argnums=None, rtol=1e-5, atol=1e-6, id=None):
    """One gradient check; argnums defaults to every argument."""
    if argnums is None:
        argnums = tuple(range(len(args)))
    return pytest.param(fn, args, argnums, rtol, atol, id=id or fn.__name__)


PS = [(0.8, 1.3, -0.2), (-0.5, 0.7, 0.4), (1.1, -0.9, 0.1)]
PAIRS = [(0.5, 1.2), (1.3, -0.7), (0.9, 2.0), (-0.2, 0.4)]
XS = [0.3, -1.1, 0.8, 2.0, -0.4]  # distinct |v| and distinct |v - 0.25|, |v - 0.7|

CASES = [
    # lambdas and nested defs reading the enclosing scope
    case(P.ho_lambda_linear, rand_float(1), rand_float(2)),
    case(P.ho_lambda_scalar, rand_float(3), rand_float(4)),
    case(P.ho_lambda_no_free_variables, rand_float(5)),
    case(P.ho_def_branch, 0.7, 1.3),  # h(0.7) takes the exp branch, h(-0.7) the other
    case(P.ho_def_defaults_and_keywords, rand_float(6), rand_float(7)),
    case(P.ho_closure_reads_intermediates, rand_float(8), rand_float(9)),
    case(P.ho_closure_shadowing, rand_float(10), rand_float(11)),
    case(P.ho_closure_array, rand_array(12, 5), rand_array(13, 5)),
    case(P.ho_closure_matrix, rand_array(14, (3, 3)), rand_array(15, 3), rand_array(16, 3)),
    case(P.ho_closure_list, rand_list(17, 4), rand_float(18)),
    case(P.ho_closure_tuple, (0.5, -1.2, 0.7), rand_float(19)),
    case(P.ho_closure_dict, {"w": 0.8, "b": -0.3, "unused": 2.0}, rand_float(20)),
    # passing, returning and composing functions
    case(P.ho_pass_lambda, rand_float(21), rand_float(22)),
    case(P.ho_pass_def, 0.4, 1.7, 6),
    case(P.ho_factory, rand_float(23), rand_float(24), rand_float(25)),
    case(P.ho_factory_poly, rand_list(26, 4), rand_float(27)),
    case(P.ho_compose, 0.3, 0.7),
    case(P.ho_local_factory, rand_float(28), rand_float(29)),
    # functions in tuples, lists and dicts
    case(P.ho_tuple_of_functions, rand_float(30), rand_float(31), rand_float(32)),
    case(P.ho_list_from_factory, rand_list(33, 4), rand_float(34)),
    case(P.ho_list_default_index, rand_list(35, 4), rand_float(36)),
    case(P.ho_list_default_value, rand_list(37, 3), rand_float(38)),
    case(P.ho_list_comprehension_of_lambdas, rand_list(39, 4), rand_float(40)),
    case(P.ho_dict_of_closures, rand_float(41), rand_float(42), rand_float(43)),
    case(P.ho_dict_to_user_function, rand_float(44), rand_float(45)),
    # recursion and nesting
    case(P.ho_recursive_power, 1.3, 0.6, 4),
    case(P.ho_recursive_horner, rand_list(46, 5), rand_float(47)),
    case(P.ho_nested_closure, rand_float(48), rand_float(49), rand_float(50)),
    case(P.ho_nested_returned, rand_float(51), rand_float(52), rand_float(53)),
    case(P.ho_three_levels, rand_float(54), rand_float(55)),
    # functions as arguments: module-level functions, primitives, lambdas (one per line)
    case(P.integrate_midpoint, P.gauss, -0.3, 1.2, 16, argnums=(1, 2), id="midpoint-gauss"),
    case(P.integrate_trapezoid, P.damped, 0.1, 2.0, 20, argnums=(1, 2), id="trapezoid-damped"),
    case(P.integrate_map, P.rational, -1.0, 0.5, 12, argnums=(1, 2), id="map-rational"),
    case(P.integrate_midpoint, math.sin, 0.2, 2.5, 16, argnums=(1, 2), id="midpoint-math.sin"),
    case(P.integrate_trapezoid, math.exp, -0.5, 1.0, 10, argnums=(1, 2), id="trapezoid-math.exp"),
    case(P.integrate_midpoint, P.CUBIC, -0.5, 1.5, 12, argnums=(1, 2), id="midpoint-module-lambda"),
    case(
        P.integrate_midpoint,
        lambda t: math.cos(t) * t,
        -0.4,
        1.3,
        10,
        argnums=(1, 2),
        id="midpoint-call-site-lambda",
    ),
    case(
        P.integrate_trapezoid,
        lambda t: math.sqrt(1.0 + t * t),
        0.0,
        1.5,
        8,
        argnums=(1, 2),
        id="trapezoid-call-site-lambda",
    ),
    case(P.weighted_integral, math.cos, 0.8, 0.0, 2.0, 12, argnums=(1, 2, 3), id="weighted-integral"),
    case(P.double_integral, math.cos, 0.1, 1.4, 6, argnums=(1, 2), id="double-integral"),
    case(P.rk4, P.logistic, 0.3, 0.0, 1.5, 8, argnums=(1, 2, 3), id="rk4-logistic"),
    case(P.ho_ode_closure, rand_float(56, 0.5, 2.0), rand_float(57)),
    case(P.ho_newton_cubic_root, rand_float(58, 0.5, 3.0)),
    case(P.ho_fixed_point, rand_float(59)),
    # map, reduce, sorted, max, min, comprehensions
    case(P.ho_map_sum, rand_list(60, 5), rand_float(61)),
    case(P.ho_map_list_index, rand_list(62, 4), rand_float(63)),
    case(P.ho_map_for, rand_list(64, 4), rand_float(65)),
    case(P.ho_map_two_lists, rand_list(66, 4), rand_list(67, 4), rand_float(68)),
    case(P.ho_map_module_function_and_primitive, rand_list(69, 4)),
    case(P.ho_map_params, PS, rand_float(70)),
    case(P.ho_map_params_def, [(0.8, 1.3), (-0.5, 0.7), (1.1, -0.9)], rand_float(71)),
    case(P.ho_reduce_lambda, rand_list(72, 5), rand_float(73)),
    case(P.ho_reduce_no_initial, rand_list(74, 4), rand_float(75)),
    case(P.ho_sorted_key, PAIRS),
    case(P.ho_sorted_reverse, XS, 0.25),
    case(P.ho_sorted_weights, XS, rand_list(76, 5)),
    case(P.ho_max_key, PAIRS, 0.8),  # the largest p[0] * x: (1.3, -0.7)
    case(P.ho_min_key, XS, 0.7),  # the nearest to 0.7: 0.8
    case(P.ho_comprehension_closure, rand_list(77, 6), 0.9, 0.1),
    # closures in loops
    case(P.ho_closure_in_loop, rand_list(78, 5), rand_float(79), 4),
    case(P.ho_def_in_loop, rand_list(80, 4), rand_float(81)),
    case(P.ho_closure_reads_carried, rand_list(82, 4), rand_float(83)),
    case(P.ho_closure_array_loop, rand_array(84, (4, 3)), rand_array(85, 3)),
    case(P.ho_factory_in_loop, rand_list(86, 4), rand_float(87), rand_float(88)),
    case(P.ho_closure_outside_loop, rand_list(89, 5), rand_float(90)),
    case(P.ho_closure_in_while, 0.5, 0.8),
    case(P.ho_reassigned_after_last_call, rand_float(91)),
]


@pytest.mark.parametrize(("fn", "args", "argnums", "rtol", "atol"), CASES)
def test_gradient_matches_finite_differences(fn, args, argnums, rtol, atol):
    assert_grad_matches_fd(fn, args, argnums, rtol, atol)


# ====================================================================== list and array results (vjp)


def ho_map_result(xs, w):
    return list(map(lambda v: w * math.sin(v), xs))


def ho_closure_array_result(v, w):
    f = lambda u: np.tanh(u * w)
    return f(v) + f(2.0 * v)


@pytest.mark.parametrize(
    ("fn", "args", "ct"),
    [
        (ho_map_result, (rand_list(92, 4), rand_float(93)), rand_list(94, 4)),
        (ho_closure_array_result, (rand_array(95, 4), rand_float(96)), rand_array(97, 4)),
    ],
    ids=["map-list-result", "closure-array-result"],
)
def test_vjp_matches_finite_differences(fn, args, ct):
    assert_vjp_matches_fd(fn, args, ct)


# ====================================================================== closed forms


def test_simple_closure_gradient_is_exact():
    assert chad.grad(P.ho_lambda_linear, argnums=(0, 1))(1.5, -2.0) == (-2.0, 1.5)


def test_closure_in_loop_closed_form():
    # sum over k < n of sin(x * w[k])
    w, x = [0.5, -1.0, 2.0, 0.3, 9.0], 0.7
    gw, gx = chad.grad(P.ho_closure_in_loop, argnums=(0, 1))(w, x, 4)
    assert_close(gw, [x * math.cos(x * wk) for wk in w[:4]] + [0.0], rtol=1e-12, atol=0.0)
    assert_close(gx, sum(wk * math.cos(x * wk) for wk in w[:4]), rtol=1e-12, atol=0.0)


def _midpoint_partials(f, fprime, a, b, n):
    """d/da and d/db of integrate_midpoint(f, a, b, n), by hand: with h = (b - a) / n and
    t_i = a + (i + 1/2) h, the sum is h * sum f(t_i), dh/db = 1/n, dt_i/db = (i + 1/2) / n."""
    h = (b - a) / n
    ts = [a + (i + 0.5) * h for i in range(n)]
    fs = sum(f(t) for t in ts)
    db = fs / n + h * sum(fprime(t) * (i + 0.5) / n for i, t in enumerate(ts))
    da = -fs / n + h * sum(fprime(t) * (1.0 - (i + 0.5) / n) for i, t in enumerate(ts))
    return da, db


def test_integral_of_sin_closed_form():
    """d/dx of the midpoint rule for the integral of sin over [0, x]: the hand-written
    derivative of the same sum, and (the rule being fine) close to sin(x)."""
    x, n = 1.1, 400
    g = chad.grad(P.integrate_midpoint, argnums=2)(math.sin, 0.0, x, n)
    _, expected = _midpoint_partials(math.sin, math.cos, 0.0, x, n)
    assert_close(g, expected, rtol=1e-10, atol=0.0)
    assert abs(g - math.sin(x)) < 1e-5


def test_one_integrator_with_several_integrands():
    """The same integrator differentiated with different functions in turn: each gets its own
    derivative (functions are part of the specialisation, or read at run time), never a
    cached one built for another integrand."""
    a, b, n = -0.4, 1.3, 24
    integrands = [
        (math.sin, math.cos),
        (math.exp, math.exp),
        (P.gauss, lambda t: -2.0 * t * math.exp(-t * t)),
        (P.CUBIC, lambda t: 3.0 * t * t - 2.0),
        (math.sin, math.cos),  # back to the first
    ]
    for f, fprime in integrands:
        value, (ga, gb) = chad.value_and_grad(P.integrate_midpoint, argnums=(1, 2))(f, a, b, n)
        assert value == P.integrate_midpoint(f, a, b, n)
        assert_close((ga, gb), _midpoint_partials(f, fprime, a, b, n), rtol=1e-10, atol=1e-14)


def test_newton_root_closed_form():
    # y**3 + y = c: dy/dc = 1 / (3 y**2 + 1)
    for c in (0.5, 2.0, 10.0):
        y = P.ho_newton_cubic_root(c)
        assert abs(y**3 + y - c) < 1e-12
        assert abs(chad.grad(P.ho_newton_cubic_root)(c) - 1.0 / (3.0 * y * y + 1.0)) < 1e-9


def test_fixed_point_closed_form():
    # y = 0.5 cos(y) + a: dy/da = 1 / (1 + 0.5 sin(y))
    a = 0.4
    y = P.ho_fixed_point(a)
    assert abs(chad.grad(P.ho_fixed_point)(a) - 1.0 / (1.0 + 0.5 * math.sin(y))) < 1e-9


def test_sorted_key_routes_the_gradient_to_the_sorted_elements():
    # sorted by p[0]: (-0.2, 0.4), (0.5, 1.2), (0.9, 2.0), (1.3, -0.7); total = sum (i + 1) v k
    g = chad.grad(P.ho_sorted_key)(PAIRS)
    expected = [(2 * 1.2, 2 * 0.5), (4 * -0.7, 4 * 1.3), (3 * 2.0, 3 * 0.9), (1 * 0.4, 1 * -0.2)]
    assert_close(g, expected, rtol=1e-12, atol=0.0)


def test_min_key_gradient_goes_to_the_selected_element_only():
    gx, gc = chad.grad(P.ho_min_key, argnums=(0, 1))(XS, 0.7)
    assert_close(gx, [0.0, 0.0, 0.7 + 2 * 0.8, 0.0, 0.0], rtol=1e-12, atol=0.0)
    assert_close(gc, 0.8, rtol=1e-12, atol=0.0)  # through `nearest * c` only, not through the key


def test_lambda_at_the_call_site_capturing_a_local_constant():
    """A lambda written in the caller, closing over one of the caller's (undifferentiated)
    variables, passed as the integrand."""
    k = 2.5
    assert_grad_matches_fd(P.integrate_midpoint, (lambda t: math.sin(k * t), 0.1, 1.2, 12), argnums=(1, 2))


# ====================================================================== errors


def e_late_binding_lambda(x):
    scale = x * 2.0
    g = lambda y: y * scale
    scale = scale + 1.0
    return g(x)


def e_late_binding_in_loop(x):
    scale = x
    g = lambda y: y * scale
    s = 0.0
    for _ in range(3):
        s = s + g(x)
        scale = scale * 2.0
    return s


def e_loop_variable_late_binding(x):
    fs = []
    for k in range(3):
        fs.append(lambda y: y * k)
    return sum([f(x) for f in fs])


def e_comprehension_late_binding(x):
    fs = [lambda y: y * k for k in range(3)]
    return fs[0](x) + fs[2](x)


def _raises(fn, args, simplify):
    with pytest.raises(chad.ChadError) as info:
        chad.grad(fn, argnums=0, simplify=simplify)(*args)
    err = info.value
    assert err.loc is not None, f"no location on {type(err).__name__}: {err}"
    return err, str(err), str(err).split("\n")[0]


LATE_BINDING = [e_late_binding_lambda, e_late_binding_in_loop]  # a def: test_late_binding.py


@pytest.mark.parametrize("fn", LATE_BINDING, ids=[f.__name__ for f in LATE_BINDING])
def test_late_binding_of_a_called_function_follows_python(fn):
    """Python reads `scale` when the closure runs, after the reassignment; a named function that is
    only called is made again where it is called (issue 14), so each call sees the current value
    (these were rejected before; tests/test_late_binding.py has the rule's other cases)."""
    assert_grad_matches_fd(fn, (1.5,))


@pytest.mark.parametrize(
    ("fn", "lines"),
    [
        (e_loop_variable_late_binding, ("fs.append(lambda y: y * k)", "return sum([f(x) for f in fs])")),
        (e_comprehension_late_binding, ("fs = [lambda y: y * k for k in range(3)]", "return fs[0](x) + fs[2](x)")),
    ],
    ids=["for-append", "comprehension"],
)
@pytest.mark.parametrize("simplify", [True, False])
def test_loop_variable_late_binding_is_rejected_with_a_hint(fn, lines, simplify):
    """Every closure sees the last k in Python; the hint is the default-argument idiom."""
    err, message, headline = _raises(fn, (1.5,), simplify)
    assert re.search(r"\bk\b", headline), message
    assert "k=k" in message, message
    assert_located(message, fn, *lines)


@pytest.mark.parametrize("argnums", [0, (0, 1), (1, 0, 2)])
def test_differentiating_with_respect_to_a_function_is_rejected(argnums):
    for f in (P.gauss, math.sin, P.CUBIC):
        with pytest.raises(chad.ChadError) as info:
            chad.grad(P.integrate_midpoint, argnums=argnums)(f, 0.0, 1.0, 8)
        assert re.search(r"function|callable|`f`", str(info.value)), str(info.value)


def test_programs_run_as_plain_python():
    """The primal of each rejected program is ordinary Python (the late-binding ones give
    Python's late-bound answers, which a capture-at-creation derivative would not match)."""
    assert e_late_binding_lambda(1.5) == 1.5 * 4.0
    assert e_late_binding_in_loop(1.5) == 1.5 * 1.5 * (1.0 + 2.0 + 4.0)
    assert e_loop_variable_late_binding(1.5) == 1.5 * 2.0 * 3
    assert e_comprehension_late_binding(1.5) == 1.5 * 2.0 * 2
    assert P.ho_list_default_index([1.0, 2.0, 3.0], 1.5) == 1.5**2 * (1.0 + 4.0 + 9.0)


@pytest.mark.parametrize(
    "integrand", [scipy.special.spence, functools.partial(math.pow, 2.0)], ids=["spence", "partial"]
)
def test_function_argument_without_rule_or_source_is_an_unknown_function(integrand):
    """A function value chadpy can neither read nor find a rule for is an error where it is called."""
    with pytest.raises(chad.UnknownFunction) as info:
        chad.grad(P.integrate_midpoint, argnums=(1, 2))(integrand, 0.5, 1.0, 4)
    assert info.value.loc is not None and "f(" in info.value.loc.line
