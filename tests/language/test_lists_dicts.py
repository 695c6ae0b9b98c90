"""Gradients through lists and dicts, checked against central differences.

Lists: literals, indexing (negative too), slicing, `len`, comprehensions (with `if`
filters, nested over two lists), `sum` of lists and generator expressions,
`max`/`min` of a list, `functools.reduce`, `append` and `+` on lists the function
built itself, lists as arguments (the gradient is a list) and, through `vjp`, as
results. Dicts: literals, reads with constant and loop-variable keys, iteration
(`for k in d`, `items`, `keys`, `values`), dicts as arguments (the gradient is a dict
with the same keys) and as loop state.

Every function is defined at module level (chadpy reads source with `inspect`) and
checked by `assert_grad_matches_fd` (or `assert_vjp_matches_fd`): both code
generation modes, the primal value, no mutation of the arguments.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import (
    assert_close,
    assert_grad_matches_fd,
    assert_vjp_matches_fd,
    rand_float,
    rand_list,
)
from tests.support.located import assert_located
from tests.support.programs import horner

# ====================================================================== list literals, indexing, slicing, len


def ls_literal_index(x, y):
    xs = [x, y, x * y]
    return xs[0] * xs[-1] + xs[1] ** 2 + xs[-2] * xs[2]


def ls_arg_index(xs):
    # xs[1] of a 5-list is never read: its gradient is 0.0
    return xs[0] * xs[2] - math.exp(xs[-1]) + xs[-2] * xs[0]


def ls_nested_literal(x, y):
    m = [[x, y], [y * y, x]]
    return m[0][0] * m[1][1] - m[0][1] * m[-1][0]


def ls_slices(xs):
    a = xs[1:]
    b = xs[::2]
    c = xs[:-1]
    s = 0.0
    for u, v in zip(a, c):
        s = s + u * v
    return s + sum(b) * xs[-1]


def ls_slice_bounds(xs):
    mid = xs[1:4]
    rev = xs[::-1]
    return mid[0] * mid[-1] + rev[0] * 2.0 - rev[1] + sum(xs[-2:])


def ls_len(xs):
    mean = sum(xs) / len(xs)
    return sum([(v - mean) ** 2 for v in xs]) / len(xs)


def ls_index_arg(xs, i):
    return xs[i] * xs[i - 1] + xs[-i]


# ====================================================================== comprehensions, sum, max, min, reduce


def ls_comprehension(xs, w):
    ys = [math.tanh(w * v) for v in xs]
    return ys[0] + ys[-1] * ys[1]


def ls_comprehension_filter(xs):
    pos = [v * v for v in xs if v > 0.0]
    return sum(pos) + len(pos)


def ls_comprehension_nested(xs, ys):
    prods = [a * b for a in xs for b in ys]
    return sum([p * p for p in prods])


def ls_comprehension_nested_filter(xs, ys):
    diffs = [a - b for a in xs for b in ys if a > b]
    return sum([d**3 for d in diffs])


def ls_comprehension_range(x):
    powers = [x**k / (k + 1) for k in range(5)]
    return sum(powers)


def ls_sum_list(xs, x):
    return sum(xs) * x + sum([x, x * x])


def ls_sum_genexpr(xs, w):
    return sum(math.sin(w * v) for v in xs) + sum(v * v for v in xs if v < 0.0)


def ls_sum_genexpr_zip(xs, ys):
    return sum(a * b for a, b in zip(xs, ys))


def ls_max_min(xs):
    return max(xs) - min(xs) + max(xs) * min(xs)


def ls_max_min_built(x, y):
    zs = [x * y, x + y, x - y]
    return max(zs) * 2.0 + min(zs)


def red_mul(a, b):
    return a * b


def red_add_square(acc, v):
    return acc + v * v


def ls_reduce(xs):
    return functools.reduce(red_mul, xs)


def ls_reduce_initial(xs, x):
    return functools.reduce(red_add_square, xs, x)


# ====================================================================== append and +, on lists built here


def ls_append_loop(x):
    out = []
    for i in range(5):
        out.append(x**i / (i + 1))
    return sum(out)


def ls_append_then_index(xs):
    out = []
    for v in xs:
        out.append(math.tanh(v))
    return out[0] * out[-1] + out[1]


def ls_append_copy(xs, x):
    ys = [v for v in xs]
    ys.append(x)
    ys.append(x * x)
    return sum([v * v for v in ys])


def ls_concat(x, y):
    a = [x, y]
    b = [x * y]
    c = a + b
    return c[0] * c[2] + c[1] + len(c)


def ls_concat_loop(xs):
    out = []
    for v in xs:
        out = out + [v * 2.0]
    acc = [1.0]
    for v in out:
        acc = acc + [acc[-1] * v]
    return acc[-1] + out[0]


# ====================================================================== lists of structures


def ls_list_of_tuples(ps):
    s = 0.0
    for a, b in ps:
        s = s + a * math.cos(b)
    return s


def ls_list_of_lists(m):
    s = 0.0
    for i in range(len(m)):
        for j in range(len(m[i])):
            s = s + m[i][j] * m[j][i] * (i + 1)
    return s


def ls_tuple_of_lists(p):
    xs, ys = p
    return sum([a * b for a, b in zip(xs, ys)])


# ====================================================================== named list models


def horner_indexed(coeffs, x):
    # the same, coefficients lowest degree first, with a backwards range
    y = 0.0
    for i in range(len(coeffs) - 1, -1, -1):
        y = y * x + coeffs[i]
    return y


def rosenbrock_loop(xs):
    s = 0.0
    for i in range(len(xs) - 1):
        s = s + 100.0 * (xs[i + 1] - xs[i] ** 2) ** 2 + (1.0 - xs[i]) ** 2
    return s


def linear_model_comprehension(w, b, xs, ys):
    preds = [w * x + b for x in xs]
    return sum([(p - y) ** 2 for p, y in zip(preds, ys)]) / len(xs)


def ls_cost_sum_index(a):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i]
    return s


# ====================================================================== dicts


def dc_literal(w, b, x):
    p = {"w": w, "b": b}
    return math.tanh(p["w"] * x + p["b"])


def dc_arg_constant_keys(params, x):
    # params["unused"] is never read: its gradient is 0.0
    return params["w"] * x * x + params["b"] * x


def dc_loop_variable_keys(d):
    s = 0.0
    for k in ("a", "b", "c"):
        s = s + d[k] ** 2
    return s


def dc_for_in(d, x):
    s = 0.0
    for k in d:
        s = s + d[k] * x ** len(k)
    return s


def dc_items(d):
    s = 1.0
    for k, v in d.items():
        s = s * v + len(k)
    return s


def dc_keys(d, x):
    s = 0.0
    for k in d.keys():
        s = s + math.sin(d[k] * x)
    return s


def dc_values(d):
    s = 0.0
    for v in d.values():
        s = s + v * v * v
    return s


def dc_nested(d):
    w, b = d["layer"]
    s = 0.0
    for v in d["inputs"]:
        s = s + math.tanh(w * v + b)
    return s * d["scale"]


def dc_int_keys(d):
    s = 0.0
    for k in d:
        s = s + d[k] * k
    return s


def dc_built_in_loop(xs):
    d = {"sum": 0.0, "sq": 0.0}
    for v in xs:
        d = {"sum": d["sum"] + v, "sq": d["sq"] + v * v}
    return d["sq"] / len(xs) - (d["sum"] / len(xs)) ** 2


def sgd_params(params, xs, ys, lr):
    """Fit y = w * x + b by SGD on a dict of parameters; the final loss."""
    p = params
    for _ in range(3):
        for x, y in zip(xs, ys):
            err = p["w"] * x + p["b"] - y
            p = {"w": p["w"] - lr * err * x, "b": p["b"] - lr * err}
    return sum([(p["w"] * x + p["b"] - y) ** 2 for x, y in zip(xs, ys)])


def dict_model(params, xs, ys):
    """A two-parameter-group model: a scaled tanh feature plus a linear part."""
    loss = 0.0
    for x, y in zip(xs, ys):
        h = math.tanh(params["w1"] * x + params["b1"])
        pred = params["w2"] * h + params["w"] * x + params["b"]
        loss = loss + (pred - y) ** 2
    return loss / len(xs)


# ====================================================================== list and dict results (vjp)


def ls_list_result(xs, x):
    return [v * x for v in xs] + [x * x]


def dc_dict_result(d, x):
    return {"sum": d["a"] + d["b"] * x, "prod": d["a"] * d["b"], "const": 1.0}


# ====================================================================== cases


def case(fn, *args, argnums=None, rtol=1e-5, atol=1e-6, id=None):
    """One gradient check; argnums defaults to every argument."""
    if argnums is None:
        argnums = tuple(range(len(args)))
    return pytest.param(fn, args, argnums, rtol, atol, id=id or fn.__name__)


def rand_dict(seed, keys, lo=-1.0, hi=1.0, signed=False):
    return dict(zip(keys, rand_list(seed, len(keys), lo, hi, signed)))


XS = rand_list(100, 6, -2.0, 2.0)
YS = [0.8 * x - 0.3 + 0.1 * e for x, e in zip(XS, rand_list(101, 6))]

CASES = [
    # literals, indexing, slicing, len
    case(ls_literal_index, rand_float(1), rand_float(2)),
    case(ls_arg_index, rand_list(3, 5)),
    case(ls_nested_literal, rand_float(4), rand_float(5)),
    case(ls_slices, rand_list(6, 7)),
    case(ls_slice_bounds, rand_list(7, 6)),
    case(ls_len, rand_list(8, 5)),
    case(ls_index_arg, rand_list(9, 5), 2),
    # comprehensions, sum, max, min, reduce
    case(ls_comprehension, rand_list(10, 4), rand_float(11)),
    case(ls_comprehension_filter, rand_list(12, 7, 0.2, 1.0, signed=True)),
    case(ls_comprehension_nested, rand_list(13, 3), rand_list(14, 4)),
    case(ls_comprehension_nested_filter, [0.3, -0.6, 1.2], [0.1, -0.9, 0.8, 0.5]),
    case(ls_comprehension_range, rand_float(15)),
    case(ls_sum_list, rand_list(16, 4), rand_float(17)),
    case(ls_sum_genexpr, rand_list(18, 6, 0.2, 1.0, signed=True), rand_float(19)),
    case(ls_sum_genexpr_zip, rand_list(20, 5), rand_list(21, 5)),
    case(ls_max_min, [0.3, -1.2, 0.9, 2.1, -0.4]),
    case(ls_max_min_built, 0.7, -1.3),  # zs = (-0.91, -0.6, 2.0)
    case(ls_reduce, rand_list(22, 5, 0.5, 1.5)),
    case(ls_reduce_initial, rand_list(23, 4), rand_float(24)),
    # append and +
    case(ls_append_loop, rand_float(25)),
    case(ls_append_then_index, rand_list(26, 4)),
    case(ls_append_copy, rand_list(27, 3), rand_float(28)),
    case(ls_concat, rand_float(29), rand_float(30)),
    case(ls_concat_loop, rand_list(31, 4)),
    # lists of structures
    case(ls_list_of_tuples, [(0.5, 1.0), (-0.3, 2.0), (1.2, -0.7)]),
    case(ls_list_of_lists, [rand_list(32, 3), rand_list(33, 3), rand_list(34, 3)]),
    case(ls_tuple_of_lists, (rand_list(35, 3), rand_list(36, 3))),
    # named list models
    case(horner, rand_list(37, 5), rand_float(38)),
    case(horner, (1.0, -2.0, 0.5, 3.0), rand_float(39), id="horner-tuple-coefficients"),
    case(horner_indexed, rand_list(40, 5), rand_float(41)),
    case(rosenbrock_loop, rand_list(42, 5, -1.5, 1.5)),
    case(linear_model_comprehension, rand_float(43), rand_float(44), XS, YS),
    case(ls_cost_sum_index, rand_list(45, 8)),
    # dicts
    case(dc_literal, rand_float(46), rand_float(47), rand_float(48)),
    case(dc_arg_constant_keys, rand_dict(49, ("w", "b", "unused")), rand_float(50)),
    case(dc_loop_variable_keys, rand_dict(51, ("a", "b", "c"))),
    case(dc_for_in, rand_dict(52, ("a", "bb", "ccc")), rand_float(53)),
    case(dc_items, rand_dict(54, ("p", "qq", "r"))),
    case(dc_keys, rand_dict(55, ("u", "v")), rand_float(56)),
    case(dc_values, rand_dict(57, ("x", "y", "z"))),
    case(dc_nested, {"layer": (0.7, -0.2), "inputs": rand_list(58, 3), "scale": 1.5}),
    case(dc_int_keys, {1: 0.5, 2: -0.25, 5: 1.5}),
    case(dc_built_in_loop, rand_list(59, 5)),
    # dict models
    case(sgd_params, {"w": 0.1, "b": 0.0}, XS, YS, 0.05),
    case(dict_model, rand_dict(60, ("w1", "b1", "w2", "w", "b")), XS, YS),
]


@pytest.mark.parametrize(("fn", "args", "argnums", "rtol", "atol"), CASES)
def test_gradient_matches_finite_differences(fn, args, argnums, rtol, atol):
    assert_grad_matches_fd(fn, args, argnums, rtol, atol)


@pytest.mark.parametrize(
    ("fn", "args", "ct"),
    [
        (ls_list_result, (rand_list(61, 3), rand_float(62)), rand_list(63, 4)),
        (dc_dict_result, ({"a": 0.5, "b": -1.5}, rand_float(64)), {"sum": 0.7, "prod": -1.1, "const": 0.3}),
    ],
    ids=["list-result", "dict-result"],
)
def test_vjp_matches_finite_differences(fn, args, ct):
    assert_vjp_matches_fd(fn, args, ct)


# ====================================================================== structure of list and dict gradients


def test_list_gradient_is_a_fresh_list_and_the_argument_is_untouched():
    xs = [0.5, -1.0, 2.0]
    for simplify in (True, False):
        g = chad.grad(ls_append_copy, simplify=simplify)(xs, 0.3)
        assert type(g) is list and g is not xs
        assert xs == [0.5, -1.0, 2.0]
        assert_close(g, [1.0, -2.0, 4.0], rtol=1e-12, atol=0.0)


def test_unread_list_element_and_dict_key_get_zero():
    g = chad.grad(ls_arg_index)([1.0, 2.0, 3.0, 4.0, 0.0])
    assert_close(g, [3.0 + 4.0, 0.0, 1.0, 1.0, -1.0], rtol=1e-12, atol=0.0)
    g = chad.grad(dc_arg_constant_keys)({"w": 1.0, "b": 2.0, "unused": 3.0}, 0.5)
    assert_close(g, {"w": 0.25, "b": 0.5, "unused": 0.0}, rtol=1e-12, atol=0.0)


def test_horner_gradient_closed_form():
    coeffs = [2.0, -1.0, 0.5, 3.0]  # 2 x^3 - x^2 + 0.5 x + 3
    x = 1.5
    g_coeffs, g_x = chad.grad(horner, argnums=(0, 1))(coeffs, x)
    assert_close(g_coeffs, [x**3, x**2, x, 1.0], rtol=1e-12, atol=0.0)
    assert_close(g_x, 6.0 * x * x - 2.0 * x + 0.5, rtol=1e-12, atol=0.0)


def test_max_min_of_a_list_route_to_the_extremes():
    g = chad.grad(ls_max_min)([0.3, -1.2, 0.9, 2.1, -0.4])
    # max = 2.1 (index 3), min = -1.2 (index 1): d/dmax = 1 + min, d/dmin = -1 + max
    assert_close(g, [0.0, -1.0 + 2.1, 0.0, 1.0 - 1.2, 0.0], rtol=1e-12, atol=1e-15)


# ====================================================================== rejected list use


def e_append_to_argument(x, xs):
    # the caller's list, not differentiated: the plain call's update would be lost
    xs.append(x)
    return sum(xs)


@pytest.mark.parametrize(
    ("fn", "args", "lines"),
    [
        (e_append_to_argument, (3.0, [1.0, 2.0]), ("xs.append(x)",)),
    ],
    ids=["append-to-caller-list"],
)
@pytest.mark.parametrize("simplify", [True, False])
def test_rejected_list_use(fn, args, lines, simplify):
    with pytest.raises(chad.ChadError) as info:
        chad.grad(fn, simplify=simplify)(*args)
    assert_located(str(info.value), fn, *lines)


def _same_list(xs):
    return xs


def e_append_after_passing_on(x):
    xs = [x]
    ys = _same_list(xs)
    xs.append(2.0 * x)
    return ys[-1]


def test_append_after_the_list_was_passed_on_is_rejected():
    """`ys` may be the same list as `xs`: appending to it would change `ys` behind chadpy's back."""
    with pytest.raises(chad.ChadError) as info:
        chad.grad(e_append_after_passing_on)(1.5)
    assert_located(str(info.value), e_append_after_passing_on, "xs.append(2.0 * x)")


# ====================================================================== a range counter's reads


def ls_counted(xs, w):
    s = 0.0
    for i in range(len(xs)):
        s = s * w + xs[i] * xs[i - 1]  # i - 1 is -1 at first: the last element
    for j in range(1, len(xs), 2):
        s = s * w + xs[j]
    return s


def ls_counted_from_below_zero(xs, w):
    s = 0.0
    for i in range(-2, len(xs) - 2):  # -2 and -1 name the last two elements
        s = s * w + xs[i]
    return s


def test_a_range_counter_reads_its_element_without_a_saved_position():
    # a counter of range(n), or of range(a, n, step) with literal a >= 0 and step > 0, is never negative,
    # so where `xs[i]` succeeds i is the element's position: nothing to work out and keep per iteration
    xs = rand_list(31, 6)
    assert_grad_matches_fd(ls_counted, (xs, 0.7), argnums=(0, 1))
    assert_grad_matches_fd(ls_counted_from_below_zero, (xs, 0.7), argnums=(0, 1))
    assert chad.source(ls_counted, xs, 0.7).count("% len(") == 1  # only `xs[i - 1]`'s
    assert chad.source(ls_counted_from_below_zero, xs, 0.7).count("% len(") == 1


# ====================================================================== 2-4. defaults, nested lists, sorted dicts


def recursive_nested_default(x):
    def g(t, m=3):
        if m <= 0:
            return t
        return g(t, m - 1)

    return g(x)


def nested_list_array(x):
    return np.sum(np.array([[x, x], [x, x]]))


def nested_list_rows(x, y):
    m = np.array([[x, y * y], [np.sin(x), 2.0]])
    return np.sum(m @ m)


def sorted_dict_keys(x):
    d = {"b": np.array([x, 2 * x]), "a": np.array([x])}
    total = 0.0
    for k in sorted(d):
        total = total + np.sum(np.sin(d[k]))
    return total


def test_recursive_nested_function_keeps_its_defaults():
    assert_grad_matches_fd(recursive_nested_default, (0.5,))


def test_array_of_a_nested_list():
    assert_grad_matches_fd(nested_list_array, (0.5,))
    assert chad.grad(nested_list_array)(0.5) == 4.0
    assert_grad_matches_fd(nested_list_rows, (0.5, -1.3), argnums=(0, 1))


def test_sorted_of_a_dict_iterates_its_keys():
    assert_grad_matches_fd(sorted_dict_keys, (0.5,))


def tail_sum(xs, n):
    return sum(xs[-n:]) + sum(xs[: -n + 1])


def test_a_slice_bound_negating_a_local_variable():
    """`xs[-n:]` with `n` a parameter was read as a literal bound, in an empty scope: "local variable `n`
    may be used before it is assigned" (found while splitting the lowerer, issue 13)."""
    assert_grad_matches_fd(tail_sum, ([1.0, 2.0, 3.0, 4.0], 2))
    assert chad.grad(tail_sum)([1.0, 2.0, 3.0, 4.0], 2) == [1.0, 1.0, 2.0, 1.0]  # [3, 4] and [1, 2, 3]


def slice_in_a_variable(xs):
    s = slice(1, None)
    rest = xs[s]
    return rest[0] * rest[1]


def test_a_list_indexed_by_a_slice_in_a_variable_is_a_slice():
    """`xs[s]` for a slice object `s` was typed as an element (\"cannot index a float\" at `rest[0]`), and
    its rule would have made a one-hot cotangent keyed by the slice. f(xs) = xs[1] xs[2]."""
    assert chad.grad(slice_in_a_variable)([1.0, 2.0, 3.0]) == [0.0, 3.0, 2.0]
    assert_grad_matches_fd(slice_in_a_variable, ([1.0, 2.0, 3.0],))


def product_then_appended(x):
    xs = [x, 2.0 * x]
    p = math.prod(xs)
    xs.append(3.0)
    return p + xs[2]


def test_a_rule_reading_a_list_sees_it_as_it_was_before_a_later_append():
    """`math.prod(xs)`'s derivative read `xs` when the backward pass ran, after `xs.append(3.0)`: a gradient
    3x too large (f(x) = 2 x^2 + 3, f' = 4 x). The user's appends are logged and rewound (`buffers.py`)."""
    assert_grad_matches_fd(product_then_appended, (1.5,))


def deletes_a_key_it_wrote(x):
    out = []
    for k in range(3):
        d = {}
        d["bias"] = x * k
        d["w"] = 0.5
        del d["w"]  # the function's own dict: d.pop("w"), logged like its writes
        out.append(d["bias"] * x)
    return out[2] + out[1]


def test_del_of_a_key_after_writes_is_undone_in_order():
    # regression: a rewind of the write log put back a key `del` had removed (KeyError; seed 826)
    assert_grad_matches_fd(deletes_a_key_it_wrote, (0.7,))
