"""Element and slice assignment (`x[i] = v`, `x[i] += v`, `A[:, j] = col`, masks, `x.fill(v)`,
`d[k] = v`, `xs[i] = v`) on containers the function made: gradients against central finite
differences, the rewinding of writes for rules that read a container later written to, and the
rejected forms' messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff, rand_array, vjp_fd
from tests.support.located import assert_located

X = rand_array(1, (5,))
M = rand_array(2, (3, 4))


def fill_loop(x, w):
    n = len(x)
    out = np.empty(n)
    out[0] = x[0]
    for i in range(1, n):
        out[i] = np.tanh(out[i - 1] * w) + x[i]
    return np.sum(out * out)


def augmented(x):
    out = np.ones(3)
    out[0] += x[0]
    out[1] *= x[1]
    out[2] -= x[2] * x[0]
    out[1] /= 1.5 + x[3]
    out[0] **= 2
    return np.sum(out * np.array([1.0, 2.0, 3.0]))


def two_dimensional(m):
    a = np.zeros((3, 4))
    for i in range(3):
        for j in range(4):
            a[i, j] = m[i, j] * (i + 1.0) + a[i, j - 1]
    return np.sum(np.sin(a))


def rows_and_columns(m, v):
    a = m.copy()
    a[1, :] = v * 2.0
    a[:, 2] += np.cos(v[:3])
    a[0] = a[2] * a[1]
    return np.sum(a * a)


def slices(x):
    out = np.zeros(8)
    out[2:7] = x * 3.0
    out[:3] += x[1:4]
    out[::2] = out[1::2] * x[0]
    return np.sum(out**2)


def masks_and_index_arrays(x):
    a = x.copy()
    a[a > 0.0] = a[a > 0.0] ** 2
    a[np.array([0, 2])] = x[1] * np.array([1.0, 2.0])
    return np.sum(a * x)


def repeated_index(x):
    a = np.zeros(3)
    a[np.array([0, 1, 0])] = x[:3]  # NumPy keeps the last value written to position 0
    return np.sum(a * np.array([1.0, 2.0, 3.0]))


def filled(x):
    a = np.empty(4)
    a.fill(x[0])
    a[1] = x[1]
    return np.sum(a * np.arange(4.0))


def list_store(x):
    xs = [0.0] * 3
    for i in range(3):
        xs[i] = x[i] * x[i]
    xs[-1] += xs[0]
    return sum(xs) * xs[2]


def dict_store(x):
    d = {"a": x[0], "b": 1.0}
    d["a"] = d["a"] * x[1]
    d["c"] = d["b"] + x[2]
    d["b"] += d["a"]
    return d["a"] * d["b"] + d["c"]


def triangular(v, n):
    el = np.zeros((n, n))
    k = 0
    for i in range(n):
        for j in range(i + 1):
            el[i, j] = np.exp(v[k]) if i == j else v[k]
            k += 1
    return np.sum(el @ el.T)


def rnn(x, w):
    h = np.zeros((x.shape[0] + 1, w.shape[0]))
    for t in range(x.shape[0]):
        h[t + 1] = np.tanh(w @ h[t] + x[t])
    return np.sum(h[-1] ** 2)


@pytest.mark.parametrize(
    ("fn", "args", "argnums"),
    [
        (fill_loop, (X, 0.7), (0, 1)),
        (augmented, (X,), 0),
        (two_dimensional, (M,), 0),
        (rows_and_columns, (M, rand_array(3, (4,))), (0, 1)),
        (slices, (X,), 0),
        (masks_and_index_arrays, (X,), 0),
        (repeated_index, (X,), 0),
        (filled, (X,), 0),
        (list_store, (X,), 0),
        (dict_store, (X,), 0),
        (triangular, (rand_array(4, (6,)), 3), 0),
        (rnn, (rand_array(5, (4, 3)), rand_array(6, (3, 3))), (0, 1)),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_gradient_matches_finite_differences(fn, args, argnums):
    assert_grad_matches_fd(fn, args, argnums=argnums)


def read_then_written(x):
    out = x * 2.0
    first = np.sum(out * x)  # its rule reads out as it is here
    out[0] = 5.0
    out[1] = out[1] * out[2]
    return first + np.sum(out * x)


def helper_product(a, b):
    return np.sum(a * b)


def read_by_a_helper_then_written(x):
    out = np.ones(3)
    out[1] = x[1]
    s = helper_product(out, x[:3])  # the helper's rule reads out as it was at the call
    out[1] = 3.0
    out[2] = x[0] * x[0]
    return s * np.sum(out * x[:3])


def list_written_after_a_product(x):
    xs = [x[0], 2.0 * x[1]]
    xs[0] = xs[0] * x[2]
    p = math.prod(xs)
    xs[1] = 7.0
    return p + xs[1] * x[0]


def array_read_then_its_list_written(x):
    h = [x * 1.0, x * 2.0]
    y = h[0]
    z = np.sin(y)  # its rule reads y, an array: the write below changes the list, not y
    h[0] = x * 3.0
    return np.sum(z * h[0]) + np.sum(y * h[1])


@pytest.mark.parametrize(
    "fn",
    [read_then_written, read_by_a_helper_then_written, list_written_after_a_product, array_read_then_its_list_written],
)
def test_a_rule_reads_the_values_its_operation_saw(fn):
    """A write after an operation whose derivative reads the container is undone before that
    derivative runs, and made again at the end."""
    assert_grad_matches_fd(fn, (X,))


def test_a_write_to_a_list_rewinds_no_array_rule():
    """Only the rules reading a kind of container the function writes rewind (a list's write
    changes no array); the array write of `read_then_written` still rewinds."""
    assert "rewind" not in chad.source(array_read_then_its_list_written, X)
    assert "rewind" in chad.source(read_then_written, X)


def returns_the_buffer(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] * 2.0
    s = np.sum(out * x[:3])  # its rule rewinds the write below
    out[0] = x[1] * out[2] + s
    return out


def test_the_primal_result_and_a_second_backward_pass_see_the_final_values():
    value, pullback = chad.vjp(returns_the_buffer, X)
    expected = returns_the_buffer(X)
    ct = np.array([1.0, -2.0, 0.5])
    first = pullback(ct)
    assert_close(value, expected, where="value after a backward pass")
    second = pullback(ct)
    assert_close(second, first, where="a second backward pass")
    rows = [pullback(np.eye(3)[k])[0] for k in range(3)]  # the Jacobian, one backward pass per row
    assert_close(np.stack(rows), np.stack([vjp_fd(returns_the_buffer, X, e) for e in np.eye(3)]), where="jacobian")


# Aliasing follows Python: after `b = a` both names are one object (`copies.py`)


def written_through_a_copy(x):
    a = np.zeros(3)
    b = a
    b[0] = x[0]
    b[1] = x[1] ** 2
    a[2] = b[0] * x[2]
    return np.sum(a * x[:3]) + np.sum(b)


def filled_through_a_copy(x):
    out = np.zeros(4)
    buf = out
    for i in range(4):
        buf[i] = np.sin(x[i]) * 2.0 + buf[i - 1]
    return out @ x[:4]


def original_reassigned(x):
    a = np.zeros(3)
    b = a
    a[0] = x[0] ** 3
    a = np.ones(3) * x[1]
    return np.sum(b) * np.sum(a)


def list_appended_through_a_copy(x):
    xs = []
    ys = xs
    ys.append(x[0] ** 2)
    xs.append(x[1])
    return sum(ys) * xs[1] * len(xs)


def dict_written_through_a_copy(x):
    d = {"a": x[0]}
    e = d
    d.setdefault("b", x[1])
    e["c"] = x[2] * 2.0
    return e["a"] * d["b"] + d["c"]


def array_augmented_through_a_copy(x):
    a = np.zeros(3)
    b = a
    b += x[:3] ** 2
    return np.sum(a * x[1:4])


def original_augmented_copy_read(x):
    a = x[:3] * 1.0
    b = a
    a *= x[1:4]
    return np.sum(b * x[2:5])


def number_augmented_through_a_copy(x):
    s = x[0] * 1.0
    t = s
    t += x[1]  # a new float: s is unchanged
    return s * t


def list_augmented_through_a_copy(x):
    xs = [x[0]]
    ys = xs
    ys += [x[1] ** 2]
    return sum(xs) * len(xs)


@pytest.mark.parametrize(
    "fn",
    [
        written_through_a_copy,
        filled_through_a_copy,
        original_reassigned,
        list_appended_through_a_copy,
        dict_written_through_a_copy,
        array_augmented_through_a_copy,
        original_augmented_copy_read,
        number_augmented_through_a_copy,
        list_augmented_through_a_copy,
    ],
)
def test_a_write_through_one_name_is_seen_through_the_other(fn):
    assert_close(chad.value_and_grad(fn)(X.copy())[0], fn(X.copy()))
    assert_grad_matches_fd(fn, (X,))


# ---------------------------------------------------------------- views share storage (`views.py`)


def written_through_a_row(x):
    a = np.zeros((3, 4)) + x[4]
    row = a[1]
    row[0] = x[0] * x[1]
    row[2:] = x[2:4] ** 2
    return np.sum(a * a)


def base_written_row_read(x):
    a = np.ones((3, 4)) * x[0]
    row = a[1]
    a[1, 2] = x[1] ** 2
    a[:, 0] = x[2]
    return np.sum(row * row) + np.sum(a) * x[3]


def column_filled_in_a_loop(x):
    a = np.zeros((5, 2))
    col = a[:, 1]
    for i in range(5):
        col[i] = x[i] * (i + 1)
    return np.sum(a**2) + np.sum(col)


def written_through_the_transpose(x):
    a = np.zeros((2, 3)) + x[3]
    at = a.T
    at[2, 1] = x[0] * x[1]
    a[0, 0] = x[2]
    return np.sum(at * at) + np.sum(a * x[4])


def written_through_a_reshape(x):
    a = np.zeros((2, 3))
    flat = a.reshape(6)
    flat[4] = x[0] * x[1]
    flat += x[2]
    a[1, 0] = x[3]
    return np.sum(a**3) + np.sum(flat * x[4])


def rows_of_a_state_buffer(x):
    h = np.zeros((5, 2))
    h[0] = x[:2]
    for t in range(1, 5):
        row = h[t]
        row[:] = np.tanh(h[t - 1] * x[2] + x[3])
        row *= x[4]
    return np.sum(h**2)


def view_kept_across_a_loop(x):
    acc = x * 1.0
    first = acc[:2]  # sees every later update of acc
    for _ in range(2):
        acc += x
    return np.sum(first**2) + np.sum(acc)


def view_of_a_view(x):
    a = np.zeros((3, 4))
    row = a[2]
    tail = row[1:]
    tail[0] = x[0] * x[1]
    row[3] = x[2]
    return np.sum(a**2) + np.sum(tail * x[3])


def overlapping_views(x):
    a = np.zeros((3, 3)) + x[0]
    row = a[1]
    col = a[:, 1]
    row[1] = x[1] ** 2  # col[1] too
    col *= x[2]
    return np.sum(row * x[3]) + np.sum(a**2)


def written_through_a_view_on_one_path(x):
    a = np.zeros((2, 3))
    row = a[0]
    for i in range(3):
        if x[i] > 0.0:
            row[i] = x[i] * x[3]
        else:
            a[1, i] = x[4]
    return np.sum(a**2) + np.sum(row)


def written_through_a_view_until_break(x):
    a = np.zeros((2, 5))
    row = a[1]
    for i in range(5):
        row[i] = x[i] ** 2
        if i == 3:
            break
    return np.sum(a * x[4])


def copies_that_look_like_views(x):
    a = np.zeros((2, 3)) + x[0]
    first = a[0, 0]  # a number: keeps its value
    picked = a[[0, 1]]  # an integer-array index copies
    picked[0, 0] = x[1]
    a[0, 0] = x[3]
    return first * x[4] + np.sum(picked**2) + np.sum(a**2)


def reshape_of_a_transpose_copies(x):
    a = np.zeros((2, 3)) + x[0]
    at = a.T
    flat = at.reshape(6)  # `at` is strided: a copy, which writes do not reach
    flat[1] = x[1]
    at[0, 1] = x[2] ** 2
    return np.sum(flat**2) + np.sum(at * x[3]) + np.sum(a)


def view_made_only_in_a_branch(x):
    # the one view is made in a nested block (the pass must still find it)
    a = np.zeros((2, 3)) + x[0]
    for i in range(2):
        if x[1] < 0.0:
            row = a[i]
            row[0] = x[2] ** 2
    return np.sum(a * x[3])


def view_made_only_in_a_nested_function(x):
    # the outer function makes no view; the one it calls does
    def filled(v):
        a = np.zeros((2, 3)) + v
        row = a[0]
        row[1] = v * x[1]
        return np.sum(a**2)

    return filled(x[0]) * x[2]


def base_read_in_a_loop_after_a_write_through_a_view(x):
    a = np.arange(3.0) * x[0]
    view = a[1:]
    view[0] *= x[1]
    total = 0.0
    for k in range(2):  # the base is given back once, before the loop (in it, the loop's entry read the old one)
        total += np.linalg.norm(a) * (k + 1)
    return total


def base_read_in_one_branch_after_a_write_through_a_view(x):
    a = np.ones((3, 1)) * x[0]
    view = a.T
    view[0, 2] = x[1]
    if x[0] > 0:  # the base is given back before the `if` (on one path only, the join handed on the old one)
        s = np.sum(a) * x[1]
    else:
        s = 0.5
    return s + np.sum(a * a)


@pytest.mark.parametrize(
    "fn",
    [
        base_read_in_a_loop_after_a_write_through_a_view,
        base_read_in_one_branch_after_a_write_through_a_view,
        view_made_only_in_a_branch,
        view_made_only_in_a_nested_function,
        written_through_a_row,
        base_written_row_read,
        column_filled_in_a_loop,
        written_through_the_transpose,
        written_through_a_reshape,
        rows_of_a_state_buffer,
        view_kept_across_a_loop,
        view_of_a_view,
        overlapping_views,
        written_through_a_view_on_one_path,
        written_through_a_view_until_break,
        copies_that_look_like_views,
        reshape_of_a_transpose_copies,
    ],
)
def test_a_write_through_a_view_or_its_base_is_seen_through_both(fn):
    x = np.array([0.7, -0.4, 1.3, 0.6, -0.9])
    assert_close(chad.value_and_grad(fn)(x.copy())[0], fn(x.copy()))
    assert_grad_matches_fd(fn, (x,))


def test_the_caller_s_array_is_not_mutated():
    m, v = M.copy(), rand_array(3, (4,))
    chad.grad(rows_and_columns, argnums=(0, 1))(m, v.copy())
    assert np.array_equal(m, M)


def writes_an_argument(x):
    x[0] = 1.0
    return np.sum(x)


def aliased_on_one_path_only(x):
    a = np.zeros(3)
    b = np.ones(3)
    if x[0] > 0:
        b = a
    b[0] = x[1]
    return np.sum(a * x[:3])


def alias_read_by_a_closure(x):
    a = np.zeros(3)
    b = a
    read = lambda: np.sum(b * x[:3])  # noqa: E731
    a[0] = x[1]
    return read()


def alias_updated_again_after_augmented(x):
    a = x[:3] * 1.0
    b = a
    a += x[1:4]
    a[0] = x[0] ** 3
    return np.sum(b * b)


def writes_a_view_of_an_argument(x):
    row = x[1:]
    row[0] = 1.0
    return np.sum(x)


def writes_an_untracked_view(x):
    a = np.zeros((2, 3))
    view = np.transpose(a)
    view[0, 1] = x[0]
    return np.sum(a)


def writes_an_element_three_deep(x):
    a = np.zeros((2, 3, 2))
    a[0][1][1] = x[0]
    return np.sum(a)


def writes_a_list_slice(x):
    xs = [1.0, 2.0, 3.0]
    xs[0:2] = [x[0]]
    return sum(xs)


@pytest.mark.parametrize(
    ("fn", "message", "line"),
    [
        (aliased_on_one_path_only, "in place", "b[0] = x[1]"),
        (alias_read_by_a_closure, "in place", "a[0] = x[1]"),
        (alias_updated_again_after_augmented, "in place", "a[0] = x[0] ** 3"),
        (writes_an_untracked_view, "in place", "view[0, 1] = x[0]"),
        (writes_an_element_three_deep, "three deep", "a[0][1][1] = x[0]"),
        (writes_a_list_slice, "slice of a list", "xs[0:2] = [x[0]]"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_rejected_forms_say_what_and_where(fn, message, line):
    with pytest.raises(chad.ChadError, match=message) as info:
        chad.grad(fn)(X.copy())
    assert_located(str(info.value), fn, line)


def test_float32_in_float32_out():
    x = X.astype(np.float32)
    g = chad.grad(fill_loop)(x, np.float32(0.7))
    assert g.dtype == np.float32
    assert_close(g.astype(np.float64), chad.grad(fill_loop)(X, 0.7), rtol=1e-4, where="float32 against float64")


# ---------------------------------------------------------------- an element's element (`xs[t][i] = v`)


def make_rows(n):
    return [np.zeros(3) for _ in range(n)]


def rows_filled_in_a_loop(x):
    xs = [np.zeros(3) for _ in range(2)]
    for t in range(2):
        for i in range(3):
            xs[t][i] = x[i] * (t + 1)
    return np.sum(xs[0] * xs[1])


def list_of_lists_augmented(x):
    xs = [[0.0] * 4 for _ in range(3)]
    for i in range(2):
        xs[i + 1][i * 2] += x[i] * x[2]
    return sum(sum(r) ** 2 for r in xs)


def dict_of_lists(x):
    d = {"a": [0.0, 0.0], "b": [1.0]}
    d["a"][1] = x[0] * x[1]
    d["b"][0] *= x[2]
    return d["a"][1] ** 2 + d["a"][0] + d["b"][0]


def appended_rows(x):
    xs = []
    for _ in range(2):
        xs.append(np.zeros(3))
    xs[1][2] = x[0] ** 2
    return np.sum(xs[1] * x) + xs[0][2]


def matrix_row_then_element(x):
    a = np.zeros((2, 3)) + x[0]
    a[1][2] = x[1] ** 2
    a[0][:] = x
    a[[0, 1]][0] = x[2] * 5  # an integer-array index copies: the write is lost, in NumPy and in the derivative
    return np.sum(a * a)


def rows_from_a_helper(x):
    xs = make_rows(2)
    xs[1][0] = x[2] * x[1]
    return np.sum(xs[1]) * 2 + np.sum(xs[0])


def rows_made_on_either_branch(x):
    if x[0] > 0:
        xs = [np.zeros(3), np.ones(3)]
    else:
        xs = [np.ones(3), np.zeros(3)]
    xs[1][2] = x[0] * 3
    return np.sum(xs[1] * x)


def element_in_a_tuple_target(x):
    xs = [np.zeros(2) for _ in range(2)]
    xs[0][1], y = x[0] * 3, x[1]
    return xs[0][1] * y


def row_read_between_writes(x):
    xs = [np.zeros(2) for _ in range(2)]
    for t in range(2):
        xs[t][:] = x[:2] * (t + 1)
        r = xs[t]
        xs[t][0] = r[1] * 2
    return np.sum(xs[0] * xs[1])


@pytest.mark.parametrize(
    "fn",
    [
        rows_filled_in_a_loop,
        list_of_lists_augmented,
        dict_of_lists,
        appended_rows,
        matrix_row_then_element,
        rows_from_a_helper,
        rows_made_on_either_branch,
        element_in_a_tuple_target,
        row_read_between_writes,
    ],
)
def test_an_element_of_an_element_is_written_in_place(fn):
    x = np.array([0.7, 1.3, -0.4])
    assert_close(chad.value_and_grad(fn)(x.copy())[0], fn(x.copy()))
    assert_grad_matches_fd(fn, (x,))


def element_raising_in_a_try(x):
    hs = [np.zeros(3) for _ in range(3)]
    try:
        hs[1][0] = x[0] * 2
        hs[2][1] = math.log(x[1])  # raises for x[1] <= 0: the first write stays, this one is not made
    except ValueError:
        hs[0][2] = x[2]
    return np.sum(hs[0] * 3) + np.sum(hs[1]) + np.sum(hs[2])


@pytest.mark.parametrize("x1", [2.0, -1.0])
def test_an_element_written_in_a_try_body_that_raises(x1):
    x = np.array([0.7, x1, -0.4])
    g = chad.grad(element_raising_in_a_try)(x)
    assert_close(g, np.array([2.0, 1 / x1, 0.0]) if x1 > 0 else np.array([2.0, 0.0, 3.0]))


def one_list_twice(x):
    xs = [[0.0] * 2] * 2  # one list, held twice
    xs[0][1] = x[0]
    return xs[1][1]


def one_array_twice(x):
    a = np.zeros(3)
    xs = [a, a]
    xs[0][1] = x[0]
    return xs[1][1]


def row_read_before_and_used_after(x):
    xs = [np.zeros(3) for _ in range(2)]
    row = xs[0]
    xs[0][1] = x[0]
    return row[1]


def put_in_and_used_after(x):
    a = np.zeros(3)
    xs = [a]
    xs[0][1] = x[0]
    return a[1]


def shallow_copy_read_after(x):
    xs = [np.zeros(3) for _ in range(2)]
    ys = list(xs)
    xs[0][1] = x[0]
    return ys[0][1]


def rows_of_a_matrix_in_a_list(x):
    a = np.zeros((2, 3))
    xs = [a[0], a[1]]
    xs[0][1] = x[0]
    return a[0, 1]


def comprehension_of_the_rows_read_after(x):
    xs = [np.zeros(3) for _ in range(2)]
    z = [r for r in xs]
    xs[0][1] = x[0]
    return z[0][1]


@pytest.mark.parametrize(
    "fn",
    [
        one_list_twice,
        one_array_twice,
        row_read_before_and_used_after,
        put_in_and_used_after,
        shallow_copy_read_after,
        rows_of_a_matrix_in_a_list,
        comprehension_of_the_rows_read_after,
    ],
)
def test_an_element_something_else_holds_is_not_written(fn):
    """Each writes an object another name or container also holds, and reads it there: Python sees the write
    (the plain result is x[0]), the IR's functional update would not; refused at the write."""
    x = np.array([0.7, 1.3, -0.4])
    assert fn(x) == x[0]
    with pytest.raises(chad.ChadError, match="something else may also hold"):
        chad.grad(fn)(x)


def caller_rows_written(xs):
    xs[0][1] = xs[0][0] * 2
    return xs[0][1]


def test_an_element_of_the_callers_list_is_not_written():
    xs = [np.array([1.0, 2.0])]
    with pytest.raises(chad.ChadError, match="in place"):
        chad.grad(caller_rows_written)(xs)
    assert_close(xs[0], np.array([1.0, 2.0]))


# ====================================================================== 14. Python's in-place semantics


def view_augmented(a):
    h = a[:2]
    h *= 3
    return np.sum(a)


def argument_augmented(a, z):
    a += z
    return np.sum(a)


def owned_accumulator(v):
    s = np.zeros(3)
    for i in range(2):
        s += v * i
    return np.sum(s * s)


def owned_copy_then_update(v):
    b = v * 1.0
    c = b
    c += 1.0
    return np.sum(c * c)


def row_read_then_update(v):
    acc = np.ones((3, 2)) * 0.9
    s = 1.0
    for _ in range(3):
        acc += np.outer(v, v)[:, :2]
        s = s * math.sin(acc[-2][-2])  # a view of a row, dead after this line
    return s + np.sum(acc)


def view_through_a_swap(v, w):
    a = v * 1.0
    b = w * 1.0
    view = a[1:]
    a, b = b, a
    b += 1.0  # b is the old a: the view sees this
    return np.sum(view * view) + np.sum(a)


def update_after_a_swap(v, w):
    a = v * 1.0
    b = w * 1.0
    a, b = b, a
    b += a
    return np.sum(b * b)


def update_after_a_branch(v, c):
    if c > 0.0:
        a = v * 2.0
    else:
        a = v * 3.0
    a *= a
    return np.sum(a)


def update_after_stacking(v):
    a = v * 1.0
    both = np.stack([a, a], axis=1)  # the list is gone after this line; np.stack copies
    a += 1.0
    return np.sum(both * a[:, None])


def update_of_an_advanced_index_copy(v):
    a = v[np.array([2, 0])]  # a copy, not a view
    a *= 3.0
    return np.sum(a * a) + np.sum(v)


def update_while_a_list_holds_it(v):
    a = v * 1.0
    held = [a]
    a += 1.0
    return np.sum(held[0])


def update_while_a_tuple_holds_it(v):
    a = v * 1.0
    pair = (a, 2.0)
    a *= 2.0
    return np.sum(pair[0]) + np.sum(a)


def reads_only(a, w):
    return np.sum(a * w)


def keeps_it(a, w):
    return (a, w)


def update_after_a_call_that_reads(v, w):
    a = v * 1.0
    s = reads_only(a, w)
    a += s
    return np.sum(a * a)


def update_after_a_call_that_keeps(v, w):
    a = v * 1.0
    kept = keeps_it(a, w)
    a += 1.0
    return np.sum(kept[0])


def is_float(v):
    return v * 2.0 if isinstance(v, float) else v


@pytest.mark.parametrize(
    ("fn", "args", "line"),
    [
        (view_through_a_swap, (np.ones(3), np.ones(3)), "b += 1.0  # b is the old a: the view sees this"),
        (update_while_a_list_holds_it, (np.ones(3),), "a += 1.0"),
        (update_while_a_tuple_holds_it, (np.ones(3),), "a *= 2.0"),
        (update_after_a_call_that_keeps, (np.ones(3), 0.5), "a += 1.0"),
    ],
)
def test_an_in_place_update_another_name_may_see_is_an_error(fn, args, line):
    with pytest.raises(chad.UnsupportedSyntax) as info:
        chad.grad(fn)(*args)
    assert "in place" in info.value.message
    assert_located(str(info.value), fn, line)


def test_an_in_place_update_nobody_else_sees_is_fine():
    v = np.array([0.5, -1.0, 2.0])
    assert_grad_matches_fd(owned_accumulator, (v,))
    assert_grad_matches_fd(owned_copy_then_update, (v,))
    assert_grad_matches_fd(row_read_then_update, (v,))
    assert_grad_matches_fd(update_after_a_swap, (v, v[::-1] * 0.5), argnums=(0, 1))
    assert_grad_matches_fd(update_after_a_branch, (v, 1.0))
    assert_grad_matches_fd(update_after_a_branch, (v, -1.0))
    assert_grad_matches_fd(update_after_stacking, (v,))
    assert_grad_matches_fd(update_of_an_advanced_index_copy, (v,))
    assert_grad_matches_fd(update_after_a_call_that_reads, (v, 0.5), argnums=(0, 1))


def test_isinstance_with_a_builtin_type():
    assert chad.grad(is_float)(1.5) == 2.0


def update_keeps_the_layout(x):
    a = np.transpose(np.ones((2, 3)) * 1.25) * 1.0  # Fortran order
    for _ in range(5):
        a += np.tanh(np.array([[x, np.max(a)], [x * 0.5, -1.5], [x, 0.5]]) * x)
    return np.mean(a**2)


def test_an_update_leaves_the_array_laid_out_as_python_does():
    """`a += b` on a Fortran-ordered array keeps its order, and NumPy's pairwise sum depends on it: the
    derivative's value equals the function's to the last bit (found by the random-program test, seed 4048)."""
    for x in np.linspace(-1.0, 1.0, 41):
        value, _ = chad.value_and_grad(update_keeps_the_layout)(float(x))
        assert value == update_keeps_the_layout(float(x))
    assert_grad_matches_fd(update_keeps_the_layout, (0.3,))


def updates_parts_of_numpy_tuples(x):
    frac = np.modf(x * 0.3)[0]
    frac += np.tanh(frac)
    w, v = np.linalg.eigh(np.outer(x, x) + np.eye(2))
    v *= 2.0
    return np.sum(frac) + np.sum(w) + np.sum(v * v)


def updates_a_part_still_read_through_its_tuple(x):
    t = np.modf(x * 0.3)
    frac = t[0]
    frac += 1.0
    return np.sum(t[0]) + np.sum(frac)


def test_a_part_of_a_numpy_tuple_result_is_owned():
    """`np.modf(...)[0]`, `w, v = np.linalg.eigh(a)`: each part is a new array, but a part read out of a
    tuple result was not owned, so `frac += ...` on it was rejected (random programs, seed 819). Updating
    one while the tuple is still read stays rejected."""
    assert_grad_matches_fd(updates_parts_of_numpy_tuples, (np.array([0.4, 0.7]),))
    with pytest.raises(chad.UnsupportedSyntax, match="in place"):
        chad.grad(updates_a_part_still_read_through_its_tuple)(np.array([0.4, 0.7]))


def augments_a_copy_of_a_free_variable(x):
    y = x * 2.0

    def g(t):
        s = y
        s += y * t
        return s

    return g(x)


def test_augmenting_a_copy_of_an_outside_name_does_not_make_it_local():
    """`s = y; s += ...` in a nested function, y from outside: `copies.py` wrote `y.__updated_by__(s)`
    after the update, which made y a local of g ("used before it is assigned"; random programs, seed 307).
    Only the function's own names are settled after an update."""
    assert_close(chad.grad(augments_a_copy_of_a_free_variable)(0.7), 2.0 + 4.0 * 0.7)


def copy_read_where_its_original_is_shadowed(x):
    y = x * 2.0
    z = y
    return sum(math.tanh(z) * y for y in [x, 1.0])


def test_a_copy_is_not_replaced_where_a_comprehension_shadows_its_original():
    """`z = y; sum(f(z) for y in ...)`: `copies.py` made `z` inside the generator its own `y`, the
    generator's variable, not the function's (a wrong value; random programs, seed 6282)."""
    f = copy_read_where_its_original_is_shadowed
    assert_close(chad.value_and_grad(f)(0.4)[0], f(0.4))
    assert_grad_matches_fd(f, (0.4,))


def _step(h, x):
    return np.tanh(h + x), h * 2.0


def element_in_a_tuple_target(x):
    H = np.zeros((2, 3, 4))
    h = np.ones(4) * 0.5
    for t in range(3):
        H[:, t, :], cache = _step(h, x[t])  # CS231n's `h[:, t, :], cache = step(...)`
        h = cache * 0.1
    return np.sum(H**2)


def swap_in_a_list(x):
    s2 = [x, 2.0 * x, 3.0 * x]
    for i in range(2):
        (s2[i], s2[i + 1]) = (s2[i + 1], s2[i] * x)  # the whole value first, then the targets left to right
    return s2[2] + s2[0] ** 2


@pytest.mark.parametrize(("f", "arg"), [(element_in_a_tuple_target, np.ones((3, 4)) * 0.1), (swap_in_a_list, 1.3)])
def test_an_element_target_inside_a_tuple_target(f, arg):
    assert_grad_matches_fd(f, (arg,))


def flux_update(F, flux):
    F += flux  # the caller's array, updated in place by the plain call
    F[0] = F[0] * 2.0
    return np.sum(F**2)


def appends_to_its_argument(xs):
    xs.append(xs[0] * xs[1])
    xs[0] = xs[0] ** 2
    return sum(xs)


def test_a_differentiated_argument_written_in_place_is_copied_on_entry():
    F, flux = np.array([1.0, 2.0]), np.array([0.5, 0.5])
    before = F.copy()
    value, (dF, dflux) = chad.value_and_grad(flux_update, argnums=(0, 1))(F, flux)
    assert np.array_equal(F, before)  # the derivative never mutates the caller's argument
    assert value == flux_update(F.copy(), flux)
    assert_close(dF, np.array([12.0, 5.0]))  # at the value on entry: F + flux = [1.5, 2.5], then [3, 2.5]
    assert_close(dflux, np.array([12.0, 5.0]))
    xs = [1.5, 2.0]
    assert chad.grad(appends_to_its_argument)(xs) == pytest.approx([2 * 1.5 + 2.0, 1.0 + 1.5])
    assert xs == [1.5, 2.0]


def updates_a_callers_array(a):
    a += 1.0
    return np.sum(a)


def calls_an_updater(x):
    y = x * 2.0
    total = updates_a_callers_array(y)
    return total + np.sum(y)  # the plain call sees y updated: a callee's update is not copied away


def test_a_callee_updating_its_argument_in_place_is_still_refused():
    with pytest.raises(chad.UnsupportedSyntax, match="in place"):
        chad.grad(calls_an_updater)(np.ones(2))


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (writes_an_argument, (X,)),
        (writes_a_view_of_an_argument, (X,)),
        (view_augmented, (np.array([0.5, 1.5, -2.0]),)),
        (argument_augmented, (np.array([0.5, 1.5, -2.0]), 1.25)),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_the_entry_points_own_arguments_are_updated_in_a_copy(fn, args):
    before = [np.copy(a) for a in args]
    argnums = tuple(range(len(args)))
    grads = chad.grad(fn, argnums=argnums)(*args)
    for k, (a, b) in enumerate(zip(args, before)):
        assert np.array_equal(a, b)  # the caller's arguments as they were
        expected = central_diff(lambda *v: fn(*[np.copy(t) for t in v]), args, k)
        assert_close(grads[k], expected, where=f"d/d arg {k}")


def _rotation_maker():
    def make(a):
        return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

    return make


def scales_a_returned_array(a, s):
    R = _rotation_maker()(a)  # a new array, made by a function value
    R *= s
    return np.sum(R * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_an_array_a_function_value_returned_new_is_updated_in_place():
    # GradBench's `R *= s` on what a nested function returned (was refused: a function value's result was
    # taken for one it may share)
    assert_grad_matches_fd(scales_a_returned_array, (0.3, 2.0))


def rule_output_row_updated(x):
    rows = [np.tanh(np.array([x[0], x[1]]))]  # tanh's rule reads its result: as it was before the write
    rows[0][1] -= 0.5
    d = {"a": np.sqrt(np.array([x[0], x[1]]))}
    d["a"][0] += 3.0
    return np.sum(rows[0] * rows[0]) + np.sum(d["a"] ** 3)


def _doubled(t):
    return t * 2.0


def rows_of_a_helpers_result(x):
    s = _doubled(x[0])  # its kind is known only after the helper's: the rows' kind in a later round
    rows = [np.ones(2) * s for _ in range(3)]
    rows[1][1] = x[1]
    return np.sum(rows[1] * rows[0])


@pytest.mark.parametrize("fn", [rule_output_row_updated, rows_of_a_helpers_result])
def test_an_element_of_an_element_written_after_a_rule_that_reads_it(fn):
    """A write into a list's element changes an array: the rules that read arrays rewind it (tanh's read its
    result after the write: a wrong gradient); an element of a kind not known in an early round was an error."""
    x = np.array([0.7, 1.3, -0.4])
    assert_close(chad.value_and_grad(fn)(x.copy())[0], fn(x.copy()))
    assert_grad_matches_fd(fn, (x,))


def _gathered_sum(a, idx):
    return np.sum(a[idx] ** 2)


def positions_changed_after_a_call_read_them(a):
    idx = [0, 1]
    s = _gathered_sum(a, idx)  # its one-hot keeps the positions as they were, not the list
    idx[0] = 2
    return s + a[idx[0]]


def test_positions_changed_in_place_after_a_lazy_one_hot_kept_them():
    """The backward pass rewinds the list of positions for the helper's rule, but the one-hot it made was added up
    after the writes were made again, reading the changed list: a silent wrong gradient."""
    a = np.array([1.0, 2.0, 3.0])
    assert_close(chad.grad(positions_changed_after_a_call_read_them)(a), np.array([2.0, 4.0, 1.0]))
