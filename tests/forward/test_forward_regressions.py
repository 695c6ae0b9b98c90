"""Regressions of forward mode (`chad.jvp`) and second order (`chad.hvp`, reverse mode over forward mode), each a
small program the random-program differential tester (`tests/support/differential`) found crashing, rejected or
wrong (or one found while fixing those).

Each program is checked three ways: `chad.jvp` against central differences of f along the direction, `chad.grad`
against central differences, and `chad.hvp` against central differences of `chad.grad` along the direction."""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import chadpy as chad
from tests.support import fd

# poles met on purpose (a partial infinite where the tangent is zero): NumPy's warnings, not failures
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# ====================================================================== the programs


def power_of_numbers_kept_in_a_list(x, y):
    """`np.power` of two floats whose result nobody reads: its cotangent is `Zero`, which the rule's run-time half
    (`power_base_ct`, `power_exponent_ct`) handed to `np.where` (a TypeError in the gradient itself)."""
    kept = []
    for _ in range(2):
        kept.append(np.power(x, y))
        kept.append(x * y)
    return kept[1] + x * x * y


def negative_base_power_kept_in_a_list(x, y):
    """`x ** y` with x < 0 (an integral y) nobody reads: its exponent's cotangent was nan (the partial is undefined
    there), not the zero of a value nobody reads; its tangent raised math.log's ValueError (found with the fixes
    of the rules above). Its Hessian-vector product is nan: reverse mode over the tangent's `log(x)`, nan, multiplies
    it by a zero cotangent (not checked below)."""
    kept = []
    for _ in range(2):
        kept.append(x**y)
        kept.append(x * 2.0)
    return kept[1] + x * y + y * y


def fractional_power_kept_in_a_list(v):
    """`abs(t) ** 1.5` appended to a list nobody reads: the tangent code's `np.power` of numbers got a `Zero`
    cotangent in the Hessian-vector product (seed 100)."""
    total = 0.0
    unread = []
    for t in v:
        total = total * 0.5 + math.atan(t + np.std(v))
        unread.append(-(abs(math.tanh(total)) ** 1.5))
    return total


def square_root_kept_in_a_list(x, y):
    """`math.sqrt` appended to a list only partly read: its tangent divides with NumPy (`np.divide`, inf at a pole
    rather than ZeroDivisionError), whose reverse rule got a `Zero` cotangent (seeds 22, 38, 128, 159, 288)."""
    kept = []
    for _ in range(2):
        kept.append(math.sqrt(1.0 + x * x))
        kept.append(np.divide(x, y))
        kept.append(x * y)
    return kept[2] * x


def power_with_a_varying_exponent_kept_in_a_list(v):
    """`(1 + r * r) ** abs(t)` appended to a list nobody reads: the exponent's rule on numbers returned a 0-d array,
    which `+= Zero` then refused (seed 267)."""
    total = 0.0
    unread = []
    for t in v:
        total += math.sin(t) * t
        r = math.remainder(t, -0.75)
        unread.append((1.0 + r * r) ** abs(t))
    return total


def element_of_a_dict_updated(x, n):
    """`d['b'][k] += x` on a dict whose list carried no derivative before: its tangent is made as zeros of the dict,
    which `ownership` took for a holder of the dict's elements, so the update of the dict itself was refused
    (seeds 116, 131, 221, 1000000)."""
    d = {"b": [0.0, 0.5]}
    d["b"][n % 2] += x * x
    return d["b"][n % 2] * x + d["b"][1 - n % 2]


def array_of_a_dict_filled_in_a_loop(x):
    """`d['c'][i] = s` in a loop on a dict whose array carried no derivative before: the tangent's container with
    zeros put in (`filled_at`) was typed as carrying none, so reverse mode dropped its cotangent (the
    Hessian-vector product was 0; found with the fix above)."""
    s = x * x
    d = {"c": np.zeros(2), "a": 2}
    for i in range(2):
        d["c"][i] = s
    return d["c"][0] * x + d["c"][1]


def list_made_in_a_try(x, y):
    """A list made and appended to inside `try`: the forward code takes the attempt's result apart where it is made
    (`part_or_none(done, 0)`), where `ownership` lost that the list is the function's own (seeds 112, 130)."""
    t = 0.5
    try:
        kept = []
        s = x * y
        kept.append(s)
    except ArithmeticError:
        kept = [t]
    return kept[0] * x + y


def array_written_through_a_view(m, v):
    """`view = a.T; view[0, 0] = s` on an array carrying no derivative before: the base's zero tangent was made from
    the base after the write through the view, a read `ownership` refused (seeds 121, 206)."""
    a = np.zeros((3, 1))
    s = (m @ v)[2]
    view = a.T
    view[0, 0] = s
    kept = [a[2, -1] for _ in range(2)]
    return np.sum(a**2) * s + kept[0] * s


def _unread_root(t, s):
    _unread = math.sin(s) ** 0.5 * np.outer(0.5, 0.5)
    return t


def power_at_its_pole_in_a_helper(x):
    """`sin(s) ** 0.5` at s = 0, read by nobody: its tangent's partial is infinite there (a strong zero in the tangent),
    and reverse mode over it multiplied a zero cotangent by it: nan (seed 1002). The tangent is now a quotient."""
    a = np.zeros(2)
    a += np.array([[2.0, x], [0.1, 0.3]]).T @ a
    s = math.log(1.0 + a @ a)
    return _unread_root(x * x, s)


Point = namedtuple("Point", ["a", "b"])


def namedtuple_carried_by_a_loop(p):
    """A namedtuple made before a loop and again in it: its zero tangent before the loop was a plain tuple, and
    `dpt.b` an AttributeError in the forward code (seeds 358, 1833)."""
    s = 1.0
    pt = Point(0.5, 0.5)
    for _ in range(3):
        s *= pt.a + p[1]
        pt = Point(0.5, pt.b * p[2] + p[0])
    return pt.b * s


def dict_completed_in_a_try(xs, x):
    """A dict of known keys made in `try` and joined with the dict of the path that raised (of any keys): its tangent
    had to change structure (rejected, seed 1508); reverse over it refused the update of a dict the attempt made
    (its result taken apart twice, `part_or_none(done, 0)` and `(done, 1)`: seeds 514, 553, 927, 1576)."""
    try:
        d = {"w": xs[1]}
        d["b"] = xs[0]
        d["a"] = x
        _raises = xs[1] / (len(xs) - 3)
    except ZeroDivisionError:
        pass
    return sum(d.values()) * x


def rows_of_a_list_updated(n, xs):
    """`rows[i][k] *= s` on a list of new arrays: the zero tangents of the rows were made from them after the list,
    so the list did not own its rows (rejected, seeds 1114, 1242, 1735)."""
    s = xs[1] + 0.5
    rows = [np.array([0.5, s]), np.zeros(2), np.ones(2)]
    for i in range(3):
        rows[i][n % 2] *= s
    return rows[0][1] * s + np.sum(rows[2]) * xs[0]


def array_updated_after_a_try(d):
    """`arr[1:] -= 0.5` after `try: arr = ...; s = ... except: return`: the tangent of the path where arr has no
    value was zeros of nothing, which nobody owns, so the update was refused (seeds 328, 1749)."""
    try:
        arr = np.array([0.5, 1.25, d["a"]])
        s = d["c"]
    except ZeroDivisionError:
        return d["w"] * 1.0
    else:
        arr[1:] -= 0.5
    return np.sum(arr**2) * d["w"] * s


@dataclass
class Pair:
    a: float
    b: float


def alias_updated_after_a_try(v, n):
    """`alias = arr; alias[1:] += c` in `try`, then `arr += ...`: the alias's tangent after the second update was
    written as the update of its tangent before the first (`updated(darr, darr_2)`, a read of `darr` after it was
    updated in place: refused, seed 2440); it is the update of the new tangent now."""
    arr = v + 3
    ob = Pair(0.5, arr[0])
    kept = [0.5, ob.b, 0.5, 0.5]
    try:
        alias = arr
        alias[1:] += np.arange(6).reshape(2, 3)[:, 2]
        _raises = math.sqrt(np.prod(v))
    except ValueError:
        return sum(kept)
    arr += np.tanh(ob.b * np.array([0.2, kept[2], n * 0.9]))
    return np.sum(arr**2) + np.sum(alias) * v[1]


def absolute_value_of_a_bool_or_a_number(t, s):
    """`(a > b) or t` is True or t; abs of True took np.sign(True) in the tangent code, which NumPy has no loop
    for (seeds 21198, 21417)."""
    s1 = (t > s) or t
    s2 = (t < s) or t
    return math.atan(abs(s1) * t) + abs(s2) * s


M = np.array([[0.4, -0.6], [0.97, 0.24], [0.28, 0.88]])
V = np.array([-0.17, -0.34])

CASES = [
    (power_of_numbers_kept_in_a_list, (1.3, 2.5), (0, 1), (0.7, -0.4)),
    (negative_base_power_kept_in_a_list, (-1.3, 2.0), (0, 1), (0.6, 0.0)),
    (fractional_power_kept_in_a_list, (np.array([0.3, -0.8, 0.5]),), (0,), (np.array([1.0, -0.5, 0.25]),)),
    (square_root_kept_in_a_list, (0.7, 1.9), (0, 1), (-0.8, 0.3)),
    (power_with_a_varying_exponent_kept_in_a_list, (np.array([0.3, -0.8]),), (0,), (np.array([0.6, 1.1]),)),
    (element_of_a_dict_updated, (1.3, 2), (0,), (0.9,)),
    (array_of_a_dict_filled_in_a_loop, (-0.135,), (0,), (1.0,)),
    (list_made_in_a_try, (-1.27, 0.4), (0, 1), (1.0, -0.5)),
    (array_written_through_a_view, (M, V), (0, 1), (np.ones((3, 2)) * 0.5, np.array([0.3, -1.0]))),
    (power_at_its_pole_in_a_helper, (-0.43,), (0,), (1.0,)),
    (namedtuple_carried_by_a_loop, ((0.32, 0.13, -0.23),), (0,), ((1.0, -0.5, 0.25),)),
    (dict_completed_in_a_try, ([0.3, -0.4, 1.2], 0.7), (0, 1), ([1.0, 0.5, 0.2], 1.0)),
    (rows_of_a_list_updated, (3, [0.1, 0.8, 0.9]), (1,), ([1.0, -0.5, 0.5],)),
    (array_updated_after_a_try, ({"a": 1.28, "w": 0.8, "c": 0.5},), (0,), ({"a": 1.0, "w": 0.5, "c": 0.2},)),
    (alias_updated_after_a_try, (np.array([0.26, 0.89, 0.96]), 3), (0,), (np.array([1.0, -0.5, 0.3]),)),
    (absolute_value_of_a_bool_or_a_number, (0.9, -0.4), (0, 1), (1.0, 0.5)),
]

# reverse over forward multiplies the tangent's undefined log(x) (nan) by a zero cotangent: nan, not the product
SECOND_ORDER = [c for c in CASES if c[0] is not negative_base_power_kept_in_a_list]

# ====================================================================== the checks


def _combined(a: object, b: object, fn) -> object:
    """fn(x, y) for each number or array x of a and y of b in its place (a tuple's, a list's, a dict's parts)."""
    if isinstance(a, tuple):
        return tuple(_combined(x, y, fn) for x, y in zip(a, b))
    if isinstance(a, list):
        return [_combined(x, y, fn) for x, y in zip(a, b)]
    if isinstance(a, dict):
        return {k: _combined(x, b[k], fn) for k, x in a.items()}
    return fn(a, b)


def _step(value: object, direction: object, h: float) -> object:
    """value + h * direction, part by part."""
    return _combined(value, direction, lambda x, d: x + h * d)


def _moved(args: tuple, argnums: tuple[int, ...], tangents: tuple, h: float) -> tuple:
    """args with each differentiated one moved by h times its tangent."""
    out = list(args)
    for i, t in zip(argnums, tangents):
        out[i] = _step(args[i], t, h)
    return tuple(out)


def _all_tangents(args: tuple, argnums: tuple[int, ...], tangents: tuple) -> tuple:
    """A tangent per argument: the given ones, zeros for the others (an int's is ignored)."""
    given = dict(zip(argnums, tangents))
    return tuple(given.get(i, np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0) for i, a in enumerate(args))


def _along(f, args: tuple, argnums: tuple[int, ...], tangents: tuple):
    """f as a function of the step along the tangents."""
    return lambda h: f(*_moved(args, argnums, tangents, h))


@pytest.mark.parametrize("f, args, argnums, tangents", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_is_the_directional_derivative(f, args, argnums, tangents):
    value, tangent = chad.jvp(f, args, _all_tangents(args, argnums, tangents))
    fd.assert_same_value(value, f(*args))
    expected = fd.central_diff(_along(f, args, argnums, tangents), (0.0,), 0)
    assert float(tangent) == pytest.approx(expected, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("f, args, argnums, tangents", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_matches_finite_differences(f, args, argnums, tangents):
    fd.assert_grad_matches_fd(f, args, argnums=argnums)


@pytest.mark.parametrize("f, args, argnums, tangents", SECOND_ORDER, ids=[c[0].__name__ for c in SECOND_ORDER])
def test_hvp_is_the_derivative_of_the_gradient_along_the_tangents(f, args, argnums, tangents):
    products = chad.hvp(f, args, _all_tangents(args, argnums, tangents), argnums=argnums)
    gradient = chad.grad(f, argnums=argnums)
    h = 1e-5
    plus, minus = gradient(*_moved(args, argnums, tangents, h)), gradient(*_moved(args, argnums, tangents, -h))
    for k, (p, m, hv) in enumerate(zip(plus, minus, products)):
        expected = _combined(p, m, lambda a, b: (a - b) / (2 * h))
        fd.assert_close(hv, expected, rtol=1e-5, atol=1e-6, where=f"hvp, argument {argnums[k]}")


def qr_of_a_wide_matrix(a):
    q, r = np.linalg.qr(a)
    return np.sum(q) + np.sum(r * r)


def test_qr_of_a_wide_matrix_is_refused_in_forward_mode_as_in_reverse_mode():
    """Its tangent solved with the non-square R, and NumPy's LinAlgError left chadpy; now the ChadError reverse mode
    gives, at the user's line."""
    a = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    for derivative in (
        lambda: chad.jvp(qr_of_a_wide_matrix, (a,), (np.ones_like(a),)),
        lambda: chad.grad(qr_of_a_wide_matrix)(a),
    ):
        with pytest.raises(chad.ChadError, match="at least as many rows") as info:
            derivative()
        assert "q, r = np.linalg.qr(a)" in str(info.value)


class _Config:
    scale = 1.25


def joins_a_bool_with_an_array(v0):
    s2 = (v0[1] > 0.5 or _Config.scale) or v0  # a bool, a float or the array: typed object, then an array
    arr0 = np.array([s2, v0[2], 0.5])
    return np.sum(arr0) - arr0[-3]


def test_a_bool_joined_with_an_array_has_the_tangent_zero():
    """The bool's zero tangent in the join was None (`zeros_like_tangent` of a bool), and `-darr0[0]` raised a
    TypeError out of the generated code (random programs, seed 11805); it is 0.0 (`joined_zeros`)."""
    v, t = np.array([1.14, 0.56, 0.07]), np.array([1.0, -2.0, 3.0])
    value, tangent = chad.jvp(joins_a_bool_with_an_array, (v,), (t,))
    assert value == pytest.approx(0.5 + 0.07) and tangent == pytest.approx(3.0)
    np.testing.assert_allclose(chad.grad(joins_a_bool_with_an_array)(v), [0.0, 0.0, 1.0])


def appends_to_an_empty_list(v0):
    rows = []
    rows.append([v0[2], np.std(v0)])
    return sum(rows[0])


def test_a_tangent_appended_to_fresh_zeros_is_an_update_in_place():
    """The tangent of `rows.append(r)` appends to a fresh zeros list; marked as no update, the outer forward pass of
    a second derivative read that list after the append changed it, and jvp(grad f) was 0 where hvp was not (random
    programs, seed 13621, also at the session's first commit): a silent wrong answer."""
    v, e = np.array([-1.09, 1.30, -0.94]), np.array([1.0, 0.0, 0.0])
    hvp = chad.hvp(appends_to_an_empty_list, (v,), (e,))
    _, jvp_of_grad = chad.jvp(chad.grad(appends_to_an_empty_list), (v,), (e,))
    np.testing.assert_allclose(jvp_of_grad, hvp, rtol=1e-12)
    h = 1e-6
    g = chad.grad(appends_to_an_empty_list)
    np.testing.assert_allclose(hvp, (g(v + h * e) - g(v - h * e)) / (2 * h), rtol=1e-6, atol=1e-8)
    assert abs(hvp[0]) > 0.1
    assert chad.jvp(_slope_of_a_square_appended, (0.7,), (1.0,))[1] == pytest.approx(2.0, rel=1e-12)  # was 0.0


def _square_appended(x):
    rows = []
    rows.append([x * x])
    return sum(rows[0])


def _slope_of_a_square_appended(x):
    return chad.jvp(_square_appended, (x,), (1.0,))[1]


def updates_an_element_of_a_list_in_a_dict(x1, x2):
    parts = {}
    parts["b"] = [0.0] * 3
    parts["w"] = [x2, 0.5]
    for i in range(3):
        parts["b"][i] -= x2 * x1
    return sum(parts["b"]) * x1


def test_a_tangent_stored_into_fresh_zeros_keeps_second_derivatives():
    """Marking every update of a fresh zeros as in place (the fix above) made ownership refuse the second derivative
    of an element's element update (random programs, seeds 392 and 1179, right before it); only updates that change
    a list's length (`Primitive.resizes`) are marked so."""
    _, jvp_of_grad = chad.jvp(chad.grad(updates_an_element_of_a_list_in_a_dict, argnums=0), (0.7, 1.3), (1.0, 0.0))
    assert jvp_of_grad == pytest.approx(-6 * 1.3, rel=1e-12)  # f = -3 x2 x1^2: d2f/dx1^2 = -6 x2
    hvp = chad.hvp(updates_an_element_of_a_list_in_a_dict, (0.7, 1.3), (1.0, 0.0), argnums=(0, 1))
    assert hvp[0] == pytest.approx(-6 * 1.3, rel=1e-12)
