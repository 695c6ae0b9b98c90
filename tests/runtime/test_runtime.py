"""Unit tests of the run-time support (`chadpy.runtime`) and of `chadpy.vtypes`."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chadpy as chad
from chadpy.api.conversions import from_user, to_user
from chadpy.ir.types import BOOL, FLOAT, INT, NONE, REAL, STR, Arr, Dct, Lst, Tup, is_active, of_value
from chadpy.runtime import cotangents as runtime
from chadpy.runtime.cotangents import Zero, add, tuple_part
from chadpy.runtime.environments import EArr
from chadpy.runtime.pointwise import pow_base_ct, pow_exponent_ct
from chadpy.runtime.scalar import check
from tests.support.fd import central_diff, no_explain

# ====================================================================== Zero


def test_zero_is_falsy():
    assert not Zero
    assert bool(Zero) is False


def test_zero_repr():
    assert repr(Zero) == "Zero"
    assert str(Zero) == "Zero"


def test_zero_is_a_singleton():
    assert chad.Zero is Zero is runtime.Zero
    from chadpy.api import conversions as cotangents

    assert cotangents.Zero is Zero
    assert not hasattr(Zero, "__dict__")  # no per-instance state (__slots__ = ())


def test_zero_stays_the_singleton_when_copied():
    # generated code, `add` and `tuple_part` test `d is Zero`: copies must stay the one Zero
    assert copy.copy(Zero) is Zero
    assert copy.deepcopy(Zero) is Zero
    assert copy.deepcopy({0: Zero})[0] is Zero
    assert add(copy.copy(Zero), 1.5) == 1.5
    assert tuple_part(copy.deepcopy(Zero), 0, 0.0) == 0.0


# ====================================================================== add


def test_add_zero_is_identity_on_both_sides():
    d = {0: 1.0}
    assert add(Zero, d) is d
    assert add(d, Zero) is d
    assert add(Zero, 2.5) == 2.5
    assert add(2.5, Zero) == 2.5
    assert add(Zero, Zero) is Zero


def test_add_none_is_zero():
    assert add(None, 2.5) == 2.5
    assert add(2.5, None) == 2.5
    d = {1: 3.0}
    assert add(None, d) is d
    assert add(d, None) is d
    assert add(None, None) is None


def test_add_floats():
    assert add(1.5, 2.25) == 3.75
    assert add(-1.5, 1.5) == 0.0
    assert add(0.0, 4.0) == 4.0


def test_add_dicts_merge_with_overlap():
    a = {0: 1.0, 2: 5.0}
    b = {0: 2.0, 1: 3.0}
    assert add(a, b) == {0: 3.0, 1: 3.0, 2: 5.0}


def test_add_dicts_smaller_into_larger():
    small = {1: 1.0}
    large = {0: 2.0, 1: 3.0, 2: 4.0}
    assert add(small, large) == {0: 2.0, 1: 4.0, 2: 4.0}
    small = {1: 1.0}
    large = {0: 2.0, 1: 3.0, 2: 4.0}
    assert add(large, small) == {0: 2.0, 1: 4.0, 2: 4.0}


def test_add_dicts_disjoint():
    assert add({0: 1.0}, {1: 2.0}) == {0: 1.0, 1: 2.0}


def test_add_nested_dicts():
    a = {0: {1: 1.0}, 1: 2.0}
    b = {0: {0: 5.0, 1: 2.0}}
    assert add(a, b) == {0: {0: 5.0, 1: 3.0}, 1: 2.0}


def test_add_nested_with_zero_components():
    assert add({0: Zero, 1: 1.0}, {0: {2: 4.0}}) == {0: {2: 4.0}, 1: 1.0}
    assert add({0: {2: 4.0}}, {0: Zero}) == {0: {2: 4.0}}


@no_explain
@given(st.dictionaries(st.integers(0, 5), st.floats(-10, 10)), st.dictionaries(st.integers(0, 5), st.floats(-10, 10)))
def test_add_dicts_is_componentwise_sum(a, b):
    expected = {k: a.get(k, 0.0) + b.get(k, 0.0) for k in set(a) | set(b)}
    got = add(dict(a), dict(b))
    if not a and not b:
        assert got == {}
    else:
        assert got.keys() == expected.keys()
        for k in expected:
            assert got[k] == pytest.approx(expected[k])


# ====================================================================== tuple_part


def test_tuple_part_of_zero_is_the_given_zero():
    assert tuple_part(Zero, 0, 0.0) == 0.0
    assert tuple_part(Zero, 3, Zero) is Zero
    sentinel = object()
    assert tuple_part(Zero, 1, sentinel) is sentinel


def test_tuple_part_missing_key_is_zero():
    assert tuple_part({1: 2.0}, 0, 0.0) == 0.0
    assert tuple_part({1: 2.0}, 2, Zero) is Zero


def test_tuple_part_present_key():
    assert tuple_part({1: 2.0}, 1, 0.0) == 2.0
    inner = {0: 1.0}
    assert tuple_part({0: inner}, 0, Zero) is inner


# ====================================================================== EArr


def test_earr_starts_empty():
    acc = EArr(3)
    assert acc.slots == [None, None, None]


def test_earr_push_one_pop_sequence():
    acc = EArr(3)
    acc.push0(0, 0.0)
    acc.push0(1, Zero)
    assert acc.slots == [0.0, Zero, None]
    acc.one(0, 1.5)
    acc.one(0, 2.0)
    acc.one(1, {0: 1.0})
    acc.one(1, {0: 2.0, 1: 1.0})
    acc.one(0, -0.5)
    assert acc.slots[0] == 3.0
    assert acc.slots[1] == {0: 3.0, 1: 1.0}
    assert acc.pop(1) == {0: 3.0, 1: 1.0}
    assert acc.slots[1] is None
    assert acc.pop(0) == 3.0
    assert acc.slots == [None, None, None]


def test_earr_slot_reuse_after_pop():
    acc = EArr(1)
    acc.push0(0, 0.0)
    acc.one(0, 4.0)
    assert acc.pop(0) == 4.0
    acc.push0(0, 0.0)  # a new scope in the same slot starts from zero
    acc.one(0, 1.0)
    assert acc.pop(0) == 1.0
    assert acc.slots == [None]


def test_earr_pop_without_contributions_gives_the_zero():
    acc = EArr(2)
    acc.push0(1, 0.0)
    assert acc.pop(1) == 0.0
    acc.push0(1, Zero)
    assert acc.pop(1) is Zero
    assert acc.slots == [None, None]


# ====================================================================== pow rules


@pytest.mark.parametrize(
    ("d", "a", "b", "expected"),
    [
        (2.0, 3.0, 2.0, 12.0),
        (1.0, 2.0, 3.0, 12.0),
        (1.0, 4.0, 0.5, 0.25),
        (1.0, 2.0, -1.0, -0.25),
        (1.5, -2.0, 3, 18.0),
        (1.0, 0.0, 0.0, 0.0),  # b == 0: zero, without evaluating 0.0 ** -1
        (1.0, 5.0, 0, 0.0),
        (3.0, 0.0, 1.0, 3.0),
    ],
)
def test_pow_base_ct(d, a, b, expected):
    assert pow_base_ct(d, a, b) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("d", "a", "b"), [(1.0, 2.0, 3.0), (0.5, 0.3, -1.5), (2.0, 7.0, 0.25)])
def test_pow_exponent_ct_closed_form(d, a, b):
    y = a**b
    assert pow_exponent_ct(d, y, a) == pytest.approx(d * y * math.log(a), rel=1e-15)


def test_pow_exponent_ct_at_zero_base():
    assert pow_exponent_ct(1.0, 0.0, 0.0) == 0.0
    assert pow_exponent_ct(2.0, 1.0, 0.0) == 0.0


def test_pow_exponent_ct_negative_base_is_nan():
    assert math.isnan(pow_exponent_ct(1.0, -8.0, -2.0))
    assert math.isnan(pow_exponent_ct(1.0, 4.0, -2.0))


@no_explain
@given(st.floats(0.1, 5.0), st.floats(-3.0, 3.0))
def test_pow_rules_match_finite_differences(a, b):
    da, db = (central_diff(math.pow, (a, b), i) for i in (0, 1))
    assert pow_base_ct(1.0, a, b) == pytest.approx(da, rel=1e-5, abs=1e-6)
    assert pow_exponent_ct(1.0, a**b, a) == pytest.approx(db, rel=1e-5, abs=1e-6)


# ====================================================================== check


def test_check_passes():
    assert check(True) is None
    assert check(1.0, "never shown") is None


def test_check_raises_with_message():
    with pytest.raises(AssertionError) as info:
        check(False, "x must be positive")
    assert info.value.args == ("x must be positive",)
    with pytest.raises(AssertionError, match="zero"):
        check(0.0, "zero")


def test_check_raises_without_message():
    with pytest.raises(AssertionError) as info:
        check(False)
    assert info.value.args == ()


# ====================================================================== vtypes


def test_of_value_types():
    """Every value has a kind; only floats (and float arrays) of differentiated arguments are active."""
    assert of_value(1.0, True) == REAL
    assert of_value(1.0, False) == FLOAT
    assert of_value(np.float32(1.0), True) == REAL  # a NumPy scalar is a float
    assert of_value(3, True) == INT
    assert of_value(True, True) == BOOL
    assert of_value("s", True) == STR
    assert of_value(None, True) == NONE
    assert of_value((1.0, 2), True) == Tup((REAL, INT))
    assert of_value((1, 2), True) == Tup((INT, INT))
    assert of_value((1.0, (2.0, "a")), False) == Tup((FLOAT, Tup((FLOAT, STR))))
    assert of_value([1.0, 2], True) == Lst(REAL)
    assert of_value({"a": 1.0}, True) == Dct(REAL, (("a", REAL),), STR)
    assert of_value([1, 2], True) == Lst(INT)
    assert of_value(np.zeros(3), True) == Arr(1, "f", True)
    assert of_value(np.zeros((2, 3)), False) == Arr(2, "f", False)
    assert of_value(np.zeros(3, dtype=int), True) == Arr(1, "i", False)  # an int array carries no derivative
    assert not is_active(of_value((1, (2, "a")), True))
    with pytest.raises(chad.ChadTypeError):
        of_value(object(), True)


def test_to_user_from_user_round_trip_nested():
    value = (1.0, (2.0, 3, (4.0,)), "s")
    t = of_value(value, True)
    assert t == Tup((REAL, Tup((REAL, INT, Tup((REAL,)))), STR))
    ct = (0.5, (1.5, None, (2.5,)), None)
    sparse = from_user(ct, t)
    assert sparse == {0: 0.5, 1: {0: 1.5, 2: {0: 2.5}}}
    assert to_user(sparse, t, value) == ct


def test_to_user_of_zero_is_structured_zero():
    value = (1.0, (2.0, 3), "s")
    t = of_value(value, True)
    assert to_user(Zero, t, value) == (0.0, (0.0, None), None)
    assert to_user({1: {0: 2.0}}, t, value) == (0.0, (2.0, None), None)


def test_from_user_ignores_inactive_components():
    t = Tup((REAL, INT))
    assert from_user((1.0, 99), t) == {0: 1.0}
    assert from_user(2, REAL) == 2.0 and type(from_user(2, REAL)) is float
    assert from_user(None, INT) is Zero


def test_from_user_none_is_a_zero_cotangent():
    """None for an output's cotangent means zero (e.g. an aux output), whatever its structure."""
    assert from_user(None, REAL) == 0.0
    assert from_user(None, Dct(REAL, (("a", REAL),), STR)) is Zero
    assert from_user((1.0, None), Tup((REAL, Lst(REAL)))) == {0: 1.0}


def test_from_user_wrong_structure():
    t = Tup((REAL, REAL))
    with pytest.raises(chad.ChadTypeError):
        from_user((1.0,), t)
    with pytest.raises(chad.ChadTypeError):
        from_user(1.0, t)


_leaf = st.one_of(st.floats(-5, 5), st.integers(-3, 3), st.just("s"))
_values = st.recursive(
    _leaf, lambda inner: st.tuples(inner) | st.tuples(inner, inner) | st.tuples(inner, inner, inner), max_leaves=8
)


def _cotangent_like(value, draw_float):
    if not is_active(of_value(value, True)):
        return None  # discrete, or a tuple with nothing differentiable in it
    if isinstance(value, float):
        return draw_float()
    if isinstance(value, tuple):
        return tuple(_cotangent_like(v, draw_float) for v in value)
    return None


@no_explain
@given(value=_values, data=st.data())
def test_round_trip_property(value, data):
    t = of_value(value, True)
    ct = _cotangent_like(value, lambda: data.draw(st.floats(-5, 5)))
    if is_active(t):
        assert to_user(from_user(ct, t), t, value) == ct
    else:
        assert to_user(from_user(ct, t), t, value) is None
