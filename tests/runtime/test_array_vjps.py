"""The run-time halves of the array rules (`chadpy.runtime.numpy`, `reductions`, `linalg`, `shape`), and
the conversions between cotangent representations (`dense`, `unbroadcast`, `to_user_array`).

Every rule `g = rule(d, ...)` is checked against J^T d computed from central differences of the
primal NumPy function, one input coordinate at a time (so each element is compared, not only a
dot product), on seeded random inputs; non-differentiable points (ties, zeros of a norm) are
checked against closed forms.
"""

from __future__ import annotations

import numpy as np
import pytest

from chadpy.api.conversions import to_user_array
from chadpy.runtime import array_cotangents, arrays
from chadpy.runtime import cotangents as runtime
from chadpy.runtime import writes as buffers
from chadpy.runtime.array_cotangents import (
    Scatter,
    add_columns,
    add_index,
    dense,
    index_ct,
    ndarray_of,
    unbroadcast,
)
from chadpy.runtime.cotangents import Zero, add
from chadpy.runtime.numpy import (
    clip_ct,
    dot_ct_a,
    dot_ct_b,
    matmul_ct_a,
    matmul_ct_b,
    maximum_ct_a,
    maximum_ct_b,
    minimum_ct_a,
    minimum_ct_b,
    outer_ct_a,
    outer_ct_b,
    where_ct_a,
    where_ct_b,
)
from chadpy.runtime.reductions import extremum_ct, mean_ct, norm_ct, prod_ct, sum_ct
from chadpy.runtime.shape import concatenate_ct, reshape_ct, stack_ct, transpose_ct
from tests.support.cotangents import check_vjp, random_ct


def test_check_vjp_can_fail(rng):
    # the checker itself must reject a wrong cotangent
    x = rng.standard_normal(4)
    d = rng.standard_normal(4)
    with pytest.raises(AssertionError):
        check_vjp(lambda v: 2 * v, x, d, d)


# ====================================================================== dense, unbroadcast, to_user_array


def test_dense(rng):
    like = rng.standard_normal((2, 3))
    z = dense(Zero, like)
    assert z.shape == (2, 3) and not z.any()
    d = rng.standard_normal((2, 3))
    assert dense(d, like) is d
    np.testing.assert_array_equal(dense(2.0, like), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(dense(d[0], like), np.broadcast_to(d[0], (2, 3)))
    np.testing.assert_array_equal(dense(index_ct(1.0, like, (1, 2)), like), [[0, 0, 0], [0, 0, 1.0]])
    assert dense(Zero, np.zeros(3, np.int32)).dtype == np.float64


UNBROADCAST_CASES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (3, 1)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 3, 1))]


@pytest.mark.parametrize("out_shape, x_shape", UNBROADCAST_CASES)
def test_unbroadcast_matches_finite_differences(rng, out_shape, x_shape):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(out_shape)
    f = lambda v: v * w
    d = rng.standard_normal(out_shape)
    ct = unbroadcast(d * w, x)
    assert ct.shape == x.shape
    check_vjp(f, x, ct, d)


def test_unbroadcast_special_cases(rng):
    d = rng.standard_normal((3, 4))
    x = rng.standard_normal((3, 4))
    assert unbroadcast(d, x) is d  # no copy when shapes match
    assert unbroadcast(Zero, x) is Zero
    for scalar in (2.0, 3, np.float64(1.5), np.float32(1.5)):
        g = unbroadcast(d, scalar)
        assert type(g) is float
        assert g == pytest.approx(d.sum())
    g = unbroadcast(index_ct(2.0, x, (1, 1)), x)
    np.testing.assert_array_equal(g, dense(index_ct(2.0, x, (1, 1)), x))
    np.testing.assert_array_equal(unbroadcast(2.0, x), np.full((3, 4), 2.0))
    assert unbroadcast(2.5, 1.0) == 2.5


def test_to_user_array(rng):
    x = rng.standard_normal((2, 3))
    for ct in (Zero, rng.standard_normal((2, 3)), np.broadcast_to(1.0, (2, 3)), index_ct(1.0, x, 0), 2.0):
        g = to_user_array(ct, x)
        assert isinstance(g, np.ndarray) and g.shape == x.shape and g.dtype == np.float64
        assert g.flags.writeable and g is not ct
        if isinstance(ct, np.ndarray):
            assert not np.shares_memory(g, ct)  # a dense cotangent may be shared: always copy
        np.testing.assert_array_equal(g, dense(ct, x))
    assert to_user_array(Zero, np.zeros(3, np.int64)).dtype == np.float64
    assert to_user_array(np.ones(3), np.zeros(3, np.float32)).dtype == np.float32
    s = np.float64(2.0)
    assert to_user_array(Zero, s) == 0.0 and type(to_user_array(Zero, s)) is float
    assert to_user_array(np.float64(1.5), s) == 1.5 and type(to_user_array(np.float64(1.5), s)) is float


def test_to_user_array_copies_a_dense_cotangent_of_the_shape_without_broadcasting(rng, monkeypatch):
    # every array gradient ends here: np.broadcast_to's Python-level cost was a third of a small gradient's
    calls = []
    monkeypatch.setattr(np, "broadcast_to", lambda *a, **k: calls.append(a))
    x, ct = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    g = to_user_array(ct, x)
    np.testing.assert_array_equal(g, ct)
    assert g is not ct and g.flags.writeable and not np.shares_memory(g, ct)
    assert to_user_array(np.ones(3), np.zeros(3, np.float32)).dtype == np.float32
    assert calls == []


def test_to_user_array_adds_into_a_base_nobody_else_holds(rng):
    # the last use of a Scatter whose base only it refers to: the items go into that base, no copy
    x = rng.standard_normal(5)
    ct = Scatter(x.shape)
    ct.base = rng.standard_normal(5)
    want = ct.base.copy()
    np.add.at(want, [1, 1, 3], [2.0, 0.5, -1.0])
    for i, v in [(1, 2.0), (1, 0.5), (3, -1.0)]:
        add_index(ct, v, x, i)
    base_id = id(ct.base)
    g = to_user_array(ct, x)
    np.testing.assert_array_equal(g, want)
    assert id(g) == base_id


@pytest.mark.parametrize("holder", ["name", "view", "view of another array", "read-only"])
def test_to_user_array_copies_a_base_another_value_holds(rng, holder):
    x = rng.standard_normal((2, 3))
    other = rng.standard_normal((2, 3))
    ct = Scatter(x.shape)
    if holder == "name":
        kept = ct.base = other.copy()
    elif holder == "view":
        ct.base = other.copy()
        kept = ct.base[0]
    elif holder == "view of another array":
        ct.base = np.concatenate([other, other])[:2]
        kept = ct.base.base
    else:
        ct.base = np.broadcast_to(1.0, (2, 3))
        kept = ct.base
    before = np.array(kept)
    add_index(ct, 5.0, x, (1, 2))
    g = to_user_array(ct, x)
    want = np.array(np.broadcast_to(ct.base, x.shape))
    want[1, 2] += 5.0
    np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(kept, before)  # what the other value sees is unchanged
    assert not np.shares_memory(g, kept)


# ====================================================================== reductions


def _axis_cases():
    cases = []
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        axes = [None, 0, -1]
        if len(shape) >= 2:
            axes += [(0, -1), 1]
        if len(shape) == 3:
            axes += [(0, 2), (-2,), (0, 1, 2)]
        for axis in axes:
            for keepdims in (False, True):
                cases.append((shape, axis, keepdims))
    return cases


AXIS_CASES = _axis_cases()


@pytest.mark.parametrize("shape, axis, keepdims", AXIS_CASES)
def test_sum_and_mean(rng, shape, axis, keepdims):
    x = rng.standard_normal(shape)
    for fn, rule in ((np.sum, sum_ct), (np.mean, mean_ct)):
        f = lambda v, fn=fn: fn(v, axis=axis, keepdims=keepdims)
        d = random_ct(rng, f(x))
        check_vjp(f, x, rule(d, x, axis, keepdims), d)
        assert rule(Zero, x, axis, keepdims) is Zero


@pytest.mark.parametrize("shape, axis, keepdims", AXIS_CASES)
def test_prod(rng, shape, axis, keepdims):
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    f = lambda v: np.prod(v, axis=axis, keepdims=keepdims)
    y = f(x)
    d = random_ct(rng, y)
    check_vjp(f, x, prod_ct(d, y, x, axis, keepdims), d)


@pytest.mark.parametrize("shape, axis, keepdims", AXIS_CASES)
def test_max_and_min(rng, shape, axis, keepdims):
    x = rng.standard_normal(shape)  # continuous: no ties
    for fn in (np.max, np.min):
        f = lambda v, fn=fn: fn(v, axis=axis, keepdims=keepdims)
        y = f(x)
        d = random_ct(rng, y)
        check_vjp(f, x, extremum_ct(d, y, x, axis, keepdims), d)


@pytest.mark.parametrize(
    "shape, axis, keepdims", [c for c in AXIS_CASES if not isinstance(c[1], tuple) or len(c[1]) <= 2]
)
def test_norm(rng, shape, axis, keepdims):  # np.linalg.norm takes at most two axes
    x = rng.standard_normal(shape)
    f = lambda v: np.linalg.norm(v, axis=axis, keepdims=keepdims)
    y = f(x)
    d = random_ct(rng, y)
    check_vjp(f, x, norm_ct(d, y, x, axis, keepdims), d)


def test_reductions_with_python_float_d_and_scatter_d(rng):
    x = rng.standard_normal((3, 4))
    np.testing.assert_array_equal(sum_ct(2.0, x), np.full((3, 4), 2.0))
    np.testing.assert_allclose(mean_ct(2.0, x), np.full((3, 4), 2.0 / 12))
    y = x.sum(axis=0)
    d = index_ct(1.0, y, 2)  # the cotangent of y[2]
    expected = np.zeros((3, 4))
    expected[:, 2] = 1.0
    np.testing.assert_array_equal(sum_ct(d, x, axis=0), expected)


def test_prod_with_zeros():
    x = np.array([2.0, 0.0, 3.0, 5.0])
    np.testing.assert_array_equal(prod_ct(1.0, np.prod(x), x), [0.0, 30.0, 0.0, 0.0])
    x2 = np.array([2.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(prod_ct(1.0, np.prod(x2), x2), [0.0, 0.0, 0.0, 0.0])
    m = np.array([[1.0, 0.0, 4.0], [2.0, 3.0, 0.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]])
    d = np.array([1.0, 2.0, 3.0, 4.0])
    expected = np.array([[0.0, 4.0, 0.0], [0.0, 0.0, 12.0], [0.0, 0.0, 0.0], [24.0, 12.0, 8.0]])
    np.testing.assert_array_equal(prod_ct(d, m.prod(axis=1), m, axis=1), expected)
    f = lambda v: np.prod(v, axis=-1)
    check_vjp(f, m, prod_ct(d, f(m), m, axis=-1), d)  # prod is multilinear: differences are exact


def test_prod_of_int_array_and_single_element_axis():
    x = np.array([[2, 3], [4, 5]])
    np.testing.assert_array_equal(prod_ct(1.0, x.prod(), x), [[60.0, 40.0], [30.0, 24.0]])
    y = np.ones((3, 1))
    np.testing.assert_array_equal(prod_ct(np.arange(3.0), y.prod(axis=1), y, axis=1), [[0.0], [1.0], [2.0]])


def test_extremum_ties_split_equally():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    m = np.array([[0.0, 0.0, 1.0], [5.0, 2.0, 5.0]])
    # the whole array's extremum is a one-hot of the winners (a Scatter)
    np.testing.assert_allclose(ndarray_of(extremum_ct(6.0, x.max(), x)), [0.0, 2.0, 2.0, 0.0, 2.0])
    np.testing.assert_allclose(ndarray_of(extremum_ct(6.0, m.min(), m)), [[3.0, 3.0, 0.0], [0.0, 0.0, 0.0]])
    m = np.array([[1.0, 1.0, 0.0], [5.0, 2.0, 5.0]])
    d = np.array([2.0, 4.0])
    np.testing.assert_allclose(extremum_ct(d, m.max(axis=1), m, axis=1), [[1.0, 1.0, 0.0], [2.0, 0.0, 2.0]])
    np.testing.assert_allclose(
        extremum_ct(d[:, None], m.min(axis=-1, keepdims=True), m, axis=-1, keepdims=True),
        [[0.0, 0.0, 2.0], [0.0, 4.0, 0.0]],
    )
    # the total cotangent is preserved
    assert ndarray_of(extremum_ct(1.0, np.ones(7).max(), np.ones(7))).sum() == pytest.approx(1.0)


def test_a_single_winner_is_found_without_listing_the_winners(monkeypatch):
    # the usual case, one winner: its position from the first True of one comparison (no flatnonzero, no
    # unravel_index: half the cost of lse's backward pass at n = 1000)
    for name in ("flatnonzero", "unravel_index"):
        monkeypatch.setattr(np, name, lambda *a, **k: pytest.fail("listed the winners"))
    x, m = np.array([1.0, 4.0, 3.0]), np.array([[0.0, 7.0], [5.0, 2.0]])
    np.testing.assert_array_equal(ndarray_of(extremum_ct(2.0, x.max(), x)), [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(ndarray_of(extremum_ct(2.0, m.min(), m)), [[2.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(ndarray_of(extremum_ct(3.0, m.max(), m)), [[0.0, 3.0], [0.0, 0.0]])


def test_extremum_with_nan_goes_to_the_nan():
    x = np.array([1.0, np.nan, 3.0])
    np.testing.assert_array_equal(ndarray_of(extremum_ct(1.0, np.max(x), x)), [0.0, 1.0, 0.0])
    m = np.array([[1.0, np.nan], [np.nan, 3.0]])
    np.testing.assert_array_equal(ndarray_of(extremum_ct(1.0, np.min(m), m)), [[0.0, 0.5], [0.5, 0.0]])
    # along an axis: a row whose extremum is nan sends its cotangent to the nan; the other rows to their winner
    m = np.array([[1.0, np.nan, 0.5], [2.0, 3.0, 0.5]], dtype=np.float32)
    ct = extremum_ct(np.array([1.0, 2.0], np.float32), np.min(m, axis=1), m, axis=1)
    np.testing.assert_array_equal(ct, [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    assert ct.dtype == np.float32


def test_norm_at_zero_is_zero():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    g = norm_ct(np.array([1.0, 10.0]), np.linalg.norm(x, axis=1), x, axis=1)
    np.testing.assert_allclose(g, [[0.0, 0.0], [6.0, 8.0]])
    assert not np.any(norm_ct(1.0, 0.0, np.zeros(3)))


# ====================================================================== linear algebra

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)),
    ((1, 2, 3), (4, 3, 2)),
]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
def test_matmul(rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    d = random_ct(rng, a @ b)
    check_vjp(lambda v: v @ b, a, matmul_ct_a(d, a, b), d)
    check_vjp(lambda v: a @ v, b, matmul_ct_b(d, a, b), d)
    assert matmul_ct_a(Zero, a, b) is Zero and matmul_ct_b(Zero, a, b) is Zero


DOT_SHAPES = [
    ((), (3,)),
    ((2, 3), ()),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)),
    ((2, 3), (4, 3, 2)),
    ((2, 2, 3), (4, 3, 5)),
    ((2, 2, 3), (3,)),
]


@pytest.mark.parametrize("sa, sb", DOT_SHAPES)
def test_dot(rng, sa, sb):
    a = rng.standard_normal(sa) if sa else float(rng.standard_normal())
    b = rng.standard_normal(sb) if sb else float(rng.standard_normal())
    d = random_ct(rng, np.dot(a, b))
    check_vjp(lambda v: np.dot(v, b), a, dot_ct_a(d, a, b), d)
    check_vjp(lambda v: np.dot(a, v), b, dot_ct_b(d, a, b), d)


@pytest.mark.parametrize("sa, sb", [((3,), (4,)), ((2, 3), (4,)), ((3,), (2, 2)), ((), (3,))])
def test_outer(rng, sa, sb):
    a = rng.standard_normal(sa) if sa else float(rng.standard_normal())
    b = rng.standard_normal(sb)
    d = rng.standard_normal(np.outer(a, b).shape)
    check_vjp(lambda v: np.outer(v, b), a, outer_ct_a(d, a, b), d)
    check_vjp(lambda v: np.outer(a, v), b, outer_ct_b(d, a, b), d)


# ====================================================================== shape operations


@pytest.mark.parametrize(
    "shape, axes", [((3, 4), None), ((2, 3, 4), None), ((2, 3, 4), (1, 0, 2)), ((2, 3, 4), (-1, 0, 1))]
)
def test_transpose(rng, shape, axes):
    x = rng.standard_normal(shape)
    f = lambda v: np.transpose(v, axes)
    d = rng.standard_normal(f(x).shape)
    check_vjp(f, x, transpose_ct(d, x, axes), d)


@pytest.mark.parametrize("shape, new", [((3, 4), (12,)), ((2, 3, 4), (4, -1)), ((6,), (1, 2, 3))])
def test_reshape(rng, shape, new):
    x = rng.standard_normal(shape)
    f = lambda v: np.reshape(v, new)
    d = rng.standard_normal(f(x).shape)
    check_vjp(f, x, reshape_ct(d, x), d)
    assert reshape_ct(Zero, x) is Zero


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concatenate(rng, axis):
    xs = [rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))]
    if axis == 1 or axis == -1:
        xs[1] = rng.standard_normal((2, 1))
    elif axis == 0:
        xs[2] = rng.standard_normal((4, 3))
    d = rng.standard_normal(np.concatenate(xs, axis=axis).shape)
    ct = concatenate_ct(d, xs, axis)
    assert set(ct) == {0, 1, 2}
    for i in range(3):
        f = lambda v, i=i: np.concatenate(xs[:i] + [v] + xs[i + 1 :], axis=axis)
        check_vjp(f, xs[i], ct[i], d)
    assert concatenate_ct(Zero, xs, axis) is Zero


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_stack(rng, axis):
    xs = (rng.standard_normal((2, 3)), rng.standard_normal((2, 3)))
    d = rng.standard_normal(np.stack(xs, axis=axis).shape)
    ct = stack_ct(d, xs, axis)
    for i in range(2):
        f = lambda v, i=i: np.stack(tuple(v if j == i else xs[j] for j in range(2)), axis=axis)
        check_vjp(f, xs[i], ct[i], d)
    assert stack_ct(Zero, xs, axis) is Zero


def test_stack_of_scalars_gives_floats():
    ct = stack_ct(np.array([1.0, 2.0, 3.0]), [1.0, np.float64(2.0), 3.0])
    assert ct == {0: 1.0, 1: 2.0, 2: 3.0}
    assert all(type(v) is float for v in ct.values())


# ====================================================================== elementwise selections


@pytest.mark.parametrize("sa, sb", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((3, 4), ())])
def test_maximum_and_minimum(rng, sa, sb):
    a = rng.standard_normal(sa)
    b = rng.standard_normal(sb) if sb else float(rng.standard_normal())
    for fn, rule_a, rule_b in ((np.maximum, maximum_ct_a, maximum_ct_b), (np.minimum, minimum_ct_a, minimum_ct_b)):
        d = rng.standard_normal(fn(a, b).shape)
        check_vjp(lambda v, fn=fn: fn(v, b), a, rule_a(d, a, b), d)
        check_vjp(lambda v, fn=fn: fn(a, v), b, rule_b(d, a, b), d)
        assert rule_a(Zero, a, b) is Zero


def test_maximum_and_minimum_ties_split_equally():
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, 5.0, 0.0])
    d = np.array([4.0, 4.0, 4.0])
    np.testing.assert_array_equal(maximum_ct_a(d, a, b), [2.0, 0.0, 4.0])
    np.testing.assert_array_equal(maximum_ct_b(d, a, b), [2.0, 4.0, 0.0])
    np.testing.assert_array_equal(minimum_ct_a(d, a, b), [2.0, 4.0, 0.0])
    np.testing.assert_array_equal(minimum_ct_b(d, a, b), [2.0, 0.0, 4.0])
    # a scalar operand collects the sum, ties included
    assert maximum_ct_b(d, a, 2.0) == 4.0 + 2.0  # b wins over a[0], ties with a[1]
    assert maximum_ct_b(d, a, 2.5) == 4.0 + 4.0
    assert type(maximum_ct_b(d, a, 2.5)) is float


@pytest.mark.parametrize("lo, hi", [(-0.5, 0.5), (None, 0.3), (-0.3, None), (None, None), ("array", 1.0)])
def test_clip(rng, lo, hi):
    x = rng.standard_normal((3, 4))
    if isinstance(lo, str):
        lo = rng.uniform(-1.0, 0.0, (4,))
    f = lambda v: np.clip(v, lo, hi)
    d = rng.standard_normal((3, 4))
    check_vjp(f, x, clip_ct(d, x, lo, hi), d)


def test_clip_boundary_is_inside_and_broadcasts_to_x():
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(clip_ct(np.ones(4), x, 0.0, 1.0), [0.0, 1.0, 1.0, 0.0])
    g = clip_ct(np.ones((2, 4)), x, np.array([[0.0], [-5.0]]), 1.0)  # lo broadcasts the result up
    np.testing.assert_array_equal(g, [1.0, 2.0, 2.0, 0.0])
    assert clip_ct(Zero, x, 0.0, 1.0) is Zero


@pytest.mark.parametrize("scond, sa, sb", [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), ()), ((4,), (3, 1), (3, 4))])
def test_where(rng, scond, sa, sb):
    cond = rng.standard_normal(scond) > 0
    a = rng.standard_normal(sa) if sa else float(rng.standard_normal())
    b = rng.standard_normal(sb) if sb else float(rng.standard_normal())
    d = rng.standard_normal(np.where(cond, a, b).shape)
    check_vjp(lambda v: np.where(cond, v, b), a, where_ct_a(d, cond, a, b), d)
    check_vjp(lambda v: np.where(cond, a, v), b, where_ct_b(d, cond, a, b), d)
    assert where_ct_a(Zero, cond, a, b) is Zero and where_ct_b(Zero, cond, a, b) is Zero


@pytest.mark.parametrize("module", [arrays, array_cotangents])
def test_module_has_no_mutable_state(module):
    mutable = (list, dict, set, bytearray, np.ndarray)
    offenders = [name for name, v in vars(module).items() if not name.startswith("__") and isinstance(v, mutable)]
    assert offenders == []


def test_a_vectors_one_hots_in_columns_sum_like_items():
    """Float one-hots at int indices of a float64 vector go to the columns (`at`, `values`), the
    rest to the items; every way of reading the Scatter sees both."""
    x = np.zeros(6)
    s = Zero
    expected = np.zeros(6)
    for i, v in [(1, 0.5), (3, np.float64(2.0)), (-1, 1.25), (1, 4.0)]:
        s = add_index(s, v, x, i)
        expected[i] += v
    s = add_index(s, np.array([1.0, 2.0]), x, slice(0, 2))  # an item
    expected[0:2] += [1.0, 2.0]
    assert s.count() == 5 and len(s.columns[0]) == 4
    other = add_index(index_ct(8.0, x, 2), 16.0, x, 2)
    total = other + s  # the shorter one's columns join the longer one's
    expected[2] += 24.0
    np.testing.assert_array_equal(total.densify(), expected)
    np.testing.assert_array_equal(runtime.scaled(total, -2.0), -2.0 * expected)
    buffer = buffers.owned(total, x)
    buffer = add_index(buffer, 3.0, x, 5)
    buffer.fold()
    expected[5] += 3.0
    np.testing.assert_array_equal(buffer.base, expected)
    A = np.zeros((3, 4))
    nested = index_ct(add_index(index_ct(1.5, A[2], 1), 2.5, A[2], 3), A, 2)  # A[2][1], A[2][3]
    np.testing.assert_array_equal(nested.densify()[2], [0.0, 1.5, 0.0, 2.5])
    assert add_index(Zero, 1.0, np.zeros(3, np.float32), 0).columns is None  # float32: items, NumPy's casting


def test_a_matrixs_element_one_hots_in_columns_sum_like_items():
    """Float one-hots at (i, j) elements of a float64 matrix (a recursion's `A[i, cols[j]]`) go to the columns
    as they are, from add_index and add_columns alike; a row, a number at a row (a uniform cotangent), an index of
    NumPy ints or of the wrong length stay items. Every way of reading the Scatter sees both."""
    A = np.zeros((3, 4))
    expected = np.zeros((3, 4))
    s = Zero
    for index, v in [((0, 1), 0.5), ((2, -1), np.float64(2.0)), ((0, 1), 1.25)]:
        s = add_index(s, v, A, index)
        expected[index] += v
    assert s.columns is not None and s.items == []
    s = add_columns(s, A, [(1, 2), (0, 1), (-1, 0)], [4.0, 8.0, 16.0])
    for index, v in [((1, 2), 4.0), ((0, 1), 8.0), ((-1, 0), 16.0)]:
        expected[index] += v
    assert len(s.columns[0]) == 6 and s.items == []
    s = add_index(s, 3.0, A, 1)  # a number at every element of row 1
    s = add_index(s, np.ones(4), A, 2)  # a row
    s = add_index(s, 5.0, A, (np.int64(0), 3))
    expected[1] += 3.0
    expected[2] += 1.0
    expected[0, 3] += 5.0
    assert len(s.columns[0]) == 6 and len(s.items) == 3
    np.testing.assert_array_equal(s.densify(), expected)
    np.testing.assert_array_equal(runtime.scaled(s, -2.0), -2.0 * expected)
    other = add_columns(Zero, A, [(0, 0)], [7.0])
    total = other + s
    expected[0, 0] += 7.0
    np.testing.assert_array_equal(total.densify(), expected)
    total._spill()
    assert total.columns is None
    np.testing.assert_array_equal(total.densify(), expected)
    buffer = buffers.owned(add_index(Zero, 1.0, A, (1, 1)), A)
    buffer.fold()
    expected = np.zeros((3, 4))
    expected[1, 1] = 1.0
    np.testing.assert_array_equal(buffer.base, expected)
    assert add_columns(Zero, A, [(0,)], [1.0]).columns is None  # not one index per axis


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64"), ("float32", "float32")])
def test_a_sum_of_outer_products_densifies_to_the_sum(rng, dtypes):
    # Outers.densify stacks its terms in one product: the result must be the plain sum of outer
    # products, in the dtype NumPy gives that sum, across a fold into the base and with a dense base
    lefts = [rng.standard_normal(5).astype(dtypes[k % 2]) for k in range(array_cotangents.Outers.FOLD_AT + 7)]
    rights = [rng.standard_normal(3).astype(dtypes[(k + 1) % 2]) for k in range(len(lefts))]
    ct = array_cotangents.Outers(lefts[0], rights[0])
    for u, v in zip(lefts[1:], rights[1:]):
        ct = ct.append(u, v)
    extra = rng.standard_normal((5, 3))
    ct = ct + extra
    expected = sum(np.outer(u, v) for u, v in zip(lefts, rights)) + extra
    out = ct.densify()
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    one = array_cotangents.Outers(lefts[0], rights[0]).densify()
    assert one.dtype == np.outer(lefts[0], rights[0]).dtype
    np.testing.assert_allclose(one, np.outer(lefts[0], rights[0]), rtol=1e-6)


def test_densify_of_many_rows_at_repeated_and_negative_indices(rng):
    # a loop's `W[k]` of a matrix, step after step: rows added at int indices (negative ones too), beside
    # an element and a row that broadcasts, as a plain loop of `+=` adds them
    x = np.zeros((4, 6))
    s = Zero
    expected = np.zeros(x.shape)
    for k in range(40):
        index, value = int(rng.integers(-4, 4)), rng.standard_normal(6)
        if k == 7:
            index, value = (1, 2), 0.5  # an element
        if k == 9:
            value = np.float64(1.5) * np.ones(1)  # a row of one, broadcast along the row
        s = add(s, index_ct(value, x, index))
        expected[index] += value
    np.testing.assert_allclose(s.densify(), expected, rtol=1e-12)
