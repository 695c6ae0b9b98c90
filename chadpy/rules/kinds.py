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
    Float,
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


def _opaque(t: VType) -> bool:
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


def _numeric_operands(types: list[VType], name: str) -> list[VType] | None:
    """The operands as numbers and arrays, or None if one is opaque data (a str, None, an object)."""
    out = []
    for t in types:
        if _opaque(t):
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


def _axis_rank(rank: int | None, axis: object, keepdims: object) -> int | None:
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
        rank = _axis_rank(x.rank, axis, keepdims)
        return scalar(kind, True) if rank == 0 else arr(rank, kind, True)

    return rule


def mean_rule(types: list[VType], consts: list[object]) -> VType:
    return reduction("f")(types, consts)


def cumulative(types: list[VType], consts: list[object]) -> VType:
    """`np.cumsum(x, axis)`, `np.cumprod`: x's rank along an axis, raveled (1-D) without one."""
    x = as_array(types[0])
    axis = consts[1] if len(consts) > 1 else None
    rank = None if axis is UNKNOWN else 1 if axis is None else x.rank
    return arr(rank, "i" if x.dtype == "b" else x.dtype, True)


def sum_builtin(types: list[VType], consts: list[object]) -> VType:
    """`sum(xs[, start])`: the sum of the elements (an array's rows for a 2-D array)."""
    xs = types[0]
    t = item_join(xs)
    if len(types) > 1:
        t = join(t, types[1])
    if t is BOTTOM:
        return INT
    if not (is_number(t) or isinstance(t, Arr) or _opaque(t)):
        raise ChadTypeError(f"sum over {describe(t)} elements is not supported")
    if is_number(t) and not isinstance(t, Float) and len(types) == 1:
        return INT
    return t


def matmul(types: list[VType], consts: list[object]) -> VType:
    a, b = (as_array(t) for t in types)
    kind = promote(a.dtype, b.dtype)
    if a.rank is None or b.rank is None:
        return arr(None, kind, True)
    if a.rank == 1 and b.rank == 1:
        return scalar(kind, True)
    rank = max(a.rank, b.rank) - (1 if 1 in (a.rank, b.rank) else 0)
    return arr(rank, kind, True)


def dot(types: list[VType], consts: list[object]) -> VType:
    a, b = (as_array(t) for t in types)
    if a.rank == 0 or b.rank == 0:
        return broadcast("np.dot", types)
    kind = promote(a.dtype, b.dtype)
    if a.rank is None or b.rank is None:
        return arr(None, kind, True)
    rank = a.rank + b.rank - 2 if b.rank > 1 else a.rank - 1
    return scalar(kind, True) if rank == 0 else arr(rank, kind, True)


def outer(types: list[VType], consts: list[object]) -> VType:
    return arr(2, promote(*(as_array(t).dtype for t in types)), True)


def _shape_rank(t: VType) -> int | None:
    """The rank of an array made with shape argument of type t (`3`, `(2, 3)`)."""
    if is_number(t):
        return 1
    if isinstance(t, Tup):
        return len(t.items)
    return None


def reshape(types: list[VType], consts: list[object]) -> VType:
    return arr(_shape_rank(types[1]), as_array(types[0]).dtype, True)


def same_array(types: list[VType], consts: list[object]) -> VType:
    """`np.transpose(x)`: an array like x."""
    return as_array(types[0])


def array_like(types: list[VType], consts: list[object]) -> VType:
    """`np.array(x, dtype)`, `np.zeros_like(x, dtype)`: an array like x, of that dtype if one is given."""
    x = as_array(types[0])
    dtype = _dtype(consts[1])
    return x if dtype is None else arr(x.rank, dtype, x.active)


def _dtype(value: object) -> str | None:
    """The dtype kind of a `dtype=` argument (None when not given or not a constant)."""
    if value is None or value is UNKNOWN:
        return None
    kind = np.dtype(value).kind
    return "i" if kind == "u" else kind if kind in "bifc" else "O"


def concatenate(types: list[VType], consts: list[object]) -> VType:
    part = as_array(item_join(types[0]))
    axis = consts[1] if len(consts) > 1 else 0
    return arr(1 if axis is None else part.rank, part.dtype, True)


def meshgrid(types: list[VType], consts: list[object]) -> VType:
    """`np.meshgrid(*xs, indexing=...)`: a tuple of len(xs) arrays of rank len(xs)."""
    xs = [as_array(t) for t in types[:-1]]
    return Tup(tuple(arr(len(xs), x.dtype, True) for x in xs))


def split(types: list[VType], consts: list[object]) -> VType:
    """`np.split(x, ...)`, `np.array_split`: a list of arrays of x's rank."""
    part = as_array(types[0])
    return Lst(arr(part.rank, part.dtype, True))


def stack(types: list[VType], consts: list[object]) -> VType:
    return as_array(types[0])  # the sequence as an array: one more axis than its parts


def array_shape(types: list[VType], consts: list[object]) -> VType:
    """`np.shape(x)`, `x.shape`: a tuple of ints (a list of them if the rank is not known)."""
    rank = as_array(types[0]).rank
    return Lst(INT) if rank is None else Tup((INT,) * rank)


def filled(types: list[VType], consts: list[object]) -> VType:
    """`np.zeros(shape, dtype)`, `np.ones(shape)`: an array of the shape's rank (float by default)."""
    return Arr(_shape_rank(types[0]), (_dtype(consts[1]) if len(consts) > 1 else None) or "f")


def arange(types: list[VType], consts: list[object]) -> VType:
    return Arr(1, "i" if all(t == INT or t == BOOL for t in types) else "f")


def eye(types: list[VType], consts: list[object]) -> VType:
    return Arr(2, "f")


def argreduce(types: list[VType], consts: list[object]) -> VType:
    """`np.argmax(x, axis)`: an int, or an array of ints."""
    x = as_array(types[0])
    rank = _axis_rank(x.rank, consts[1] if len(consts) > 1 else None, False)
    return INT if rank == 0 else Arr(rank, "i")


def where(types: list[VType], consts: list[object]) -> VType:
    kind = promote(dtype_of(as_array(types[1])), dtype_of(as_array(types[2])))
    shape = broadcast("np.where", types)
    return arr(shape.rank, kind, True) if isinstance(shape, Arr) else scalar(kind, True)


def clip(types: list[VType], consts: list[object]) -> VType:
    return broadcast("np.clip", [t for t in types if t != NONE])


def round_builtin(types: list[VType], consts: list[object]) -> VType:
    """`round(x)` is an int; `round(x, n)` is a number like x."""
    return INT if len(types) == 1 or types[1] == NONE else types[0]


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


def _count_of(value: object) -> int:
    return len(value) if isinstance(value, (tuple, list)) else 1


def _int_rank(t: VType) -> int | None:
    """The rank of an index argument: 0 for an int, an int array's, a list's 1."""
    if is_number(t):
        return 0
    return as_array(t).rank


RAVELED = reranked(lambda r, t, c: 1)
SQUEEZED = reranked(lambda r, t, c: None if c[1] is None else r - _count_of(c[1]))
EXPANDED = reranked(lambda r, t, c: r + _count_of(c[1]))
SORTED = reranked(lambda r, t, c: 1 if c[1] is None else r)
ARGSORTED = reranked(lambda r, t, c: 1 if c[1] is None else r, "i")
TILED = reranked(lambda r, t, c: max(r, _count_of(c[1])))
REPEATED = reranked(lambda r, t, c: 1 if c[2] is None else r, reads=(2,))
DIAG = reranked(lambda r, t, c: {1: 2, 2: 1}.get(r), reads=())
DIAGONAL = reranked(lambda r, t, c: r - 1, reads=())
TRACE = reranked(lambda r, t, c: r - 2, reads=())
BROADCAST_TO = reranked(lambda r, t, c: _shape_rank(t[1]), reads=())


def take(types: list[VType], consts: list[object]) -> VType:
    """`np.take(a, indices, axis)`: the indices' shape (axis None), else a's with the axis replaced by it."""
    ranks = _int_rank(types[1])
    rule = reranked(lambda r, t, c: None if ranks is None else ranks if c[2] is None else r - 1 + ranks, reads=(2,))
    return rule(types, consts)


def at_least(n: int) -> KindRule:
    """`np.atleast_2d(x)` (of one array): x's rank, at least n."""
    return reranked(lambda r, t, c: max(r, n), reads=())


def stacked(least: int) -> KindRule:
    """`np.vstack(xs)` (least 2), `np.hstack` (1), `np.column_stack` (2): the parts' rank, at least `least`."""

    def rule(types: list[VType], consts: list[object]) -> VType:
        part = as_array(item_join(types[0]))
        return arr(None if part.rank is None else max(part.rank, least), part.dtype, True)

    return rule


def full(types: list[VType], consts: list[object]) -> VType:
    """`np.full(shape, fill_value)`: an array of the shape's rank, of the fill value's dtype."""
    return arr(_shape_rank(types[0]), as_array(types[1]).dtype, True)


def full_like(types: list[VType], consts: list[object]) -> VType:
    """`np.full_like(a, fill_value)`: an array like a (its dtype: an int array stays one)."""
    return arr(as_array(types[0]).rank, as_array(types[0]).dtype, True)
