"""The run-time half of chadpy: cotangent values and the environment accumulator.

Cotangent representations (DESIGN.md section 4), all with O(1) zero and one-hot:

- a float's cotangent is a float, zero `0.0`;
- a tuple's cotangent is `Zero` or a dict {index: cotangent} holding the
  non-zero components only, so the one-hot of a projection `t[k]` is `{k: d}`;
- a discrete value's cotangent is never materialised (unit).

Cotangents are used affinely: once added somewhere they are never read again,
so `add` may update its left argument in place. This is what makes the
amortisation argument of Section 4.3 hold.

`EArr` is the mutable environment array of Section 5 (Fig. 8): one slot per
variable in scope, slot numbers fixed at compile time (De Bruijn levels).
"""

from __future__ import annotations

import math


class _ZeroType:
    """The zero of every non-scalar cotangent type: costs nothing to make or add."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Zero"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "Zero"  # copies and pickles are the singleton itself


Zero = _ZeroType()


def add(a: object, b: object) -> object:
    """a + b on cotangents. Cost: the size of the smaller sparse argument."""
    if b is Zero or b is None:
        return a
    if a is Zero or a is None:
        return b
    if isinstance(a, dict):
        if len(a) < len(b):
            a, b = b, a
        for k, v in b.items():
            a[k] = add(a[k], v) if k in a else v
        return a
    return a + b


def tuple_part(d: object, k: object, zero: object) -> object:
    """The cotangent of component `k` of a tuple, from the tuple's cotangent `d`."""
    if d is Zero:
        return zero
    return d.get(k, zero)


def check(cond: object, message: object = None) -> None:
    """`assert cond, message` in generated code (kept even under python -O)."""
    if not cond:
        raise AssertionError(message) if message is not None else AssertionError


def pow_base_ct(d: float, a: float, b: float) -> float:
    """Cotangent of a in a ** b."""
    return 0.0 if b == 0 else d * b * a ** (b - 1)


def pow_exponent_ct(d: float, y: float, a: float) -> float:
    """Cotangent of b in y = a ** b: d * y * log(a); zero at a == 0, undefined (nan) for a < 0."""
    if a > 0:
        return d * y * math.log(a)
    return 0.0 if a == 0 else math.nan


class EArr:
    """The environment accumulator: a preallocated array with one slot per variable."""

    __slots__ = ("slots",)

    def __init__(self, depth: int):
        self.slots = [None] * depth

    def push0(self, slot: int, zero: object) -> None:
        self.slots[slot] = zero

    def one(self, slot: int, d: object) -> None:
        self.slots[slot] = add(self.slots[slot], d)

    def pop(self, slot: int) -> object:
        value = self.slots[slot]
        self.slots[slot] = None
        return value
