"""A loop's one-hots collected in two lists, added by one call after the loop.

In a loop, `dx = add_index(dx, v, x, i)` (a one-hot `x[i]`) and `dxs = add_at(dxs, k, v)` (an
element of a list, tuple or dict) are a Python call per iteration, each with its checks. When a
loop only ever adds to `dx` this way (it reads `dx` nowhere else and assigns it nothing else, and
`x` is the same array throughout), the loop appends the place and the value to two lists instead,
and one call after the loop adds them all, in the same order:

    dx_at, dx_values = [], []
    for i in indices:
        ...
        dx_at.append(i)
        dx_values.append(ditem)
    dx = add_columns(dx, x, dx_at, dx_values)

(`array_cotangents.add_columns`: a float64 vector's float one-hots at int places become a Scatter's columns
as they are; `cotangents.add_items`: a dict of the values when every key comes once.) Each iteration
does O(1) work, and the call after the loop O(its items): the cost bound holds. The outermost loop
that qualifies takes the whole nest: its inner loops append to the same lists. Where the places are
the loop's own counter, appended once per iteration (`for i in indices: ... dx_at.append(i)`), the
call is given `indices` itself and the list of places goes (`_counted_places`).
"""

from __future__ import annotations

from ..names import NameSupply
from ..runtime import array_cotangents, sequences
from ..runtime.facts import COLLECTED_BY
from ..target.expressions import Attr, CallX, ListX, Name, Obj, TupleX, is_call_of
from ..target.statements import (
    Assign,
    Break,
    Def,
    Do,
    For,
    Replay,
    Stmt,
    While,
    expr_names,
    local_names,
    mentioned,
    names_in,
    walk,
)


def collect(fn: Def) -> Def:
    """fn with each loop's one-hots to a cotangent it only adds to collected in two lists."""
    if any(isinstance(s, (For, While, Replay)) for s in walk([fn])):
        _in_block(fn.body, NameSupply(local_names([fn]) | expr_names([fn])))
    return fn


def _in_block(stmts: list[Stmt], names: NameSupply) -> None:
    at = 0
    while at < len(stmts):
        s = stmts[at]
        before: list[Stmt] = []
        after: list[Stmt] = []
        if isinstance(s, (For, While, Replay)):
            for v, (adder, array) in _collectable(s).items():
                places, values = names.fresh(f"{v}_at"), names.fresh(f"{v}_values")
                _to_appends(s.body, v, places, values)
                counted = _counted_places(s, places, stmts)
                why = f"the loop's additions to {v}, collected"
                if counted is None:
                    before.append(Assign([places, values], TupleX([ListX([]), ListX([])]), comment=why, loc=s.loc))
                else:  # the places are what the loop counts: the values alone
                    why += " (at the places the loop counts)"
                    before.append(Assign([values], ListX([]), comment=why, loc=s.loc))
                where = Name(places) if counted is None else counted
                args = [Name(v), *([array] if array is not None else []), where, Name(values)]
                collected = COLLECTED_BY[adder]
                after.append(Assign([v], CallX(Obj(collected, collected.__name__), args), loc=s.loc))
        for body in s.bodies():  # inner loops (and the loops of a backpropagator) collect other names
            _in_block(body, names)
        stmts[at : at + 1] = [*before, s, *after]
        at += len(before) + 1 + len(after)


def _update(s: Stmt) -> tuple[str, object] | None:
    """(dx, the adder) of `dx = add_index(dx, ...)` or `dx = add_at(dx, ...)`."""
    if not (isinstance(s, Assign) and len(s.targets) == 1 and isinstance(s.value, CallX)):
        return None
    call = s.value
    adder = call.func.obj if isinstance(call.func, Obj) else None
    if adder not in COLLECTED_BY or not call.args or not isinstance(call.args[0], Name):
        return None
    return (s.targets[0], adder) if call.args[0].id == s.targets[0] else None


def _collectable(loop: Stmt) -> dict[str, tuple[object, Name | None]]:
    """The names `loop` only adds one-hots to (the adder, and add_index's array)."""
    updates: dict[str, list[Assign]] = {}
    other: set[str] = set(loop.binds()) | set(loop.reads()) | names_in(loop.exprs())
    bound: set[str] = set(loop.binds())

    def scan(stmts: list[Stmt]) -> None:
        for s in stmts:
            if isinstance(s, Def):  # another scope: any mention of a name keeps it as it is
                other.update(mentioned(s))
                bound.update(mentioned(s))
                continue
            bound.update(s.binds())
            update = _update(s)
            if update is not None:
                updates.setdefault(update[0], []).append(s)
                other.update(names_in(s.value.args[1:]))
                continue
            other.update(s.binds(), s.reads(), names_in(s.exprs()))
            for body in s.bodies():
                scan(body)

    scan(loop.bodies()[0])
    found: dict[str, tuple[object, Name | None]] = {}
    for v, assigns in updates.items():
        adders = {a.value.func.obj for a in assigns}
        if v in other or len(adders) != 1:
            continue
        adder = adders.pop()
        if adder is array_cotangents.add_index:  # add_index(dx, v, x, i): one array x, the same in every iteration
            arrays_ = {a.value.args[2].id if isinstance(a.value.args[2], Name) else None for a in assigns}
            array = arrays_.pop() if len(arrays_) == 1 else None
            if array is None or array in bound:
                continue
            found[v] = (adder, Name(array))
        else:
            found[v] = (adder, None)
    return found


def _counted_places(loop: Stmt, places: str, block: list[Stmt]) -> Name | None:
    """The positions `for i in indices` counts (`indices = range(...)` or `positions(xs)` in the loop's block), if
    each iteration appends its `i` to `places` once (`places.append(i)` directly in the body, the only append to
    it, with nothing assigning `i` or `indices` or leaving the loop early): then the places are `indices` itself,
    and the append goes. None otherwise."""
    if not (isinstance(loop, For) and isinstance(loop.iter, Name) and loop.target.isidentifier()):
        return None
    made = [s.value for s in block if isinstance(s, Assign) and s.targets == [loop.iter.id]]
    if not (len(made) == 1 and any(is_call_of(made[0], f) for f in (range, sequences.positions))):
        return None
    appends = [s for s in walk(loop.body) if _appends_to(s, places)]
    own = [s for s in loop.body if any(s is a for a in appends)]
    if len(appends) != 1 or len(own) != 1:
        return None
    (arg,) = own[0].value.args
    if not (isinstance(arg, Name) and arg.id == loop.target):
        return None
    inner = [s for s in walk(loop.body) if s is not own[0]]
    if any(isinstance(s, Break) for s in _this_loop(loop.body)) or any(
        loop.target in s.binds() or loop.iter.id in s.binds() for s in inner
    ):
        return None
    loop.body.remove(own[0])
    return loop.iter


def _appends_to(s: Stmt, places: str) -> bool:
    """`places.append(...)`."""
    f = s.value.func if isinstance(s, Do) and isinstance(s.value, CallX) else None
    return isinstance(f, Attr) and f.attr == "append" and isinstance(f.value, Name) and f.value.id == places


def _this_loop(stmts: list[Stmt]) -> list[Stmt]:
    """The statements of a loop's body outside the loops nested in it (where a `break` leaves this loop)."""
    out = []
    for s in stmts:
        out.append(s)
        if not isinstance(s, (For, While, Replay, Def)):
            for body in s.bodies():
                out += _this_loop(body)
    return out


def _to_appends(stmts: list[Stmt], v: str, places: str, values: str) -> None:
    """Each `v = add_index(v, d, x, i)` (`v = add_at(v, k, d)`) in stmts as two appends, of i and d."""
    at = 0
    while at < len(stmts):
        s = stmts[at]
        update = _update(s)
        if update is not None and update[0] == v:
            args = s.value.args
            place, value = (args[3], args[1]) if update[1] is array_cotangents.add_index else (args[1], args[2])
            stmts[at : at + 1] = [
                Do(CallX(Attr(Name(places), "append"), [place]), comment=s.comment, loc=s.loc),
                Do(CallX(Attr(Name(values), "append"), [value]), loc=s.loc),
            ]
            at += 2
            continue
        if not isinstance(s, Def):
            for body in s.bodies():
                _to_appends(body, v, places, values)
        at += 1
