"""Value types, inferred per call signature: which values carry a cotangent.

A derivative is specialised to the types of its arguments (like JAX traces on
abstract values). The lattice is small:

- `REAL`: a float that depends on a differentiated input (active);
- `CONST`: anything that carries no cotangent: ints, bools, strings, and floats
  that do not depend on a differentiated input (inactive);
- `Tup(items)`: a tuple with at least one active component;
- `BOTTOM`: not known yet (used while inferring recursive functions).

The types decide what the generated code does with cotangents (a float `+=` or a
sparse `add`) and where no cotangent code is needed at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ChadTypeError
from .runtime import Zero, tuple_part
from .target import Expr, Lit, Obj


class VType:
    pass


@dataclass(frozen=True)
class _Named(VType):
    name: str

    def __repr__(self) -> str:
        return self.name


REAL = _Named("REAL")
CONST = _Named("CONST")
BOTTOM = _Named("BOTTOM")


@dataclass(frozen=True)
class Tup(VType):
    items: tuple[VType, ...]

    def __repr__(self) -> str:
        return "Tup(" + ", ".join(map(repr, self.items)) + ")"


def tup(items: tuple[VType, ...] | list[VType]) -> VType:
    """A tuple type; CONST when no component is active."""
    items = tuple(items)
    if any(is_active(t) or t is BOTTOM for t in items):
        return Tup(items)
    return CONST


def is_active(t: VType) -> bool:
    return t is REAL or (isinstance(t, Tup) and any(is_active(i) for i in t.items))


def join(a: VType, b: VType) -> VType:
    """The type of a value that may come from either branch."""
    if a is BOTTOM:
        return b
    if b is BOTTOM or a == b:
        return a
    if a is CONST and b is REAL or a is REAL and b is CONST:
        return REAL
    if isinstance(a, Tup) and b is CONST:
        return a
    if isinstance(b, Tup) and a is CONST:
        return b
    if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
        return tup([join(x, y) for x, y in zip(a.items, b.items)])
    raise ChadTypeError(f"a variable holds values of different shapes ({a} and {b}) on different paths")


def of_value(value: object, active: bool) -> VType:
    """The type of an argument value; `active` says whether it is differentiated."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str, bytes)):
        return CONST
    if isinstance(value, float):
        return REAL if active else CONST
    if isinstance(value, tuple):
        return tup([of_value(v, active) for v in value])
    if not active:
        return CONST
    raise ChadTypeError(f"cannot differentiate with respect to a value of type {type(value).__name__}")


def zero_of(t: VType) -> Expr:
    """The zero cotangent of type t, as generated code."""
    return Lit(0.0) if t is REAL else Obj(Zero, "Zero")


def to_user(ct: object, t: VType, value: object) -> object:
    """A cotangent in the structure of the primal value it belongs to (None if discrete)."""
    if t is REAL:
        return float(ct)
    if isinstance(t, Tup):
        return tuple(to_user(tuple_part(ct, k, _zero(it)), it, v) for k, (it, v) in enumerate(zip(t.items, value)))
    return None


def from_user(ct: object, t: VType) -> object:
    """A user-given cotangent (same structure as the value) in chadpy's sparse form."""
    if t is REAL:
        return float(ct)
    if isinstance(t, Tup):
        if not isinstance(ct, tuple) or len(ct) != len(t.items):
            raise ChadTypeError(f"expected a cotangent tuple of length {len(t.items)}, got {ct!r}")
        return {k: from_user(c, it) for k, (c, it) in enumerate(zip(ct, t.items)) if is_active(it)}
    return None


def _zero(t: VType) -> object:
    return 0.0 if t is REAL else Zero
