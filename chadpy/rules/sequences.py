"""Rules for lists, tuples and dicts (Section 7: their cotangents are sparse maps from
positions or keys to cotangents, so a one-hot is O(1)).

Operations that lowering writes for the user's loops and builtins (`positions`,
`argsort`, `append`) are here too, under the names `lower` uses.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools

from ..errors import ChadTypeError
from ..ir.types import (
    BOTTOM,
    INT,
    NONE,
    SLICE,
    Arr,
    Dct,
    Float,
    Lst,
    Tup,
    VType,
    activated,
    arr,
    dct,
    describe,
    element,
    is_active,
    is_number,
    item_join,
    join,
    join_all,
    tangent_of,
)
from ..runtime import array_cotangents
from ..runtime import reductions as reductions_runtime
from ..runtime import sequences as runtime
from ..runtime import tangents as tangents_runtime
from ..runtime import writes as writes
from ..target.expressions import Attr, BinOp, CallX, call
from .kinds import BOOL_RESULT, INDICES, INT_RESULT, NONE_RESULT, UNKNOWN, opaque
from .registry import METHODS, PRIMITIVES, REALS, ZERO, Primitive, function
from .tangents import ALL, Term, apply, index, linear, zero_of

# ---------------------------------------------------------------- kind rules of this family


def sum_builtin_kind(types: list[VType], consts: list[object]) -> VType:
    """`sum(xs[, start])`: the sum of the elements (an array's rows for a 2-D array)."""
    xs = types[0]
    t = item_join(xs)
    if len(types) > 1:
        t = join(t, types[1])
    if t is BOTTOM:
        return INT
    if not (is_number(t) or isinstance(t, Arr) or opaque(t)):
        raise ChadTypeError(f"sum over {describe(t)} elements is not supported")
    if is_number(t) and not isinstance(t, Float) and len(types) == 1:
        return INT
    return t


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
    if isinstance(x, Arr):
        return Lst(element(x))  # its rows
    return x if isinstance(x, Lst) else Lst(item_join(x))


def _iterated(t: VType) -> VType:
    """The type of what a `for` loop over a value of type t yields (a dict's keys)."""
    return t.key if isinstance(t, Dct) else item_join(t)


def _extend_type(types: list[VType], consts: list[object]) -> VType:
    xs, ys = types
    return join(xs, Lst(_iterated(ys)))


def _insert_type(types: list[VType], consts: list[object]) -> VType:
    xs, i, v = types
    return join(xs, Lst(v))


def _a_dict(t: VType, method: str) -> Dct:
    if not isinstance(t, Dct):
        raise ChadTypeError(f"`.{method}()` of {describe(t)} is not supported (a dict's method)")
    return t


def _with_key(d: Dct, key: object, k: VType, v: VType) -> VType:
    """The type of dict d after `d[key] = v` (`key`: the key's value if it is a constant, else UNKNOWN)."""
    if d.fields is not None and key is not UNKNOWN:
        fields = dict(d.fields)
        fields[key] = join(fields[key], v) if key in fields else v
        return dct(list(fields.values()), list(fields))
    return dct([item_join(d), v], key=join(d.key, k))


def _store_type(types: list[VType], consts: list[object]) -> VType:
    d, k, v = types[:3]
    return _with_key(_a_dict(d, "setdefault"), consts[1], k, v)


def _setitem_type(types: list[VType], consts: list[object]) -> VType:
    """`x[k] = v`: an array keeps its kind (an active value makes a float array active), a list's
    elements join v's type, a dict gains the key."""
    x, k, v = types[:3]
    if isinstance(x, Arr):
        return arr(x.rank, x.dtype, x.active or is_active(v))
    if isinstance(x, Lst):
        if k == SLICE or isinstance(k, (Tup, Lst, Arr)):
            raise ChadTypeError("assigning to a slice of a list is not supported (it may change the list's length)")
        return Lst(join(x.item, v))
    if isinstance(x, Dct):
        return _store_type(types, consts)
    raise ChadTypeError(f"assigning to an element of {describe(x)} is not supported")


def _setitem_in_type(types: list[VType], consts: list[object]) -> VType:
    """`x[t][k] = v`: x's element at t updated as `_setitem_type` says (an array keeps its kind)."""
    x, t, k, v = types[:4]
    if isinstance(x, Arr):
        return arr(x.rank, x.dtype, x.active or is_active(v))
    if isinstance(x, Lst) and t != SLICE and not isinstance(t, (Tup, Lst, Arr)):
        if x.item is BOTTOM:  # its elements' kind not known yet (a callee's result, in an early round)
            return BOTTOM
        return Lst(join(x.item, _setitem_type([x.item, k, v], consts[1:])))
    if isinstance(x, Dct):
        item = x.field(consts[1]) if consts[1] is not UNKNOWN else item_join(x)
        if item is BOTTOM:
            return BOTTOM
        return _with_key(x, consts[1], t, _setitem_type([item, k, v], consts[1:]))
    raise ChadTypeError(f"assigning to an element's element of {describe(x)} is not supported")


def _view_type(types: list[VType], consts: list[object]) -> VType:
    """`written_back(base, view, ...)` and `viewed_again(view, base, ...)`: the first one's type, an
    array made active by the other's derivatives."""
    first, other = types[:2]
    if isinstance(first, Arr):
        return arr(first.rank, first.dtype, first.active or is_active(other))
    return first


def _pop_type(types: list[VType], consts: list[object]) -> VType:
    xs, key = types[0], consts[1]
    if isinstance(xs, Lst):
        return xs
    d = _a_dict(xs, "pop")
    if d.fields is not None and key is not UNKNOWN:
        return dct([t for k, t in d.fields if k != key], [k for k, _ in d.fields if k != key])
    return d


def _get_type(types: list[VType], consts: list[object]) -> VType:
    d, _, default = types
    if not isinstance(d, Dct):  # another object's `.get`: data, if nothing flows through it
        if any(map(is_active, types)):
            raise ChadTypeError(f"`.get()` of {describe(d)} that carries derivatives is not supported")
        return d
    key = consts[1]
    if d.fields is not None and key is not UNKNOWN:
        present = [t for k, t in d.fields if k == key]
        return present[0] if present else default
    return join(item_join(d), default)


def _item_or_type(types: list[VType], consts: list[object]) -> VType:
    xs, _, default = types
    j = consts[1]
    if isinstance(xs, Tup):
        return xs.items[j] if j < len(xs.items) else default
    return join(item_join(xs), default)


def _dict_of_type(types: list[VType], consts: list[object]) -> VType:
    x = types[0]
    if isinstance(x, Dct):
        return x
    pairs = x.items if isinstance(x, Tup) else (x.item,) if isinstance(x, Lst) else None
    if pairs is None or not all(p is BOTTOM or isinstance(p, Tup) and len(p.items) == 2 for p in pairs):
        raise ChadTypeError(f"`dict(...)` of {describe(x)} is not supported: give a dict or (key, value) pairs")
    pairs = [p for p in pairs if p is not BOTTOM]  # an empty list's
    return dct([p.items[1] for p in pairs], key=join_all([p.items[0] for p in pairs]))


def _transposed_type(types: list[VType], consts: list[object]) -> VType:
    rows = types[0]
    if isinstance(rows, Tup) and all(isinstance(r, Tup) for r in rows.items):
        n = min((len(r.items) for r in rows.items), default=0)  # zip stops at the shortest row
        return Tup(tuple(Tup(tuple(r.items[j] for r in rows.items)) for j in range(n)))
    return Lst(Lst(item_join(item_join(rows))))


def _tuple_type(types: list[VType], consts: list[object]) -> VType:
    """`tuple(x)`: a tuple's type; of a list (or a dict's keys), a list's: its length is not static."""
    return types[0] if isinstance(types[0], Tup) else _copy_type(types, consts)


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
    lambda xs, v, *log: call(writes.append, xs, v, *log),
    lambda d, y, xs, v, saved: call(runtime.append_ct, d, saved),
    (2, 2),
    _append_type,
    saves=lambda y, xs, v: call(len, y) - 1,
    containers=True,  # the new element's position (later appends keep it)
    jvp=linear(0, 1),
    resizes=True,
)
# The other in-place updates (`updates.py` lowers them; `ownership` checks them). Each returns the changed
# container; a rule that needs where its element went saves it after the update.
LIST_EXTEND = Primitive(
    "extend",
    lambda xs, ys, *log: call(writes.extend, xs, ys, *log),
    lambda d, y, xs, ys, saved: call(runtime.concat_ct, d, saved),
    (2, 2),
    _extend_type,
    saves=lambda y, xs, ys: call(len, y) - call(len, ys),  # `updates` never passes xs as ys
    containers=True,
    jvp=linear(0, 1),
    resizes=True,
)
LIST_INSERT = Primitive(
    "insert",
    lambda xs, i, v: call(runtime.list_insert, xs, i, v),
    lambda d, y, xs, i, v, saved: call(runtime.insert_ct, d, saved),
    (3, 3),
    _insert_type,
    saves=lambda y, xs, i, v: call(runtime.inserted_position, y, i),
    containers=True,
    jvp=linear(0, 2),
    resizes=True,
)
POP = Primitive(
    "pop",
    lambda xs, i, *log: call(writes.popped, xs, i, *log),
    lambda d, y, xs, i, saved: [call(runtime.pop_ct, d, saved), None],
    (2, 2),
    _pop_type,
    saves=lambda y, xs, i: call(runtime.popped_position, y, i),
    containers=True,
    logged=True,
    jvp=linear(0),
    resizes=True,
)
DICT_STORE = Primitive(
    "store",
    lambda dct, k, v: call(writes.store, dct, k, v),
    lambda d, y, dct, k, v: call(runtime.store_ct, d, k),
    (3, 3),
    _store_type,
    containers=True,
    jvp=linear(0, 2),
)
# `x[k] = v` written by the user (`assignments.py`): in place on an array, list or dict, logged (`runtime/writes.py`)
STORE = Primitive(
    "setitem",
    lambda x, k, v, *log: call(writes.store, x, k, v, *log),
    lambda d, y, x, k, v, saved: call(writes.store_ct, d, y, saved, v),
    (3, 3),
    _setitem_type,
    saves=lambda y, x, k, v: call(writes.write_position, y, k),  # a list's index, made non-negative
    containers=True,
    logged=True,
    jvp=linear(0, 2),
)
# `x[t][k] = v` (`assignments.py`): x's element at t updated in place (`ownership` checks that nothing else holds it)
STORE_IN = Primitive(
    "setitem_in",
    lambda x, t, k, v, *log: call(writes.store_in, x, t, k, v, *log),
    lambda d, y, x, t, k, v, saved: call(writes.store_in_ct, d, y, saved, v),
    (4, 4),
    _setitem_in_type,
    saves=lambda y, x, t, k, v: call(writes.positions_in, y, t, k),
    containers=True,
    logged=True,
    jvp=lambda ts, y, x, t, k, v: Term(
        STORE_IN, [apply(FILLED_AT, ts[0] if ts[0] is not None else zero_of(x), x, t), t, k, ts[3] or zero_of(v)]
    ),
)


def _filled_at_type(types: list[VType], consts: list[object]) -> VType:
    """dx with its part at `key` a tangent of x's part there: the part dx has (a derivative may flow through it,
    differentiated again), or zeros of that tangent's type where dx has None."""
    dx, x = types[:2]
    key = consts[2]
    if isinstance(dx, Dct) and isinstance(x, Dct) and dx.fields is not None and key is not UNKNOWN:
        part = tangent_of(activated(x.field(key)))
        return dct([join(t, part) if k == key else t for k, t in dx.fields], [k for k, _ in dx.fields])
    if isinstance(dx, Tup) and isinstance(x, Tup) and isinstance(key, int):
        items = list(dx.items)
        items[key] = join(items[key], tangent_of(activated(x.items[key])))
        return Tup(tuple(items), dx.cls)
    return dx


# a container's tangent given zeros where a part had none, before `x[t][k] = v` writes a derivative into that part
FILLED_AT = Primitive(
    "filled_at",
    lambda dx, x, key: call(tangents_runtime.filled_at, dx, x, key),
    lambda d, y, dx, x, key: [d, ZERO, None],
    (3, 3),
    _filled_at_type,
    containers=True,
    jvp=linear(0),
)
DICT_SETDEFAULT = Primitive(
    "setdefault",
    lambda dct, k, v, absent: call(runtime.dict_setdefault, dct, k, v, absent),
    lambda d, y, dct, k, v, absent: call(runtime.setdefault_ct, d, k, absent),
    (4, 4),
    _store_type,
    containers=True,
    jvp=linear(0, 2),
)
# the user's `xs.append(v)`, `xs.extend(ys)`: logged, as a rule may read the list before it grew (a comprehension
# builds its list with the unlogged LIST_APPEND: nothing reads it before it is made)
APPEND = dataclasses.replace(LIST_APPEND, logged=True)
EXTEND = dataclasses.replace(LIST_EXTEND, logged=True)
# `x.__updated_by__(t)` (`copies.py`): x after `t op= c` updated x's object: that object, changed, if Python
# updates it in place (a list, dict or array: `in_place`), else x as it was (a number, a tuple)
AFTER_UPDATE = Primitive(
    "unchanged",
    lambda x, t: x,
    lambda d, y, x, t: [d, ZERO],
    (2, 2),
    lambda types, consts: types[0],
    containers=True,
    in_place=Primitive(
        "updated",
        lambda x, t: t,
        lambda d, y, x, t: [ZERO, d],
        (2, 2),
        lambda ts, consts: ts[1],
        containers=True,
    ),
    jvp=linear(0, 1),
)


def _updated_jvp(ts: list, y: Term, x: Term, t: Term) -> Term:
    """x updated in place by `t op= c` is t's object, and its tangent t's: the same object, written as the update
    of the tangents (`dx.__updated_by__(dt)`, which `ownership` follows as the copy it is); dx, the version of x's
    tangent that missed the update, is read no more."""
    dt = ts[1] if ts[1] is not None else zero_of(t)
    return Term(AFTER_UPDATE, [dt, dt])


AFTER_UPDATE.in_place.jvp = _updated_jvp
# `views.py`: `base.__written_back__(view, how, key)` after writes through a view of base (`row = A[i]; row[0] = v`),
# and `view.__viewed_again__(base, how, key)` after writes to base or another view of it: the derivatives of
# `base[key] = view` and `view = base[key]` (`how`: "index", "T" or "reshape"), or none where NumPy made a copy
# (`runtime.writes.is_view`); in the forward pass NumPy shared the writes already
WRITTEN_BACK = Primitive(
    "written_back",
    lambda base, view, how, key, *log: call(writes.written_back, base, view, how, key, *log),
    lambda d, y, base, view, how, key: call(writes.written_back_ct, d, base, view, how, key),
    (4, 4),
    _view_type,
    containers=True,
    logged=True,  # where `a op= b` made the view a new array, it is copied into the base
    jvp=linear(0, 1, zeros_like_result=(0,)),  # the base's version that missed the writes, read no more
)
VIEWED_AGAIN = Primitive(
    "viewed_again",
    lambda view, base, how, key: call(writes.viewed_again, view, base, how, key),
    lambda d, y, view, base, how, key: call(writes.viewed_again_ct, d, view, base, how, key),
    (4, 4),
    _view_type,
    containers=True,
    aliases="view",  # of its base (`ownership` knows)
    jvp=linear(0, 1, zeros_like_result=(0,)),  # the view's version that missed the writes, read no more
)
UPDATES = {LIST_APPEND, LIST_EXTEND, LIST_INSERT, POP, DICT_STORE, DICT_SETDEFAULT, STORE, STORE_IN, APPEND, EXTEND}
MOVES_ELEMENTS = {LIST_INSERT, POP}  # after these an element's position is not what it was
DICT_GET = Primitive(
    "get",
    lambda dct, k, default: CallX(Attr(dct, "get"), [k, default]),
    lambda d, y, dct, k, default, saved: call(runtime.get_ct, d, k, saved),
    (3, 3),
    _get_type,
    saves=lambda y, dct, k, default: k.compare("in", dct),
    containers=True,
    params=("self", "key", "default"),
    defaults=(None,),
    fn=dict.get,
    jvp=linear(0, 2),
)
ITEM_OR = Primitive(
    "item_or",
    lambda xs, j, default: call(runtime.item_or, xs, j, default),
    lambda d, y, xs, j, default, saved: call(runtime.get_ct, d, j, saved),
    (3, 3),
    _item_or_type,
    saves=lambda y, xs, j, default: j.compare("<", call(len, xs)),
    containers=True,
    jvp=linear(0, 2),
)


def _dict_of_jvp(ts: list, y: Term, x: Term) -> Term:
    """`dict(pairs)`'s tangent: the pairs' tangent values under the pairs' own keys (a pair's key has no tangent)."""
    return Term(DICT_OF, [ts[0] if isinstance(x.type, Dct) else apply(REKEYED, x, ts[0])])


def _rekeyed_type(types: list[VType], consts: list[object]) -> VType:
    pairs, dpairs = types
    keys = pairs.items if isinstance(pairs, Tup) else (pairs.item,) if isinstance(pairs, Lst) else ()
    values = dpairs.items if isinstance(dpairs, Tup) else (dpairs.item,) if isinstance(dpairs, Lst) else ()
    made = [Tup((k.items[0], v.items[1])) for k, v in zip(keys, values) if isinstance(k, Tup) and isinstance(v, Tup)]
    return Tup(tuple(made)) if isinstance(pairs, Tup) else Lst(made[0] if made else BOTTOM)


# the (key, value) pairs' tangents with the pairs' keys in place of theirs: what `dict(pairs)`'s tangent is made of
REKEYED = Primitive(
    "rekeyed",
    lambda pairs, dpairs: call(runtime.rekeyed, pairs, dpairs),
    lambda d, y, pairs, dpairs: [ZERO, d],  # the keys come from pairs; a pair value's cotangent is where it was
    (2, 2),
    _rekeyed_type,
    containers=True,
)
REKEYED.jvp = linear(1)
DICT_OF = Primitive(
    "dict",
    lambda x: call(dict, x),
    lambda d, y, x, saved: [call(runtime.dict_of_ct, d, saved)],
    (1, 1),
    _dict_of_type,
    saves=lambda y, x: call(runtime.pair_positions, x),
    containers=True,
    jvp=_dict_of_jvp,
)


def _merged_type(types: list[VType], consts: list[object]) -> VType:
    """`{**a, **b}` of a call's keyword dicts: each key's type where every dict's keys are known."""
    if not all(isinstance(t, Dct) for t in types):
        raise ChadTypeError("`**` spreads a dict of keywords")
    if all(t.fields is not None for t in types):
        fields = [f for t in types for f in t.fields]
        return dct([v for _, v in fields], [k for k, _ in fields])
    return dct([item_join(t) for t in types], key=join_all([t.key for t in types]))


# `f(**a, **b)`: the keywords merged into one dict (a key given twice raises, as in Python)
MERGED_KEYWORDS = Primitive(
    "merged_keywords",
    lambda *kws: call(runtime.merged_keywords, *kws),
    lambda d, y, *kws: call(runtime.merged_keywords_ct, d, *kws),
    (2, None),
    _merged_type,
    containers=True,
    jvp=linear(*ALL),
)
TRANSPOSED = Primitive(
    "transposed",
    lambda rows: call(runtime.transposed, rows),
    lambda d, y, rows: [call(runtime.transposed_ct, d)],
    (1, 1),
    _transposed_type,
    containers=True,
    jvp=linear(0),
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
    jvp=linear(0, 1),
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
    jvp=lambda ts, y, a, b: Term(REPEAT, [ts[0], b] if ts[0] is not None else [a, ts[1]]),
)
SUM_SEQ = Primitive(
    "sum",
    lambda *a: call(builtins.sum, *a),
    lambda d, y, xs, start=None, saved=None: [call(reductions_runtime.sum_seq_ct, d, xs, saved), d],
    (1, 2),
    sum_builtin_kind,
    saves=lambda y, xs, start=None: call(len, xs),
    containers=True,
    samples=((_LIST,), (_LIST, REALS)),
    jvp=linear(0, 1),
)


def _extreme_seq_jvp(largest: bool) -> object:
    """`max(xs)`'s tangent: the tangent of the element Python returns (the first best)."""
    return lambda ts, y, xs: index(ts[0], apply(ARGBEST, xs, largest))


def _extreme_seq(fn: object) -> Primitive:
    return Primitive(
        fn.__name__,
        lambda xs: call(fn, xs),
        lambda d, y, xs: [call(reductions_runtime.extreme_seq_ct, d, y, xs)],
        (1, 1),
        _element_type,
        containers=True,
        aliases="argument",
        samples=((_LIST,),),
        jvp=_extreme_seq_jvp(fn is max),
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
    jvp=linear(0),
)
# `list(x)` of an array: its rows, whose cotangents {position: ...} are x's
LIST_COPY.for_arrays = dataclasses.replace(
    LIST_COPY,
    vjp=lambda d, y, x: [call(array_cotangents.rows_ct, d, x)],
    samples=((REALS.of(3),), (REALS.of(2, 3),)),
)
TUPLE_COPY = Primitive(
    "tuple",
    lambda x: call(tuple, x),
    lambda d, y, x: [call(runtime.list_ct, d, x)],
    (1, 1),
    _tuple_type,
    containers=True,
    jvp=linear(0),
)
DICT_VALUES = Primitive(
    "values",
    lambda dct: call(runtime.dict_values, dct),
    lambda d, y, dct, saved: [call(runtime.values_ct, d, saved)],
    (1, 1),
    _values_type,
    saves=lambda y, dct: call(list, dct),
    containers=True,
    jvp=linear(0),
)
DICT_KEYS = function(list, None, kind=_keys_type, name="keys", containers=True)
POSITIONS = function(runtime.positions, None, kind=_keys_type, containers=True)  # what a `for` loop counts
ARGSORT = function(runtime.argsort, None, (2, 2), kind=INDICES, containers=True)  # `sorted(xs, key=...)`'s order
# `f(*xs, **kw)` of a function chadpy reads: raises Python's TypeError where the call does not bind
CALL_BINDS = function(runtime.call_binds, None, (5, None), kind=NONE_RESULT)


def _unpacks_type(types: list[VType], consts: list[object]) -> VType:
    if isinstance(types[0], Dct):
        raise ChadTypeError("a starred target (`a, *b = d`) unpacking a dict's keys is not supported: use `list(d)`")
    return NONE


UNPACKS = function(runtime.unpacks, None, (2, 2), kind=_unpacks_type)  # `a, *b = xs`'s check of xs's length


def _without_keys_type(types: list[VType], consts: list[object]) -> VType:
    d, names = types[0], consts[1]
    if not isinstance(d, Dct):
        raise ChadTypeError(f"`**` spreads a dict of keywords, not {describe(d)}")
    if d.fields is None:
        return d
    kept = [(k, t) for k, t in d.fields if k not in names]
    return dct([t for _, t in kept], [k for k, _ in kept])


# The keywords of `f(**kw)` left for f's `**kwargs`: kw without f's named parameters (a cotangent of the
# result is one of kw: its keys are kw's)
WITHOUT_KEYS = Primitive(
    "without_keys",
    lambda d, names: call(runtime.without_keys, d, names),
    lambda ct, y, d, names: [ct, None],
    (2, 2),
    _without_keys_type,
    containers=True,
    jvp=linear(0),
)
ARGBEST = function(runtime.argbest, None, (2, 2), kind=INT_RESULT)  # `max(xs, key=...)`'s position

PRIMITIVES.update(
    {
        runtime.dict_values: DICT_VALUES,
        dict.get: DICT_GET,
        builtins.tuple: TUPLE_COPY,
        builtins.any: function(builtins.any, None, kind=BOOL_RESULT),
        builtins.all: function(builtins.all, None, kind=BOOL_RESULT),
    }
)
METHODS.update({"values": runtime.dict_values, "keys": list, "get": dict.get})  # `d.values()`, `d.keys()`, `d.get(k)`

# Functions a call lowers into a loop (the paper's fold), not a primitive.
REDUCE = functools.reduce
