"""Value types, inferred per call signature: what each value is, and whether a cotangent flows through it.

A derivative is specialised to the types of its arguments (like JAX traces on
abstract values, without shapes). Every value has a *kind*, whether or not a
derivative flows through it; *activity* (does it depend on a differentiated
input?) is a separate bit on the kinds that can carry a cotangent:

- `Float(active)`: a Python float or a NumPy floating scalar (`a[i]` of a 1-D
  array, `np.sum(v)`): its cotangent is a float;
- `Discrete(kind)`: an int, bool, None, str, ... (no cotangent, ever); the kind
  `object` is a value chadpy knows nothing about (data it only passes around);
- `Arr(rank, dtype, active)`: a NumPy array of that rank (None: not known
  statically) and dtype kind ("f" float, "i" integer, "b" bool, "c" complex, "O");
  only float arrays carry cotangents;
- `Tup(items)`, `Lst(item)`, `Dct(item, fields, key)`: containers, active when a
  component is (a `namedtuple` is a `Tup` whose `cls` names its components);
- `Rec(cls, fields)`: an object of a user class, a record of its attributes
  (`records.py`): a product like a tuple, whose components have names;
- `Fn(code, env)`: a function value after closure conversion (Section 9): which
  code it runs (static) and the types of the values it captured. Its cotangent is
  its environment's tuple cotangent; the code part has none (unit, Appendix C);
- `BOTTOM`: not known yet (used while inferring recursive functions and loops).

An `Arr` is the general representation of a number: its generated code works for
any shape, a Python float included; a `Float` is always a scalar at run time, and
its code is plain float arithmetic. So a value that is a float on one path and an
array on another is an `Arr`, and so is a number computed from data chadpy knows
nothing about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import ChadTypeError
from .records import fields_of, is_record, is_record_class


def code_name(code: object) -> str:
    """The name of a function value's code: a Python function's, or a lifted `ir.Function`'s (not callable)."""
    return code.__name__ if callable(code) else code.name


class VType:
    """The type of a value of the IR (`'` marks one a derivative flows through when printed)."""

    pass


@dataclass(frozen=True)
class _Bottom(VType):
    """No type yet: what inference starts from, before any value reached a variable."""

    def __repr__(self) -> str:
        return "bottom"


BOTTOM = _Bottom()


@dataclass(frozen=True)
class Float(VType):
    """A real number (a Python float or a NumPy floating scalar); `active` if a derivative flows through it."""

    active: bool

    def __repr__(self) -> str:
        return "float'" if self.active else "float"


REAL = Float(True)  # a float a derivative flows through
FLOAT = Float(False)  # a float that does not depend on a differentiated input


@dataclass(frozen=True)
class Discrete(VType):
    """A value that never carries a cotangent: `int`, `bool`, `None`, `str`, `slice`, `object`."""

    kind: str

    def __repr__(self) -> str:
        return self.kind


INT = Discrete("int")
BOOL = Discrete("bool")
NONE = Discrete("None")
STR = Discrete("str")
SLICE = Discrete("slice")
OBJECT = Discrete("object")  # anything else: data chadpy passes along without looking inside
# a masked array, a matrix...: data whose NumPy operations are not a plain array's (refused where a derivative flows)
ARRAY_SUBCLASS = Discrete("NumPy array subclass")


@dataclass(frozen=True)
class Flag(Discrete):
    """A bool argument of the function being differentiated, whose value its specialisation is for (so an `if`
    on it that decides what kinds of values the function returns takes one branch): in the signature only."""

    value: bool = False


@dataclass(frozen=True)
class Class(Discrete):
    """A user class as a value (a class method's `cls`): data, whose attributes chadpy can read."""

    cls: type = object

    def __repr__(self) -> str:
        return f"class {self.cls.__name__}"


_NUMERIC = {"bool": 0, "int": 1}  # the numeric tower: bool < int < float
_DTYPES = "bifc"  # NumPy's promotion order of the dtype kinds chadpy distinguishes ("O" is above all)


@dataclass(frozen=True)
class Arr(VType):
    """A NumPy array of a rank (None: any) and a dtype kind; `active` if a derivative flows through it."""

    rank: int | None
    dtype: str
    active: bool = False

    def __repr__(self) -> str:
        rank = "?" if self.rank is None else self.rank
        names = {"f": "float", "i": "int", "b": "bool", "c": "complex"}
        return f"array[{rank}, {names.get(self.dtype, 'object')}]" + ("'" if self.active else "")


def arr(rank: int | None, dtype: str = "f", active: bool = False) -> Arr:
    """An array type; only float arrays carry cotangents."""
    return Arr(rank, dtype, active and dtype == "f")


@dataclass(frozen=True)
class Tup(VType):
    """A tuple of values of these types (the paper's product)."""

    items: tuple[VType, ...]
    cls: type | None = None  # a namedtuple's class: its components have names

    def __repr__(self) -> str:
        inner = "(" + ", ".join(map(repr, self.items)) + ("," if len(self.items) == 1 else "") + ")"
        return self.cls.__name__ + inner if self.cls is not None else inner

    def position(self, name: str) -> int | None:
        """The component a namedtuple's attribute `name` is (None: not one of its fields)."""
        fields = self.cls._fields if self.cls is not None else ()
        return fields.index(name) if name in fields else None


@dataclass(frozen=True)
class Rec(VType):
    """An object of a user class: its class and its attributes' types (`records.py`)."""

    cls: type
    fields: tuple[tuple[str, VType], ...]

    def __repr__(self) -> str:
        return f"{self.cls.__name__}{{" + ", ".join(f"{k}: {t!r}" for k, t in self.fields) + "}"

    def field(self, name: str) -> VType | None:
        return next((t for k, t in self.fields if k == name), None)

    def with_field(self, name: str, t: VType) -> Rec:
        """The record after `obj.name = value` with a value of type t."""
        fields = [(k, t if k == name else f) for k, f in self.fields]
        return Rec(self.cls, tuple(fields if self.field(name) is not None else [*fields, (name, t)]))


@dataclass(frozen=True)
class Lst(VType):
    """A list whose elements all have this type."""

    item: VType

    def __repr__(self) -> str:
        return f"list[{self.item!r}]"


@dataclass(frozen=True)
class Dct(VType):
    """A dict: `fields` gives each key's type when the keys are known (an argument, a
    literal with constant keys); `item` is the join of the values (None when they differ
    in kind, e.g. a tuple and a float: then only constant keys may be read); `key` is the
    type of its keys."""

    item: VType | None
    fields: tuple[tuple[object, VType], ...] | None = None
    key: VType = OBJECT

    def __repr__(self) -> str:
        if self.fields is not None:
            return "{" + ", ".join(f"{k!r}: {t!r}" for k, t in self.fields) + "}"
        return f"dict[{self.key!r}, {self.item!r}]"

    def field(self, key: object) -> VType:
        if self.fields is not None:
            for k, t in self.fields:
                if k == key:
                    return t
            # not there when the function was read: read when it runs (a KeyError there, as in Python, or a
            # value a statement run as written stored since: data, which no derivative flows through)
            return OBJECT
        return item_join(self)


@dataclass(frozen=True)
class Fn(VType):
    """A function value: its code (a lifted `ir.Function`, a module-level Python function,
    or a primitive such as `math.sin`) and the types of the values it captured."""

    code: object
    env: tuple[VType, ...] = ()

    def __repr__(self) -> str:
        return f"function {code_name(self.code)}(" + ", ".join(map(repr, self.env)) + ")"

    @property
    def env_type(self) -> VType:
        """The type of the environment tuple the code takes as its first parameter."""
        return Tup(self.env)


def functions_in(t: VType) -> Iterator[Fn]:
    """The function values a value of type t holds (in containers, and captured by them)."""
    if isinstance(t, Fn):
        yield t
        parts: tuple[VType | None, ...] = t.env
    elif isinstance(t, Tup):
        parts = t.items
    elif isinstance(t, Dct):
        parts = tuple(f for _, f in t.fields) if t.fields is not None else (t.item,)
    elif isinstance(t, Rec):
        parts = tuple(f for _, f in t.fields)
    elif isinstance(t, Lst):
        parts = (t.item,)
    else:
        return
    for part in parts:
        if part is not None:
            yield from functions_in(part)


def holds_function(t: VType) -> bool:
    return next(functions_in(t), None) is not None


def is_number(t: VType) -> bool:
    """A scalar number: a float, an int or a bool."""
    return isinstance(t, Float) or isinstance(t, Discrete) and t.kind in _NUMERIC


def is_active(t: VType) -> bool:
    if isinstance(t, (Float, Arr)):
        return t.active
    if isinstance(t, Tup):
        return any(is_active(i) for i in t.items)
    if isinstance(t, Dct):
        return any(is_active(f) for _, f in t.fields) if t.fields is not None else is_active(t.item)
    if isinstance(t, Fn):
        return any(is_active(i) for i in t.env)
    if isinstance(t, Rec):
        return any(is_active(f) for _, f in t.fields)
    return isinstance(t, Lst) and is_active(t.item)


def with_parts(t: VType, part: Callable[[VType], VType], item: Callable[[VType], VType] | None = None) -> VType | None:
    """A tuple, record, list or dict type with `part` applied to each component's type (a tuple's items, a
    record's or dict's fields) and `item` (`part` if not given) to a list's or dict's item type; None for another
    type."""
    item = item or part
    if isinstance(t, Tup):
        return Tup(tuple(map(part, t.items)), t.cls)
    if isinstance(t, Rec):
        return Rec(t.cls, tuple((k, part(f)) for k, f in t.fields))
    if isinstance(t, Lst):
        return Lst(item(t.item))
    if isinstance(t, Dct):
        fields = tuple((k, part(f)) for k, f in t.fields) if t.fields is not None else None
        return Dct(item(t.item) if t.item is not None else None, fields, t.key)
    return None


def inactive(t: VType) -> VType:
    """The same kind of value, with no derivative flowing through it."""
    if isinstance(t, Float):
        return FLOAT
    if isinstance(t, Arr):
        return Arr(t.rank, t.dtype)
    if isinstance(t, Fn):
        return Fn(t.code, tuple(map(inactive, t.env)))
    return with_parts(t, inactive) or t


def activated(t: VType) -> VType:
    """t with a derivative flowing through every part of it that can carry one (the primals of a `jvp`)."""
    if isinstance(t, Float):
        return REAL
    if isinstance(t, Arr):
        return arr(t.rank, t.dtype, True)
    return with_parts(t, activated) or t


def tangent_of(t: VType) -> VType:
    """The type of the tangent of a value of type t (forward mode): a float's is a float, an array's a float
    array of its rank, a container's or an object's the same structure of its parts' tangents (a float part
    through which no derivative flows has the tangent 0.0, so that a tuple of floats always has one of
    floats; another such part None), a function value's the tuple of its captured values'; None where no
    derivative flows (an int, a constant)."""
    if not is_active(t):
        return NONE
    if isinstance(t, Float):
        return FLOAT
    if isinstance(t, Arr):
        return Arr(t.rank, "f")
    if isinstance(t, Fn):
        return Tup(tuple(map(component_tangent, t.env)))
    return with_parts(t, component_tangent, tangent_of) or NONE


def component_tangent(t: VType) -> VType:
    """The type of the tangent of a part of an active container: 0.0 for a float no derivative flows through."""
    return FLOAT if isinstance(t, Float) else tangent_of(t)


def dtype_of(t: VType) -> str:
    """The NumPy dtype kind a number of type t has in an array."""
    if isinstance(t, Arr):
        return t.dtype
    if isinstance(t, Float):
        return "f"
    if isinstance(t, Discrete) and t.kind in _NUMERIC:
        return "i" if t.kind == "int" else "b"
    return "O"


def promote(a: str, b: str) -> str:
    """The dtype kind of a result of dtype kinds a and b."""
    if a == "O" or b == "O":
        return "O"
    return _DTYPES[max(_DTYPES.index(a), _DTYPES.index(b))]


def scalar(dtype: str, active: bool = False) -> VType:
    """The type of an element of an array of dtype kind `dtype` (a NumPy scalar)."""
    if dtype == "f":
        return Float(active)
    return {"i": INT, "b": BOOL}.get(dtype, OBJECT)


def dct(values: list[VType], keys: list[object] | None = None, key: VType = OBJECT) -> VType:
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
    if keys is not None:  # an empty dict's keys and values: not known yet (like an empty list's elements)
        key = join_all([of_value(k, False) for k in keys]) if keys else BOTTOM
    return Dct(item, fields, key)


def item_join(t: VType) -> VType:
    """The type of an element of a tuple, list or dict read at a run-time index."""
    if isinstance(t, Tup):
        out = BOTTOM
        for item in t.items:
            out = join(out, item)
        return OBJECT if out is BOTTOM else out
    if isinstance(t, Dct) and t.item is None:
        raise ChadTypeError("values of different kinds read at a run-time key; use constant keys")
    if isinstance(t, (Lst, Dct)):
        return t.item
    if isinstance(t, Arr):
        return element(t)
    if t == STR:
        return STR
    return OBJECT


def element(t: Arr, dropped: int = 1) -> VType:
    """The type of `x[i]` (`dropped` indices) for an array x of type t: an array of lower rank, or a scalar."""
    if t.rank is None:
        return t
    rank = t.rank - dropped
    if rank < 0:
        raise ChadTypeError(f"too many indices for an array of rank {t.rank}")
    return scalar(t.dtype, t.active) if rank == 0 else Arr(rank, t.dtype, t.active)


def opaque(t: VType) -> bool:
    """A discrete value that is not a number (a str, None, an object...)."""
    return isinstance(t, Discrete) and t.kind not in _NUMERIC


def join(a: VType, b: VType) -> VType:
    """The type of a value that may come from either branch."""
    if a is BOTTOM:
        return b
    if b is BOTTOM or a == b:
        return a
    if a == NONE or b == NONE:
        return b if a == NONE else a  # None on one path: the value of the other (an optional value)
    if is_number(a) and is_number(b):
        if isinstance(a, Float) or isinstance(b, Float):
            return Float(is_active(a) or is_active(b))
        return INT  # an int and a bool
    if isinstance(a, Arr) and (is_number(b) or isinstance(b, Arr)) or isinstance(b, Arr) and is_number(a):
        rank = a.rank if isinstance(a, Arr) and isinstance(b, Arr) and a.rank == b.rank else None
        if not isinstance(a, Arr) or not isinstance(b, Arr):
            rank = a.rank if isinstance(a, Arr) else b.rank  # a number that is sometimes an array
        return arr(rank, promote(dtype_of(a), dtype_of(b)), is_active(a) or is_active(b))
    if opaque(a) or opaque(b):
        other = b if opaque(a) else a
        if opaque(other) or not is_active(other) and not holds_function(other):
            return OBJECT
        if is_number(other) or isinstance(other, Arr):
            return arr(None, "f", True)  # a number of unknown shape: the general code handles any
    if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
        return Tup(tuple(join(x, y) for x, y in zip(a.items, b.items)), a.cls if a.cls is b.cls else None)
    if (
        isinstance(a, Rec)
        and isinstance(b, Rec)
        and a.cls is b.cls
        and [k for k, _ in a.fields] == [k for k, _ in b.fields]
    ):
        return Rec(a.cls, tuple((k, join(x, y)) for (k, x), (_, y) in zip(a.fields, b.fields)))
    if isinstance(a, Lst) and isinstance(b, Lst):
        return Lst(join(a.item, b.item))
    if isinstance(a, Fn) and isinstance(b, Fn):
        if a.code is not b.code or len(a.env) != len(b.env):
            raise ChadTypeError(
                f"a variable (or list) holds different functions ({code_name(a.code)} and {code_name(b.code)}); "
                "chadpy needs each function value's code to be known: one function per variable, or the same "
                "lambda for a list"
            )
        return Fn(a.code, tuple(join(x, y) for x, y in zip(a.env, b.env)))
    if isinstance(a, Dct) and isinstance(b, Dct):
        key = join(a.key, b.key)
        if a.fields is not None and b.fields is not None and [k for k, _ in a.fields] == [k for k, _ in b.fields]:
            fields = [join(x, y) for (_, x), (_, y) in zip(a.fields, b.fields)]
            return dct(fields, [k for k, _ in a.fields])
        return dct([item_join(a), item_join(b)], key=key)
    raise ChadTypeError(
        f"a variable holds values of different kinds ({describe(a)} and {describe(b)}) on different paths"
    )


def join_all(types: list[VType]) -> VType:
    """The join of several types (`object` for none)."""
    out = BOTTOM
    for t in types:
        out = join(out, t)
    return OBJECT if out is BOTTOM else out


def describe(t: VType) -> str:
    """A type in words, for messages."""
    if isinstance(t, Float):
        return "a float"
    if isinstance(t, Arr):
        return "an array"
    if isinstance(t, Tup):
        return f"a tuple of {len(t.items)}"
    if isinstance(t, Lst):
        return "a list"
    if isinstance(t, Dct):
        return "a dict"
    if isinstance(t, Fn):
        return f"the function {code_name(t.code)}"
    if isinstance(t, Rec):
        return f"a {t.cls.__name__} object with attributes " + ", ".join(k for k, _ in t.fields)
    if t == NONE:
        return "None"
    if isinstance(t, Discrete) and t.kind != "object":
        return f"an {t.kind}" if t.kind == "int" else f"a {t.kind}"
    return "a value"


def of_value(value: object, active: bool) -> VType:
    """The type of an argument value; `active` says whether it is differentiated."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if value is None:
        return NONE
    if isinstance(value, (int, np.integer)):
        return INT
    if isinstance(value, str):
        return STR
    if isinstance(value, (float, np.floating)):
        return Float(active)
    if isinstance(value, tuple):
        cls = type(value) if hasattr(type(value), "_fields") else None  # a namedtuple
        return Tup(tuple(of_value(v, active) for v in value), cls)
    if isinstance(value, list):
        return Lst(join_all([of_value(v, active) for v in value]) if value else BOTTOM)
    if isinstance(value, dict):
        return dct([of_value(v, active) for v in value.values()], list(value))
    if isinstance(value, np.ndarray):
        return _array(value, active)
    if isinstance(value, type) and is_record_class(value):
        return Class("object", value)
    if is_record(value):  # its data attributes; a function or an object it holds is data
        if id(value) in _TYPING:
            return OBJECT  # a reference back to an object being typed (a cycle) is data
        _TYPING.add(id(value))
        try:
            return Rec(type(value), tuple((k, _component(v, active)) for k, v in fields_of(value)))
        finally:
            _TYPING.discard(id(value))
    if callable(value) and not isinstance(value, type):
        if active:
            raise ChadTypeError(f"cannot differentiate with respect to a function ({_name_of(value)}); choose argnums")
        # its code is read like a called function's (a derivative chadpy made: the Python it is, `CODE_ATTR`)
        return Fn(getattr(value, CODE_ATTR, None) or getattr(value, "__chad_wrapped__", value))
    if not active:
        return OBJECT
    if isinstance(value, complex):
        raise ChadTypeError(
            "cannot differentiate with respect to a complex number: pass x.real and x.imag as two floats"
        )
    raise ChadTypeError(f"cannot differentiate with respect to a value of type {type(value).__name__}")


def _array(value: np.ndarray, active: bool) -> VType:
    """An array's type: its rank and dtype kind. Differentiated, it must hold real numbers and be a plain
    `np.ndarray`: a subclass changes what NumPy's functions do (a masked array skips its masked elements, a
    matrix's `*` is a product), which the derivative rules do not know. Not differentiated, such an array is
    opaque data."""
    kind = value.dtype.kind
    cls = np.ndarray if getattr(type(value), "__chad_array__", False) else type(value)  # `runtime.cost`'s counting
    if active:
        if cls is not np.ndarray:
            fix = (
                "np.ma.filled(x, 0.0) (masked elements as zeros) or x.compressed() (the unmasked ones)"
                if isinstance(value, np.ma.MaskedArray)
                else "np.asarray(x)"
            )
            raise ChadTypeError(f"cannot differentiate with respect to a {_name_of(cls)}: pass a plain array, {fix}")
        if kind == "c":
            raise ChadTypeError(
                "cannot differentiate with respect to a complex array: pass its real and imaginary parts as two "
                "float arrays (x.real, x.imag)"
            )
        if kind == "O":
            raise ChadTypeError("cannot differentiate with respect to an array of objects: pass x.astype(float)")
    elif cls is not np.ndarray:
        return ARRAY_SUBCLASS
    return arr(value.ndim, "i" if kind == "u" else kind if kind in _DTYPES else "O", active)


_TYPING: set[int] = set()  # the records of_value is typing now
CODE_ATTR = "__chad_code__"  # a derivative chadpy made (`grad(f)`): the Python function it is, which chadpy reads


def _component(value: object, active: bool) -> VType:
    """The type of a record's attribute: differentiated with the record, unless it cannot be."""
    try:
        return of_value(value, active)
    except ChadTypeError:
        return of_value(value, False)


def _name_of(value: object) -> str:
    return getattr(value, "__qualname__", None) or type(value).__name__
