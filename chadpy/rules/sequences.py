"""Rules for lists, tuples and dicts (Section 7: their cotangents are sparse maps from
positions or keys to cotangents, so a one-hot is O(1)).

Operations that lowering writes for the user's loops and builtins (`positions`,
`argsort`, `append`) are here too, under the names `lower` uses.
"""

from __future__ import annotations

import builtins
import functools

from .. import array_rules, runtime
from ..errors import ChadTypeError
from ..expressions import BinOp, call
from ..kinds import INDICES, INT_RESULT, sum_builtin
from ..primitives import METHODS, PRIMITIVES, REALS, Primitive, function
from ..vtypes import INT, Arr, Dct, Lst, Tup, VType, describe, is_active, item_join, join


def _concat_type(types: list[VType], consts: list[object]) -> VType:
    a, b = types
    if isinstance(a, Tup) and isinstance(b, Tup):
        return Tup(a.items + b.items)
    return Lst(join(item_join(a), item_join(b)))


def _append_type(types: list[VType], consts: list[object]) -> VType:
    xs, v = types
    return join(xs, Lst(v))


def _repeat_type(types: list[VType], consts: list[object]) -> VType:
    seq = types[0] if isinstance(types[0], (Lst, Tup)) else types[1]
    return Lst(item_join(seq))


def _copy_type(types: list[VType], consts: list[object]) -> VType:
    x = types[0]
    if isinstance(x, Dct):
        return Lst(x.key)  # list(d) is d's keys
    if isinstance(x, Arr) and is_active(x):
        raise ChadTypeError("list() of an array that carries derivatives is not supported; index the array instead")
    return x if isinstance(x, Lst) else Lst(item_join(x))


def _keys_type(types: list[VType], consts: list[object]) -> VType:
    d = types[0]
    return Lst(d.key) if isinstance(d, Dct) else Lst(INT)


def _values_type(types: list[VType], consts: list[object]) -> VType:
    return Lst(item_join(types[0]))


_LIST = [REALS, REALS, REALS]  # a list of floats the rule test samples


def _element_type(types: list[VType], consts: list[object]) -> VType:
    t = item_join(types[0])
    if isinstance(types[0], (Lst, Tup, Dct)) or not is_active(t):
        return t
    raise ChadTypeError(f"max/min over {describe(types[0])} is not supported")


LIST_APPEND = Primitive(
    "append",
    lambda xs, v: call(runtime.list_append, xs, v),
    lambda d, y, xs, v, saved: call(runtime.append_ct, d, saved),
    (2, 2),
    _append_type,
    saves=lambda y, xs, v: call(len, y) - 1,
    containers=True,  # the new element's position (later appends keep it)
)
CONCAT = Primitive(
    "concat",
    lambda a, b: BinOp("+", a, b),
    lambda d, y, a, b, saved: call(runtime.concat_ct, d, saved),
    (2, 2),
    _concat_type,
    saves=lambda y, a, b: call(len, a),
    containers=True,
    samples=((_LIST, [REALS]),),
)
REPEAT = Primitive(
    "repeat",
    lambda a, b: BinOp("*", a, b),
    lambda d, y, a, b, saved: call(runtime.repeat_ct, d, saved, a),
    (2, 2),
    _repeat_type,
    saves=lambda y, a, b: call(runtime.repeated_length, a, b),
    containers=True,
    samples=((_LIST, 2), (2, _LIST), (_LIST, 0)),
)
SUM_SEQ = Primitive(
    "sum",
    lambda *a: call(builtins.sum, *a),
    lambda d, y, xs, start=None, saved=None: [call(array_rules.sum_seq_ct, d, xs, saved), d],
    (1, 2),
    sum_builtin,
    saves=lambda y, xs, start=None: call(len, xs),
    containers=True,
    samples=((_LIST,), (_LIST, REALS)),
)


def _extreme_seq(fn: object) -> Primitive:
    return Primitive(
        fn.__name__,
        lambda xs: call(fn, xs),
        lambda d, y, xs: [call(array_rules.extreme_seq_ct, d, y, xs)],
        (1, 1),
        _element_type,
        containers=True,
        aliases="argument",
        samples=((_LIST,),),
    )


# max(xs), min(xs) of one sequence argument
OVER_SEQUENCE = {builtins.max: _extreme_seq(max), builtins.min: _extreme_seq(min)}
LIST_COPY = Primitive(
    "list",
    lambda x: call(list, x),
    lambda d, y, x: [call(runtime.list_ct, d, x)],
    (1, 1),
    _copy_type,
    containers=True,
    samples=((_LIST,),),
)
DICT_VALUES = Primitive(
    "values",
    lambda dct: call(runtime.dict_values, dct),
    lambda d, y, dct, saved: [call(runtime.values_ct, d, saved)],
    (1, 1),
    _values_type,
    saves=lambda y, dct: call(list, dct),
    containers=True,
)
DICT_KEYS = function(list, None, kind=_keys_type, name="keys", containers=True)
POSITIONS = function(runtime.positions, None, kind=_keys_type, containers=True)  # what a `for` loop counts
ARGSORT = function(runtime.argsort, None, (2, 2), kind=INDICES, containers=True)  # `sorted(xs, key=...)`'s order
ARGBEST = function(runtime.argbest, None, (2, 2), kind=INT_RESULT)  # `max(xs, key=...)`'s position

PRIMITIVES[runtime.dict_values] = DICT_VALUES
METHODS.update({"values": runtime.dict_values, "keys": list})  # `d.values()`, `d.keys()`

# Functions a call lowers into a loop (the paper's fold), not a primitive.
REDUCE = functools.reduce
