"""Value types, inferred per call signature: which values carry a cotangent.

A derivative is specialised to the types of its arguments (like JAX traces on
abstract values). The lattice is small:

- `REAL`: a float that depends on a differentiated input (active);
- `CONST`: anything that carries no cotangent: ints, bools, strings, and floats
  that do not depend on a differentiated input (inactive);
- `Tup(items)`: a tuple with at least one active component;
- `Lst(item)`, `Dct(item)`: a list / dict whose elements (joined) are of type item;
- `Fn(code, env)`: a function value after closure conversion (Section 9): which
  code it runs (static) and the types of the values it captured. Its cotangent is
  its environment's tuple cotangent; the code part has none (unit, Appendix C);
- `ARR`: a NumPy array or NumPy scalar of floats (its shape is known at run time;
  a Python float joined with an array value is `ARR` too);
- `BOTTOM`: not known yet (used while inferring recursive functions and loops).

The types decide what the generated code does with cotangents (a float `+=` or a
sparse `add`) and where no cotangent code is needed at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .arrays import to_user_array
from .errors import ChadTypeError
from .ir import code_name
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
ARR = _Named("ARR")


@dataclass(frozen=True)
class Tup(VType):
    items: tuple[VType, ...]

    def __repr__(self) -> str:
        return "Tup(" + ", ".join(map(repr, self.items)) + ")"


@dataclass(frozen=True)
class Lst(VType):
    item: VType

    def __repr__(self) -> str:
        return f"Lst({self.item!r})"


@dataclass(frozen=True)
class Dct(VType):
    """A dict: `fields` gives each key's type when the keys are known (an argument, a
    literal with constant keys); `item` is the join of the values (None when they differ
    in kind, e.g. a tuple and a float: then only constant keys may be read)."""

    item: VType | None
    fields: tuple[tuple[object, VType], ...] | None = None

    def __repr__(self) -> str:
        if self.fields is not None:
            return "Dct{" + ", ".join(f"{k!r}: {t!r}" for k, t in self.fields) + "}"
        return f"Dct({self.item!r})"

    def field(self, key: object) -> VType:
        if self.fields is not None:
            for k, t in self.fields:
                if k == key:
                    return t
            raise ChadTypeError(f"the dict has no key {key!r}")
        return item_join(self)


@dataclass(frozen=True)
class Fn(VType):
    """A function value: its code (a lifted `ir.Function`, a module-level Python function,
    or a primitive such as `math.sin`) and the types of the values it captured."""

    code: object
    env: tuple[VType, ...] = ()

    def __repr__(self) -> str:
        return f"Fn({code_name(self.code)}; " + ", ".join(map(repr, self.env)) + ")"

    @property
    def env_type(self) -> VType:
        """The type of the environment tuple the code takes as its first parameter."""
        return tup(self.env)


def _kept(t: VType) -> bool:
    """Whether a container holding t needs its own type (not CONST): t carries a
    cotangent, is not known yet, or is a function (whose code a call must know)."""
    return is_active(t) or t is BOTTOM or holds_function(t)


def functions_in(t: VType) -> Iterator[Fn]:
    """The function values a value of type t holds (in containers, and captured by them)."""
    if isinstance(t, Fn):
        yield t
        parts: tuple[VType | None, ...] = t.env
    elif isinstance(t, Tup):
        parts = t.items
    elif isinstance(t, Dct):
        parts = tuple(f for _, f in t.fields) if t.fields is not None else (t.item,)
    elif isinstance(t, Lst):
        parts = (t.item,)
    else:
        return
    for part in parts:
        if part is not None:
            yield from functions_in(part)


def holds_function(t: VType) -> bool:
    return next(functions_in(t), None) is not None


def tup(items: tuple[VType, ...] | list[VType]) -> VType:
    """A tuple type; CONST when no component carries a cotangent or a function."""
    items = tuple(items)
    if any(_kept(t) for t in items):
        return Tup(items)
    return CONST


def lst(item: VType) -> VType:
    """A list type; CONST when its elements carry no cotangent and no function."""
    return Lst(item) if _kept(item) else CONST


def dct(values: list[VType], keys: list[object] | None = None) -> VType:
    """A dict type from its values' types (and its keys, when they are known constants)."""
    try:
        item = BOTTOM
        for t in values:
            item = join(item, t)
    except ChadTypeError:
        item = None  # values of different kinds: constant keys only
    fields = tuple(zip(keys, values)) if keys is not None else None
    if item is None and fields is None:
        raise ChadTypeError("a dict whose values differ in kind (tuple, list, float) needs constant keys")
    if item is not None and not _kept(item):
        return CONST
    return Dct(item, fields)


def is_active(t: VType) -> bool:
    if t is REAL or t is ARR:
        return True
    if isinstance(t, Tup):
        return any(is_active(i) for i in t.items)
    if isinstance(t, Dct):
        return any(is_active(f) for _, f in t.fields) if t.fields is not None else is_active(t.item)
    if isinstance(t, Fn):
        return any(is_active(i) for i in t.env)
    return isinstance(t, Lst) and is_active(t.item)


def item_join(t: VType) -> VType:
    """The type of an element of a tuple, list or dict read at a run-time index."""
    if isinstance(t, Tup):
        out = BOTTOM
        for item in t.items:
            out = join(out, item)
        return out
    if isinstance(t, Dct) and t.item is None:
        raise ChadTypeError(f"values of different kinds ({t}) read at a run-time key; use constant keys")
    if isinstance(t, (Lst, Dct)):
        return t.item
    return t


def join(a: VType, b: VType) -> VType:
    """The type of a value that may come from either branch."""
    if a is BOTTOM:
        return b
    if b is BOTTOM or a == b:
        return a
    if a is CONST and b is REAL or a is REAL and b is CONST:
        return REAL
    if a is ARR and b in (REAL, CONST) or b is ARR and a in (REAL, CONST):
        return ARR  # a float that is sometimes an array (or a NumPy scalar): numbers of run-time shape
    if isinstance(a, (Tup, Lst, Dct)) and b is CONST:
        return a
    if isinstance(b, (Tup, Lst, Dct)) and a is CONST:
        return b
    if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
        return tup([join(x, y) for x, y in zip(a.items, b.items)])
    if isinstance(a, Lst) and isinstance(b, Lst):
        return lst(join(a.item, b.item))
    if isinstance(a, Fn) and isinstance(b, Fn):
        if a.code is not b.code or len(a.env) != len(b.env):
            raise ChadTypeError(
                f"a variable (or list) holds different functions ({a!r} and {b!r}); chadpy needs each "
                "function value's code to be known: one function per variable, or the same lambda for a list"
            )
        return Fn(a.code, tuple(join(x, y) for x, y in zip(a.env, b.env)))
    if isinstance(a, Dct) and isinstance(b, Dct):
        if a.fields is not None and b.fields is not None and [k for k, _ in a.fields] == [k for k, _ in b.fields]:
            return dct([join(x, y) for (_, x), (_, y) in zip(a.fields, b.fields)], [k for k, _ in a.fields])
        return dct([item_join(a), item_join(b)])
    raise ChadTypeError(f"a variable holds values of different shapes ({a} and {b}) on different paths")


def join_all(types: list[VType]) -> VType:
    """The join of several types (CONST for none)."""
    out = BOTTOM
    for t in types:
        out = join(out, t)
    return CONST if out is BOTTOM else out


def of_value(value: object, active: bool) -> VType:
    """The type of an argument value; `active` says whether it is differentiated."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str, bytes, np.integer, np.bool_)):
        return CONST
    if isinstance(value, float):
        return REAL if active else CONST
    if isinstance(value, tuple):
        return tup([of_value(v, active) for v in value])
    if isinstance(value, list):
        return lst(join_all([of_value(v, active) for v in value]))
    if isinstance(value, dict):
        return dct([of_value(v, active) for v in value.values()], list(value))
    if isinstance(value, (np.ndarray, np.floating)):
        return ARR if active and np.issubdtype(value.dtype, np.floating) else CONST
    if callable(value) and not isinstance(value, type):
        if active:
            raise ChadTypeError(f"cannot differentiate with respect to a function ({value!r}); choose argnums")
        return Fn(getattr(value, "__chad_wrapped__", value))  # its code is read like a called function's
    if not active:
        return CONST
    raise ChadTypeError(f"cannot differentiate with respect to a value of type {type(value).__name__}")


def zero_of(t: VType) -> Expr:
    """The zero cotangent of type t, as generated code."""
    return Lit(0.0) if t is REAL else Obj(Zero, "Zero")


def to_user(ct: object, t: VType, value: object) -> object:
    """A cotangent in the structure of the primal value it belongs to (None if discrete)."""
    if t is REAL or t is ARR and not isinstance(value, (np.ndarray, np.floating)):
        return None if isinstance(value, int) else float(ct) if ct is not Zero else 0.0
    if t is ARR:
        return to_user_array(ct, value)
    if isinstance(t, Tup):
        return tuple(to_user(tuple_part(ct, k, _zero(it)), it, v) for k, (it, v) in enumerate(zip(t.items, value)))
    if isinstance(t, Lst):
        return [to_user(tuple_part(ct, k, _zero(t.item)), t.item, v) for k, v in enumerate(value)]
    if isinstance(t, Dct):
        fields = dict(t.fields) if t.fields is not None else dict.fromkeys(value, t.item)
        return {k: to_user(tuple_part(ct, k, _zero(fields[k])), fields[k], v) for k, v in value.items()}
    return None


def from_user(ct: object, t: VType) -> object:
    """A user-given cotangent (same structure as the value) in chadpy's sparse form."""
    if t is REAL:
        return float(ct)
    if t is ARR:
        return np.asarray(ct, dtype=float) if isinstance(ct, np.ndarray) else ct
    if isinstance(t, Tup):
        if not isinstance(ct, tuple) or len(ct) != len(t.items):
            raise ChadTypeError(f"expected a cotangent tuple of length {len(t.items)}, got {ct!r}")
        return {k: from_user(c, it) for k, (c, it) in enumerate(zip(ct, t.items)) if is_active(it)}
    if isinstance(t, Lst):
        if not isinstance(ct, list):
            raise ChadTypeError(f"expected a cotangent list, got {ct!r}")
        return {k: from_user(c, t.item) for k, c in enumerate(ct) if c is not None}
    if isinstance(t, Dct):
        if not isinstance(ct, dict):
            raise ChadTypeError(f"expected a cotangent dict, got {ct!r}")
        fields = dict(t.fields) if t.fields is not None else dict.fromkeys(ct, t.item)
        return {k: from_user(c, fields[k]) for k, c in ct.items() if c is not None}
    return None


def _zero(t: VType) -> object:
    return 0.0 if t is REAL else Zero
