"""Cotangent values and their sums, the monoid every backpropagator adds into.

Cotangent representations (docs/design.md section 4), all with O(1) zero and one-hot:

- a float's cotangent is a float, zero `0.0`;
- a tuple's cotangent is `Zero` or a dict {index: cotangent} holding the
  non-zero components only, so the one-hot of a projection `t[k]` is `{k: d}`;
- a discrete value's cotangent is never materialised (unit).

Cotangents are used affinely: once added somewhere they are never read again,
so `add` may update its left argument in place. This is what makes the
amortisation argument of Section 4.3 hold.

The environment accumulators (`EArr` and the paper's slower stages) are in
`environments.py`.
"""

from __future__ import annotations

from .facts import adds_into, collects


class _ZeroType:
    """The zero of every non-scalar cotangent type: costs nothing to make or add.

    It is a true additive identity and absorbs products (`Zero * x` is `Zero`), so a
    derivative rule applied to a zero cotangent (a variable nobody used) costs O(1)
    and needs no special case. NumPy defers to it (`__array_ufunc__ = None`).
    """

    __slots__ = ()
    __array_ufunc__ = None

    def __add__(self, other: object) -> object:
        return other

    __radd__ = __add__

    def __sub__(self, other: object) -> object:
        return -other

    def __rsub__(self, other: object) -> object:
        return other

    def __mul__(self, other: object) -> _ZeroType:
        return self

    __rmul__ = __truediv__ = __matmul__ = __rmatmul__ = __mul__

    def __neg__(self) -> _ZeroType:
        return self

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


@adds_into
def add_at(ct: object, key: object, d: object) -> object:
    """ct + {key: d} for a tuple, list or dict cotangent, without building the one-hot."""
    if ct is Zero:
        return {key: d}
    ct[key] = add(ct[key], d) if key in ct else d
    return ct


@collects(add_at)
def add_items(ct: object, keys: list, values: list) -> object:
    """ct plus values[k] at keys[k], in order, for a tuple, list or dict cotangent: a loop's `add_at`
    calls, collected in two lists (`collect`). A dict of them when ct is zero and every key comes once."""
    if ct is Zero:
        out = dict(zip(keys, values))
        if len(out) == len(keys):  # nothing to add up
            return out if out else Zero
        ct = {}
    for key, d in zip(keys, values):  # add_at's update, without a call per item
        ct[key] = add(ct[key], d) if key in ct else d
    return ct


def scaled(ct: object, c: float) -> object:
    """c * ct, a new cotangent (ct is left as it is: `add` may later update the result in place).
    Cost: the size of ct's non-zero parts."""
    if ct is Zero or ct is None or c is Zero:
        return Zero if c is Zero else ct
    if isinstance(ct, dict):
        return {k: scaled(v, c) for k, v in ct.items()}
    scale = getattr(ct, "scaled", None)  # a Scatter or Outers stays sparse
    return c * ct if scale is None else scale(c)


def tuple_part(d: object, k: object, zero: object) -> object:
    """The cotangent of component `k` of a tuple, from the tuple's cotangent `d`."""
    if d is Zero:
        return zero
    return d.get(k, zero)


def with_parts(into: object, parts: dict) -> object:
    """The dict cotangent `into` with `parts` in place of its entries, each part having been added onto into's
    (a callee's accumulators, started from its caller's cotangent: `optimise/caller_accumulators.py`)."""
    if into is Zero:
        return parts
    into.update(parts)
    return into
