"""Kind rules: the type of a primitive's result from the types of its arguments.

A rule is `rule(types, consts) -> VType`: `types` are the arguments' types and
`consts` their values where they are constants (`axis=0`, `keepdims=True`) or
`UNKNOWN`. It gives the result's kind as if a derivative flowed through it (a
float result is `REAL`); `infer` removes the activity where none flows (a
discrete primitive, or no active argument). Ranks follow NumPy's rules where
they are known statically and are None (any rank) where not: code for an array
of unknown rank is the general code, right for any shape.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ChadTypeError
from ..ir.types import (
    BOOL,
    BOTTOM,
    INT,
    NONE,
    OBJECT,
    REAL,
    STR,
    Arr,
    Dct,
    Discrete,
    Lst,
    Tup,
    VType,
    arr,
    describe,
    dtype_of,
    is_active,
    is_number,
    item_join,
    join,
    promote,
    scalar,
)

UNKNOWN = object()  # the value of an argument that is not a constant

KindRule = Callable[[list[VType], list[object]], VType]


def fixed(t: VType) -> KindRule:
    """A result of one kind whatever the arguments (`math.sin`: a float, `len`: an int)."""
    return lambda types, consts: t


FLOAT_RESULT = fixed(REAL)
INT_RESULT = fixed(INT)
BOOL_RESULT = fixed(BOOL)
NONE_RESULT = fixed(NONE)
STR_RESULT = fixed(STR)
INDICES = fixed(Lst(INT))  # range(...), an argsort's positions
GENERAL_ARRAY = fixed(arr(None, "f", True))  # a user rule's result: any shape


def opaque(t: VType) -> bool:
    return isinstance(t, Discrete) and not is_number(t)


def as_array(t: VType) -> Arr:
    """The array NumPy makes of a value of type t (`np.asarray`)."""
    if isinstance(t, Arr):
        return t
    if is_number(t):
        return Arr(0, dtype_of(t), is_active(t))
    if isinstance(t, (Lst, Tup)):
        items = t.items if isinstance(t, Tup) else (t.item,)
        parts = [as_array(i) for i in items if i is not BOTTOM]
        if not parts:
            return Arr(1, "f")
        ranks = {p.rank for p in parts}
        rank = ranks.pop() + 1 if len(ranks) == 1 and None not in ranks else None
        dtype = parts[0].dtype
        for p in parts[1:]:
            dtype = promote(dtype, p.dtype)
        return arr(rank, dtype, any(p.active for p in parts))
    return Arr(None, "f")


def part_array(t: VType) -> Arr:
    """The array each part of a sequence of arrays is (`np.concatenate(xs)`); a tuple's parts may be of
    different kinds (`([0.0], v)`: a list and an array)."""
    if not isinstance(t, Tup):
        return as_array(item_join(t))
    whole = as_array(t)
    return arr(None if whole.rank is None else whole.rank - 1, whole.dtype, whole.active)


def _numeric_operands(types: list[VType], name: str) -> list[VType] | None:
    """The operands as numbers and arrays, or None if one is opaque data (a str, None, an object)."""
    out = []
    for t in types:
        if opaque(t):
            return None
        if isinstance(t, (Tup, Lst, Dct)):
            if is_active(t):
                raise ChadTypeError(
                    f"`{name}` of {describe(t)} that carries derivatives is not supported; "
                    "make it an array first (`np.array(...)`)"
                )
            t = as_array(t)
        elif not (is_number(t) or isinstance(t, Arr)):
            raise ChadTypeError(f"`{name}` of {describe(t)} is not supported")
        out.append(t)
    return out


def broadcast(name: str, types: list[VType], dtype: str | None = None) -> VType:
    """The result of an elementwise operation: an array if an operand is one (the largest
    rank), else a scalar; `dtype` forces the result's dtype kind ("f" for `/`, "b" for `<`)."""
    operands = _numeric_operands(types, name)
    if operands is None:  # data chadpy knows nothing about: a number of any shape if a derivative flows
        return arr(None, "f", True) if any(is_active(t) for t in types) else OBJECT
    kind = dtype
    if kind is None:
        kind = "b"
        for t in operands:
            kind = promote(kind, dtype_of(t))
    arrays = [t for t in operands if isinstance(t, Arr)]
    if not arrays:
        return scalar(kind, True)
    ranks = [t.rank for t in arrays]
    return arr(None if None in ranks else max(ranks), kind, True)


def elementwise(name: str, dtype: str | None = None) -> KindRule:
    return lambda types, consts: broadcast(name, types, dtype)


def compare(types: list[VType], consts: list[object]) -> VType:
    """`<`, `==`, ...: a bool, or an array of bools if an operand is an array."""
    if any(isinstance(t, Arr) for t in types):
        return broadcast("comparison", types, "b")
    return BOOL


def either(types: list[VType], consts: list[object]) -> VType:
    """`max(a, b)`, `min(a, b)`: one of the arguments."""
    out = BOTTOM
    for t in types:
        out = join(out, t)
    return out


def axis_rank(rank: int | None, axis: object, keepdims: object) -> int | None:
    """The rank of a reduction's result: a scalar over every axis, whatever the array's rank."""
    if axis is UNKNOWN or keepdims is UNKNOWN:
        return None
    if keepdims:
        return rank
    if axis is None:
        return 0
    return None if rank is None else rank - (len(axis) if isinstance(axis, tuple) else 1)


def reduction(dtype: str | None = None) -> KindRule:
    """`np.sum(x, axis, keepdims)` and friends: a scalar without an axis, else lower rank."""

    def rule(types: list[VType], consts: list[object]) -> VType:
        x = as_array(types[0]) if not isinstance(types[0], Arr) else types[0]
        axis = consts[1] if len(consts) > 1 else None
        keepdims = consts[2] if len(consts) > 2 else False
        kind = dtype or ("i" if x.dtype == "b" else x.dtype)
        rank = axis_rank(x.rank, axis, keepdims)
        return scalar(kind, True) if rank == 0 else arr(rank, kind, True)

    return rule


def shape_rank(t: VType) -> int | None:
    """The rank of an array made with shape argument of type t (`3`, `(2, 3)`)."""
    if is_number(t):
        return 1
    if isinstance(t, Tup):
        return len(t.items)
    return None


def same_array(types: list[VType], consts: list[object]) -> VType:
    """`np.transpose(x)`: an array like x."""
    return as_array(types[0])


def dtype_kind(value: object) -> str | None:
    """The dtype kind of a `dtype=` argument (None when not given or not a constant)."""
    if value is None or value is UNKNOWN:
        return None
    kind = np.dtype(value).kind
    return "i" if kind == "u" else kind if kind in "bifc" else "O"


def reranked(
    rank_of: Callable[[int, list[VType], list[object]], int | None],
    dtype: str | None = None,
    reads: tuple[int, ...] = (1,),
) -> KindRule:
    """A shape operation's rule: an array like its first argument, of the rank `rank_of(rank, types, consts)`
    gives (`rank` is the argument's, known; None where the result's is not), a scalar at rank 0. `reads`:
    the arguments whose constant values it needs (any rank if one is not a constant)."""

    def rule(types: list[VType], consts: list[object]) -> VType:
        x = as_array(types[0])
        kind = dtype or x.dtype
        if x.rank is None or any(k < len(consts) and consts[k] is UNKNOWN for k in reads):
            return arr(None, kind, True)
        rank = rank_of(x.rank, types, consts)
        return scalar(kind, True) if rank == 0 else arr(rank, kind, True)

    return rule
