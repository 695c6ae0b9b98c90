"""The Scatter, the O(1) one-hot of an array's element (Section 7): made by index_ct, nested, added as a
monoid, densified once."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

from chadpy.runtime.array_cotangents import Scatter, dense, frozen, index_ct
from chadpy.runtime.cotangents import Zero, add
from tests.support.cotangents import check_vjp, random_ct

# ====================================================================== index_ct and densify


INDEX_CASES = [
    ((5,), 2),
    ((5,), -1),
    ((5,), np.int64(3)),
    ((5,), slice(1, 4)),
    ((5,), slice(None, None, -2)),
    ((5,), np.array([0, 2, 2, 4, 0, 0])),  # duplicates accumulate
    ((5,), [1, 1, -1]),
    ((5,), np.array([True, False, True, True, False])),
    ((5,), Ellipsis),
    ((5,), None),
    ((3, 4), 1),
    ((3, 4), -2),
    ((3, 4), (1, 2)),
    ((3, 4), (-1, -4)),
    ((3, 4), (slice(None), 2)),
    ((3, 4), (np.array([0, 0, 2]), slice(1, 3))),
    ((3, 4), (slice(None), np.array([3, 3, 0]))),
    ((3, 4), (np.array([0, 0, 2]), np.array([1, 1, 3]))),
    ((3, 4), np.array([[0, 1], [1, 1]])),
    ((3, 4), np.array([[True, False, True, False], [False, False, True, True], [True] * 4])),
    ((2, 3, 4), 1),
    ((2, 3, 4), (1, -1)),
    ((2, 3, 4), (0, 2, 3)),
    ((2, 3, 4), (Ellipsis, 1)),
    ((2, 3, 4), (np.array([0, 1, 1]), slice(None), np.array([2, 2, 0]))),  # separated advanced indices
    ((2, 3, 4), (1, slice(0, 2), np.array([3, 3]))),
    ((2, 3, 4), (None, 1, slice(None), 2)),
]


@pytest.mark.parametrize("shape, index", INDEX_CASES, ids=[f"{s}-{i!r}"[:40] for s, i in INDEX_CASES])
def test_index_ct_matches_finite_differences(rng, shape, index):
    x = rng.standard_normal(shape)
    f = lambda v: v[index]
    d = random_ct(rng, f(x))
    ct = index_ct(d, x, index)
    assert isinstance(ct, Scatter) and ct.shape == x.shape and ct.base is None and ct.count() == 1
    check_vjp(f, x, ct, d)


def test_index_ct_of_zero_is_zero(rng):
    assert index_ct(Zero, rng.standard_normal(3), 1) is Zero


def test_index_ct_dtype():
    assert index_ct(1.0, np.zeros(3, np.int64), 0).dtype == np.float64
    assert index_ct(1.0, np.zeros(3, np.float32), 0).dtype == np.float32
    assert index_ct(1.0, np.zeros(3, bool), 0).dtype == np.float64


def test_densify_duplicate_int_items_accumulate():
    x = np.zeros(4)
    s = Zero
    for i, v in [(1, 1.0), (1, 2.0), (-1, 4.0), (3, 8.0), (0, 16.0)]:
        s = add(s, index_ct(v, x, i))
    np.testing.assert_array_equal(s.densify(), [16.0, 3.0, 0.0, 12.0])


def test_densify_mixes_plain_and_numpy_ints_and_floats():
    x = np.zeros(4)
    s = Zero
    for i, v in [(1, 1.0), (np.int64(1), 2.0), (2, np.float64(4.0)), (np.int32(-1), np.float32(8.0)), (0, 0.5)]:
        s = add(s, index_ct(v, x, i))
    s = add(s, index_ct(np.array(16.0), x, 3))  # a 0-d array value
    np.testing.assert_array_equal(s.densify(), [0.5, 3.0, 4.0, 24.0])


def test_densify_mixes_groups_of_every_index_kind(rng):
    x = rng.standard_normal((3, 4))
    contributions = [
        (1, rng.standard_normal(4)),  # row: group of length 1
        (-1, rng.standard_normal(4)),
        ((0, 2), 1.5),  # element: group of length 2
        ((0, 2), 2.5),
        ((2, -1), np.float64(-1.0)),
        ((np.int32(1), np.int64(3)), 0.25),
        (1, 3.0),  # a scalar value for a row broadcasts
        (slice(None), rng.standard_normal(4)),  # others, one by one
        ((np.array([0, 0]), 1), np.array([1.0, 2.0])),
        (np.array([True, False, True]), rng.standard_normal((2, 4))),
        ((0, 1), Zero),  # skipped
    ]
    expected = np.zeros(x.shape)
    s = Zero
    for index, value in contributions:
        if value is not Zero:
            np.add.at(expected, index, value)
        s = add(s, index_ct(value, x, index))
    assert s.count() == len(contributions) - 1  # index_ct(Zero) is Zero
    np.testing.assert_allclose(s.densify(), expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_densify_of_many_one_hots_matches_add_at(rng, dtype):
    # a loop's one-hots are summed at NumPy speed (one np.add.at); slices and steps stay exact
    x = np.zeros(50, dtype)
    indices = rng.integers(-50, 50, 400)
    values = rng.standard_normal(400)
    s = Zero
    for i, v in zip(indices, values):
        s = add(s, index_ct(float(v), x, int(i)))
    expected = np.zeros(50)
    np.add.at(expected, indices, values)
    got = s.densify()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)
    for index in (slice(3, 40, 7), slice(None, None, -2)):
        s = add(s, index_ct(np.ones(x[index].shape), x, index))
        expected[index] += 1.0
    np.testing.assert_allclose(s.densify(), expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 2)])
def test_densify_of_many_element_one_hots_matches_add_at(rng, shape):
    # `A[i, j]` in a loop: whole elements of an n-d array, also summed by one np.add.at
    x = np.zeros(shape)
    indices = [tuple(int(rng.integers(-n, n)) for n in shape) for _ in range(300)]
    values = rng.standard_normal(300)
    s = Zero
    for index, v in zip(indices, values):
        s = add(s, index_ct(np.float64(v), x, index))
    expected = np.zeros(shape)
    for index, v in zip(indices, values):
        expected[index] += v
    np.testing.assert_allclose(s.densify(), expected, rtol=1e-12)


def test_densify_of_element_one_hots_with_a_row_or_a_bool_among_them(rng):
    # regressions: an int item (a row) among element items once made the fast path raise; a bool in a
    # tuple is a mask to NumPy (`x[True, 1]` is x[1] with an axis added) though np.array makes it an int
    x = np.zeros((3, 4))
    row, masked = rng.standard_normal(4), rng.standard_normal((1, 4))
    contributions = [((0, 1), 2.0), (2, row), ((1, 3), 0.5), ((True, 1), masked), ((0, 1), 1.0)]
    for n in range(2, len(contributions) + 1):
        s = Zero
        expected = np.zeros(x.shape)
        for index, value in contributions[:n]:
            s = add(s, index_ct(value, x, index))
            np.add.at(expected, index, value)
        np.testing.assert_allclose(s.densify(), expected)


def test_densify_of_element_one_hots_with_a_shorter_tuple_among_them():
    # a one-tuple index of a matrix is a row: beside a three-tuple, the ints come to two per item in
    # all, which must not make them read as two elements
    x = np.zeros((3, 4))
    s = add(index_ct(1.5, x, (0, 1, 2)), index_ct(0.25, x, (2,)))
    with pytest.raises(IndexError):  # three indices for a matrix, as NumPy says
        s.densify()
    s = add(index_ct(0.25, x, (2,)), index_ct(0.5, x, (1, 3)))
    expected = np.zeros(x.shape)
    expected[2] += 0.25
    expected[1, 3] += 0.5
    np.testing.assert_allclose(s.densify(), expected)


def test_densify_of_an_index_beyond_int64_raises_rather_than_wraps():
    x = np.zeros((3, 4))
    s = index_ct(1.0, x, (np.uint64(2**64 - 1), 0))  # would wrap to -1, the last row
    s = add(s, index_ct(1.0, x, (0, 0)))
    with pytest.raises((IndexError, OverflowError)):
        s.densify()


def test_densify_returns_a_fresh_array_each_time(rng):
    x = rng.standard_normal(3)
    s = index_ct(2.0, x, 1)
    a, b = s.densify(), s.densify()
    assert a is not b
    a[0] = 100.0
    np.testing.assert_array_equal(b, [0.0, 2.0, 0.0])


# ====================================================================== nested Scatters


def _count_densify(monkeypatch) -> list[int]:
    calls = [0]
    original = Scatter.densify

    def counting(self):
        calls[0] += 1
        return original(self)

    monkeypatch.setattr(Scatter, "densify", counting)
    return calls


def test_nested_scatter_composes_int_indices(rng, monkeypatch):
    # d of A[i][j][k] for several (i, j, k), with duplicates and negative indices
    A = rng.standard_normal((3, 4, 5))
    triples = [(0, 1, 2), (2, -1, 0), (0, 1, 2), (-3, 3, 4), (1, 0, -1)]
    expected = np.zeros(A.shape)
    total = Zero
    for i, j, k in triples:
        v = float(rng.standard_normal())
        expected[i, j, k] += v
        inner = index_ct(v, A[i][j], k)
        mid = index_ct(inner, A[i], j)
        total = add(total, index_ct(mid, A, i))
    calls = _count_densify(monkeypatch)
    np.testing.assert_allclose(total.densify(), expected)
    assert calls[0] == 1  # composed: no child was densified


def test_nested_scatter_with_tuple_parent_and_child(rng, monkeypatch):
    A = rng.standard_normal((2, 3, 4, 5))
    child = index_ct(1.5, A[1, 2], (3, -1))  # A[1, 2][3, -1]
    child = add(child, index_ct(2.0, A[1, 2], (3, 4)))
    child = add(child, index_ct(rng.standard_normal(5), A[1, 2], 0))  # a row of A[1, 2]
    ct = index_ct(child, A, (1, 2))
    expected = np.zeros(A.shape)
    expected[1, 2, 3, 4] += 3.5
    expected[1, 2, 0] += child.items[2][1]
    calls = _count_densify(monkeypatch)
    np.testing.assert_allclose(ct.densify(), expected)
    assert calls[0] == 1


def test_nested_scatter_child_base_and_non_composable_items(rng):
    A = rng.standard_normal((3, 4, 5))
    row_d = rng.standard_normal((4, 5))
    idx = np.array([1, 1, 4])
    fancy_d = rng.standard_normal((4, 3))
    child = index_ct(7.0, A[2], (1, 1))
    child = add(child, index_ct(fancy_d, A[2], (slice(None), idx)))  # A[2][:, idx]: does not compose
    child = add(child, row_d)  # a dense part: goes to the child's base
    assert child.base is row_d
    ct = add(index_ct(child, A, 2), index_ct(1.0, A, (0, 0, 0)))
    expected = np.zeros(A.shape)
    expected[2] += row_d
    expected[2, 1, 1] += 7.0
    np.add.at(expected[2], (slice(None), idx), fancy_d)
    expected[0, 0, 0] += 1.0
    np.testing.assert_allclose(ct.densify(), expected)


def test_nested_scatter_child_base_with_composable_items(rng):
    A = rng.standard_normal((3, 4))
    row_d = rng.standard_normal(4)
    child = index_ct(5.0, A[1], -1) + row_d  # a one-hot plus a dense part
    ct = index_ct(child, A, 1)
    expected = np.zeros(A.shape)
    expected[1] = row_d
    expected[1, 3] += 5.0
    np.testing.assert_allclose(ct.densify(), expected)


def test_nested_scatter_under_a_slice_parent_is_densified(rng):
    A = rng.standard_normal((4, 5))
    child = index_ct(3.0, A[1:3], (0, 4))  # A[1:3][0, 4] is A[1, 4]
    ct = index_ct(child, A, slice(1, 3))
    expected = np.zeros(A.shape)
    expected[1, 4] = 3.0
    np.testing.assert_allclose(ct.densify(), expected)


def test_nested_scatter_separated_advanced_indices_match_numpy(rng):
    # A[0][:, idx] is not A[0, :, idx] (numpy moves the broadcast axis to the front): must not compose
    A = rng.standard_normal((2, 3, 4))
    idx = np.array([2, 2, 0])
    f = lambda v: v[0][:, idx]
    d = random_ct(rng, f(A))
    ct = index_ct(index_ct(d, A[0], (slice(None), idx)), A, 0)
    check_vjp(f, A, ct, d)


def test_nested_zero_child_is_skipped(rng):
    A = rng.standard_normal((2, 3))
    ct = index_ct(Scatter((3,)), A, 1)  # an empty child Scatter
    ct = add(ct, index_ct(2.0, A, (0, 0)))
    np.testing.assert_array_equal(ct.densify(), [[2.0, 0, 0], [0, 0, 0]])


# ====================================================================== the Scatter monoid


def _contributions(rng_seed: int, x: np.ndarray) -> list:
    """Fresh cotangents of x of every representation (Scatters are consumed by addition)."""
    r = np.random.default_rng(rng_seed)
    s_with_base = index_ct(2.0, x, (1, 1))
    s_with_base = s_with_base + r.standard_normal(x.shape)
    return [
        index_ct(1.0, x, (0, 1)),
        index_ct(r.standard_normal(4), x, 2),
        index_ct(r.standard_normal((2, 4)), x, np.array([0, 0])),
        r.standard_normal(x.shape),
        np.broadcast_to(r.standard_normal(4), x.shape),  # a read-only view
        Zero,
        s_with_base,
        index_ct(-3.0, x, (-1, -1)),
    ]


def _total(values) -> np.ndarray:
    t = Zero
    for v in values:
        t = add(t, v)
    return dense(t, np.zeros((3, 4)))


def test_scatter_sum_is_order_independent():
    x = np.zeros((3, 4))
    reference = _total(_contributions(1, x))
    n = len(_contributions(1, x))
    for perm in itertools.islice(itertools.permutations(range(n)), 0, None, 997):
        values = _contributions(1, x)
        np.testing.assert_allclose(_total([values[i] for i in perm]), reference)
    # and with `+` directly, right to left
    values = _contributions(1, x)
    t = values[-1]
    for v in reversed(values[:-1]):
        t = v + t if v is not Zero else t
    np.testing.assert_allclose(dense(t, x), reference)


def test_scatter_sum_value(rng):
    x = np.zeros((3, 4))
    values = _contributions(2, x)
    expected = sum(dense(v, x) if v is not Zero else 0.0 for v in _contributions(2, x))
    np.testing.assert_allclose(_total(values), expected)


def test_zero_is_the_identity(rng):
    s = index_ct(1.0, np.zeros(3), 0)
    assert s + Zero is s
    assert Zero + s is s  # via Scatter.__radd__
    assert s + None is s
    assert add(Zero, s) is s
    assert add(s, Zero) is s
    np.testing.assert_array_equal(s.densify(), [1.0, 0.0, 0.0])


def test_scatter_plus_scatter_extends_the_longer_in_place():
    x = np.zeros(5)
    big = index_ct(1.0, x, 0) + index_ct(2.0, x, 1) + index_ct(3.0, x, 2)
    small = index_ct(4.0, x, 0)
    assert small + big is big
    assert big.count() == 4
    other = index_ct(5.0, x, 4)
    assert big + other is big
    np.testing.assert_array_equal(big.densify(), [5.0, 2.0, 3.0, 0.0, 5.0])


def test_scatter_plus_scatter_keeps_every_item_of_both():
    x = np.zeros(6)
    a = index_ct(1.0, x, 0) + index_ct(2.0, x, 1) + index_ct(4.0, x, 1)
    b = index_ct(8.0, x, 5) + index_ct(16.0, x, 4) + index_ct(32.0, x, 0) + index_ct(64.0, x, 3)
    total = a + b
    assert total.count() == 7
    np.testing.assert_array_equal(total.densify(), [33.0, 6.0, 0.0, 64.0, 16.0, 8.0])


def test_adding_into_a_scatter_never_writes_a_dense_argument(rng):
    x = np.zeros((3, 4))
    a = rng.standard_normal(x.shape)
    b = rng.standard_normal(x.shape)
    a0, b0 = a.copy(), b.copy()
    a.setflags(write=False)  # any in-place write would raise
    b.setflags(write=False)
    s = index_ct(1.0, x, (0, 0))
    t = a + s  # ndarray + Scatter defers to Scatter.__radd__
    assert t is s and s.base is a
    t = t + b  # base + other: a new array
    t = t + 2.0  # a scalar goes into the base too
    row = rng.standard_normal(4)
    t = add(index_ct(row, x, 1), t)
    t = t + (index_ct(3.0, x, (2, 3)) + b)  # a Scatter with a base
    out = t.densify()
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
    expected = a0 + 2 * b0 + 2.0
    expected[0, 0] += 1.0
    expected[1] += row
    expected[2, 3] += 3.0
    np.testing.assert_allclose(out, expected)
    out[...] = 0.0  # the result is fresh and writable
    np.testing.assert_array_equal(a, a0)


def test_numpy_scalar_plus_scatter_defers():
    s = index_ct(1.0, np.zeros(2), 1)
    t = np.float64(2.0) + s
    assert t is s
    np.testing.assert_array_equal(s.densify(), [2.0, 3.0])


def test_one_hots_never_allocate_the_array_before_densify():
    n = 1_000_000
    x = np.zeros(n)
    k = 300
    tracemalloc.start()
    try:
        s = Zero
        for i in range(k):
            s = add(s, index_ct(1.0, x, (i * 7919) % n))
        inner = index_ct(index_ct(2.0, x[:0], ...), x, slice(0, 0))  # a nested one, also O(1)
        s = add(inner, s)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < x.nbytes // 20, peak
    assert isinstance(s, Scatter) and s.base is None and s.count() == k + 1
    out = s.densify()
    assert out.sum() == k
    assert out[(5 * 7919) % n] == 1.0


def test_an_index_of_ints_is_kept_as_it_is_and_a_list_in_one_is_copied():
    # a tuple of ints cannot change: a recursion's one-hots (`A[i, j]` at every level) keep it without a copy
    ints = (1, 2)
    assert frozen(ints) is ints
    rows = [0, 1]
    kept = frozen((rows, 1))  # a list inside may change before the backward pass adds the one-hot
    rows[0] = 5
    assert kept[0].tolist() == [0, 1] and kept[1] == 1
