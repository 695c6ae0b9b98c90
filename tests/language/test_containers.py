"""Containers and builtins: dict methods and constructors, the in-place list methods, `reversed`,
`filter`, `any`/`all`, `zip(*rows)`, star-arguments and star-parameters, `print` with options,
f-strings, `isinstance`, slice objects and `with` blocks, checked against central differences; and
the error of each form that stays rejected.

Every function is defined at module level (chadpy reads source with `inspect`).
`assert_grad_matches_fd` checks every stage; the cheaper `grad_matches_fd` the default one only.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff, rand_float, rand_list
from tests.support.located import assert_located

X, Y = rand_float(1, 0.5, 1.5), rand_float(2, 0.5, 1.5)


def grad_matches_fd(f, *args, argnums=None):
    """chadpy's gradient (default stage) against central differences, for every argument."""
    nums = tuple(range(len(args))) if argnums is None else argnums
    value, grads = chad.value_and_grad(f, argnums=nums)(*args)
    assert value == pytest.approx(f(*args))
    for i, g in zip(nums, grads):
        assert_close(g, central_diff(f, args, i), 1e-5, 1e-6, f"d/d arg {i}")


# ====================================================================== dicts


def d_get(x, y):
    d = {"a": x, "b": y}
    return d.get("a", 0.0) * d.get("c", y) + d.get("b") * x


def d_get_loop_key(x, y):
    d = {"a": x, "b": y}
    s = 0.0
    for k in ["a", "c", "b"]:
        s = s + d.get(k, 2.0 * x) * y
    return s


def d_setdefault(x, y):
    d = {"a": x}
    first = d.setdefault("b", y * y)
    again = d.setdefault("b", x)  # present: x is not stored
    d.setdefault("c")
    return first * again + d["a"] * d["b"] + len(d)


def d_comprehension(x, y):
    d = {k: v * v for k, v in zip(["a", "b"], [x, y])}
    e = {i: d[k] * (i + 1) for i, k in enumerate(list(d)) if k != "z"}
    return d["a"] * e[1] + e[0]


def d_constructors(x, y):
    pairs = dict([("a", x), ("b", y), ("a", 2.0 * x)])  # the last pair with a key wins
    zipped = dict(zip(["p", "q"], [y, x * y]))
    named = dict(p=x, q=3.0)
    copied = dict(named)
    return pairs["a"] * pairs["b"] + zipped["q"] * named["p"] + copied["p"] * len(dict())


def d_reading(x, y):
    d = {"b": x, "a": y, "c": x * y}
    s = 0.0
    for i, k in enumerate(sorted(d)):
        s = s + d[k] * (i + 1)
    for _, v in d.items():
        s = s + v * v
    hit = d["c"] if "c" in d and "z" not in d else 0.0
    return s + sum(d.values()) * len(d.keys()) + hit


@pytest.mark.parametrize("f", [d_get, d_get_loop_key, d_setdefault, d_comprehension, d_constructors, d_reading])
def test_dicts(f):
    grad_matches_fd(f, X, Y)


def test_dict_get_every_stage():
    assert_grad_matches_fd(d_get, (X, Y), argnums=(0, 1))


def d_pop(x, y):
    d = {"a": x, "b": y}
    v = d.pop("a")
    w = d.pop("c", 2.0 * y)
    return v * d["b"] * w + len(d)


def test_dict_pop():
    grad_matches_fd(d_pop, X, Y)


# ====================================================================== lists the function owns


def l_pop(x, y):
    xs = [x, y, x * y, 2.0]
    last = xs.pop()
    first = xs.pop(0)
    middle = xs.pop(-1)
    return last * first + middle * sum(xs) + len(xs)


def l_stack(x, y):
    xs = [x, y, x * y]
    while len(xs) > 1:
        a = xs.pop()
        b = xs.pop()
        xs.append(a * b + 1.0)
    return xs[0]


def l_extend_insert(x, y):
    xs = [x]
    xs.extend([y, x * y])
    xs.insert(1, y * y)
    xs.insert(-1, x)
    xs.insert(100, 3.0)
    xs.extend(v * 2.0 for v in (x, y))
    xs.extend(xs)
    return xs[0] * xs[1] + xs[2] * xs[-2] + xs[5] * xs[6] + len(xs)


def l_repeat(x, y):
    xs = [x] * 3
    ys = 2 * [y, x]
    return sum(xs) * ys[3] + ys[2]


def l_reversed_filter(x, y):
    xs = [x, -y, y * 2.0]
    back = list(reversed(xs))
    kept = filter(lambda v: v > 0.0, xs)
    truthy = list(filter(None, [0.0, x]))
    return back[0] * back[2] + sum(kept) * x + truthy[0] + sum(reversed((x, y)))


def l_any_all(x, y):
    xs = [x, y, x * y]
    if any(v > 1.2 for v in xs) and all([v > 0.0 for v in xs]):
        return x * y
    return x + y if not any([]) else x


def l_zip_star(x, y):
    rows = [[x, y, 1.0], [y * y, x, 2.0]]
    s = 0.0
    for a, b in zip(*rows):
        s = s + a * b
    cols = list(zip(*rows))
    pairs = list(zip(rows[0], rows[1]))
    numbered = list(enumerate(rows[1]))
    return s + cols[1][0] * cols[0][1] + pairs[0][1] * numbered[1][1]


def l_zip_star_tuple(x, y):
    a, b = zip(*((x, y), (y, x * x)))
    return a[0] * b[1] + a[1] * b[0]


@pytest.mark.parametrize(
    "f", [l_pop, l_stack, l_extend_insert, l_repeat, l_reversed_filter, l_any_all, l_zip_star, l_zip_star_tuple]
)
def test_lists(f):
    grad_matches_fd(f, X, Y)


def test_pop_every_stage():
    assert_grad_matches_fd(l_pop, (X, Y), argnums=(0, 1))


def copy_made_only_in_a_loop(x, y):
    # the one copy `ys = xs` is made in a nested block: a write through it must reach xs
    xs = [x, y]
    for i in range(2):
        if i == 1:
            ys = xs
            ys[0] = ys[0] * y
    return xs[0] * xs[1]


def copy_made_only_in_a_nested_function(x, y):
    # the outer function has no copy; the function it calls does
    def scaled(v):
        xs = [v, y]
        ys = xs
        ys[1] = ys[1] * v
        return xs[1] * x

    return scaled(x) + y


@pytest.mark.parametrize("f", [copy_made_only_in_a_loop, copy_made_only_in_a_nested_function])
def test_a_write_through_a_copy_made_in_a_nested_block_or_function_reaches_the_original(f):
    assert_close(chad.value_and_grad(f)(X, Y)[0], f(X, Y))
    grad_matches_fd(f, X, Y)


def l_pop_argument(xs):
    ys = list(xs)
    ys.insert(0, ys.pop())
    return ys[0] * ys[1]


def test_pop_of_a_copy_leaves_the_argument_alone():
    xs = rand_list(3, 3)
    assert_grad_matches_fd(l_pop_argument, (xs,))


# ====================================================================== star-arguments and star-parameters


def s_three(a, b, c=1.0):
    return a * b + c


def s_collect(a, *rest, scale=1.0, **options):
    total = a
    for r in rest:
        total = total + r * scale
    return total * options.get("factor", 1.0)


def s_keyword_only(x, *, k=2.0):
    return x * k


def s_calls(x, y):
    pair = (x, y)
    full = [x, y, x * y]
    kw = {"b": y, "c": x}
    return (
        s_three(*pair)
        + s_three(*full)
        + s_three(x, **kw)
        + s_three(**{"a": y, "b": x})
        + s_collect(x, y, x * y, scale=y, factor=2.0)
        + s_collect(*full)
        + s_collect(x, *pair)
        + s_keyword_only(x, k=y)
        + s_keyword_only(y)
    )


def s_entry(*args):
    return args[0] * args[1] + args[-1]


def s_entry_named(x, *args, k=1.0, **kw):
    return x * sum(args) * k * kw.get("w", 1.0)


def test_star_arguments_and_parameters():
    grad_matches_fd(s_calls, X, Y)


def test_grad_of_a_star_args_function_counts_positional_arguments_as_passed():
    # like jax.grad: argnums are positions in the call, whatever parameter collects them
    assert chad.grad(s_entry)(X, Y, 3.0) == pytest.approx(Y)
    assert chad.grad(s_entry, argnums=(1, 2))(X, Y, 3.0) == pytest.approx((X, 1.0))
    grad_matches_fd(s_entry, X, Y, 3.0)
    g = chad.grad(s_entry_named, argnums=(0, 2))(X, Y, 2.0, k=3.0, w=0.5)
    assert g == pytest.approx((1.5 * (Y + 2.0), 1.5 * X))


# ====================================================================== print, f-strings, isinstance, slices, with


def p_print_format(x, y):
    text = f"{x:.3f}|{y!r}|{x * y:>{8}.2f}|"
    print(x, y, sep=", ", end=";\n")
    print(text)
    return x * y if isinstance(x, float) and not isinstance(y, (int, str)) else x


def test_print_and_fstrings(capsys):
    grad_matches_fd(p_print_format, X, Y)
    out = capsys.readouterr().out
    assert f"{X}, {Y};\n" in out
    assert f"{X:.3f}|{Y!r}|{X * Y:>8.2f}|\n" in out


def p_slice_objects(xs, a):
    s = slice(1, None)
    step = slice(None, None, 2)
    t = tuple(xs)
    return sum(xs[s]) * xs[step][1] + np.sum(a[s] * a[step][0]) + t[s][0] * t[step][-1]


def test_slice_objects():
    xs, a = rand_list(4, 5), np.asarray(rand_list(5, 4))
    grad_matches_fd(p_slice_objects, xs, a)


def p_with(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.log(np.array([x, 0.0]))  # log(0) = -inf, no warning
        for _ in range(2):
            with np.errstate(over="ignore") as state:
                z = z + y
        inside = np.geterr()
    return z[0] * y + (state is None) + (inside["divide"] == "ignore")


def test_with_enters_and_leaves_the_context_around_its_body():
    before = np.geterr()
    # the forward pass runs the body inside the context; the backward pass runs after it, outside:
    # log's rule divides by the 0.0 there and NumPy warns (that entry's cotangent is not used)
    with pytest.warns(RuntimeWarning, match="invalid value"):
        grad_matches_fd(p_with, X, Y)
    assert np.geterr() == before  # left again


def det_by_minors(a, rows, cols):
    """cmpad's det_by_minor (GradBench's det): the index lists updated in place down the recursion, put back on
    the way up. No derivative reads them when the backward pass runs (only the ints taken out of them)."""
    if len(rows) == 1:
        return a[rows[0], cols[0]]
    total, sign = 0.0, 1.0
    r = rows.pop(0)
    for j in range(len(cols)):
        c = cols.pop(j)
        total = total + sign * a[r, c] * det_by_minors(a, rows, cols)
        cols.insert(j, c)
        sign = -sign
    rows.insert(0, r)
    return total


def det_of(a):
    return det_by_minors(a, list(range(len(a))), list(range(len(a))))


def test_index_lists_moved_in_place_down_a_recursion_are_data():
    a = np.array([[2.0, 1.0, 0.5, 0.1], [0.3, 4.0, 1.0, 0.2], [1.0, 0.2, 3.0, 0.7], [0.4, 0.9, 0.8, 2.5]])
    assert det_of(a) == pytest.approx(np.linalg.det(a), rel=1e-12)
    np.testing.assert_allclose(chad.grad(det_of)(a), np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10)


def sum_at(a, idx):
    return np.sum(a[idx])  # its rule keeps idx for the backward pass


def r_insert_after_a_call_that_reads_back(a):
    idx = [0, 1]
    s = sum_at(a, idx)
    idx.insert(0, 2)
    return s * a[idx[0]]


# ====================================================================== rejected forms


def r_pop_after_max(x, y):
    xs = [x, y]
    m = max(xs)
    xs.pop()
    return m


def r_insert_argument(x, xs):
    # the caller's list, not differentiated
    xs.insert(0, 1.0)
    return xs[1] * x


def r_star_into_primitive(x, y):
    p = (x, y)
    return math.hypot(*p)


def r_with_return(x):
    with np.errstate(divide="ignore"):
        return x * 2.0


def r_dict_slice(x):
    d = {"a": x}
    s = slice(1, None)
    return d[s]


def r_star_args_too_long(x, y):
    return s_three(*[x, y, x, y])


@pytest.mark.parametrize(
    ("f", "args", "error", "match", "line"),
    [
        (r_pop_after_max, (X, Y), chad.UnsupportedSyntax, "copy it first", "xs.pop()"),
        (
            r_insert_after_a_call_that_reads_back,
            (np.array([1.0, 2.0, 3.0]),),
            chad.UnsupportedSyntax,
            "copy it first",
            "idx.insert(0, 2)",
        ),
        (r_star_into_primitive, (X, Y), chad.UnsupportedSyntax, "star-arguments", "return math.hypot(*p)"),
        (r_with_return, (X,), chad.UnsupportedSyntax, "__exit__", 'with np.errstate(divide="ignore"):'),
        (r_dict_slice, (X,), chad.ChadTypeError, "cannot be sliced", "return d[s]"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_rejected(f, args, error, match, line):
    with pytest.raises(error, match=match) as info:
        chad.grad(f)(*args)
    assert_located(str(info.value), f, line)


def test_data_the_caller_gave_is_updated_as_the_plain_call_updates_it():
    """`xs.insert(0, 1.0)` on a list the caller gave and that is not differentiated: data, updated in place as
    Python does (the caller sees it, as after the plain call)."""
    ours, plain = [X, Y], [X, Y]
    assert chad.grad(r_insert_argument)(X, ours) == pytest.approx(X)
    r_insert_argument(X, plain)
    assert ours == plain


def test_star_argument_of_the_wrong_length_fails_when_it_runs():
    with pytest.raises(TypeError, match="too many positional arguments"):
        chad.grad(r_star_args_too_long)(X, Y)


def s_two_spreads(x, params):
    """GradBench's form: the model's parameters and the data spread into one call."""
    data = {"c": x * x}
    return s_three(**params, **data) + s_three(x, **{"b": x}, **{"c": 2.0})


def s_two_spreads_twice(x):
    return s_three(**{"a": x, "b": 1.0}, **{"b": 2.0, "c": x})


def test_two_keyword_spreads_in_one_call():
    """`f(**a, **b)`: each parameter from whichever dict holds it; the gradient reaches both dicts."""
    params = {"a": 0.7, "b": -1.3}
    grad_matches_fd(s_two_spreads, X, params)
    g = chad.grad(s_two_spreads, argnums=1)(X, params)
    expected = chad.grad(lambda a, b: s_three(a, b, X * X), argnums=(0, 1))(params["a"], params["b"])
    assert g == pytest.approx(dict(zip("ab", expected)))


def test_a_keyword_given_twice_by_two_spreads_is_pythons_type_error():
    with pytest.raises(TypeError, match="multiple values for keyword argument 'b'"):
        s_two_spreads_twice(X)
    with pytest.raises(TypeError, match="multiple values for keyword argument 'b'"):
        chad.grad(s_two_spreads_twice)(X)


def s_star_displays(x, y, t):
    """Star-expressions in displays: a list's elements, a tuple's components, a shape with an axis added."""
    xs = [x, x * y]
    s = sum([*xs, y, *xs])
    u = (*t, x, *t)
    w = [*u]
    a = np.arange(1.0, 4.0) * x
    column = np.reshape(a, (*a.shape, 1))
    return s * u[-1] + u[2] * w[0] + np.sum(column * column.T) * y + w[1] * y


def test_star_expressions_in_list_and_tuple_displays():
    """`[*xs, y]` is `list(xs) + [y]`, `(*t, x)` is `tuple(t) + (x,)`: a tuple's length stays static, so
    `(*a.shape, 1)` is a shape; gradients reach every starred element (it was a rejection)."""
    grad_matches_fd(s_star_displays, X, Y, (0.3, -1.1))
    s = chad.grad(s_star_displays, argnums=2)(X, Y, (0.3, -1.1))
    assert isinstance(s, tuple) and len(s) == 2


def r_starred_target(xs):
    first, *rest = xs
    return first * sum(rest)


def test_a_starred_target_takes_the_rest():
    """`first, *rest = xs` was a refusal (more in tests/language/test_real_code_forms.py)."""
    grad_matches_fd(r_starred_target, [X, Y, 1.0])


def test_a_one_element_tuple_target_takes_the_element():
    """`a, = t` bound the whole tuple to `a` (a crash in the derivative); it is t's one element."""

    def f(x):
        t = (x * 2.0,)
        (a,) = t
        return a * x

    assert chad.grad(f)(1.5) == 6.0
