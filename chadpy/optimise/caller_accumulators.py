"""A callee's backpropagator adds into its caller's cotangent: `p = g_bp(saved, d); v = add(v, p)` becomes
`v = g_bp(saved, d, v)`, and `g_bp` starts the cotangent it returns from the one it is given.

Without it, each call of a recursion (a determinant by minors: 8,660 calls) made its environment's
cotangent afresh, a one-hot and a dict around it, and its caller merged that into its own: the objects
and the merges cost more than the additions they carried. Cotangents are used affinely (the caller gives
`v` up: the call rebinds it), so the callee may add into it in place, as `add` would.

Component k of a backpropagator's returned tuple takes its caller's cotangent (a parameter `into_k`)
when it is
- an accumulator: a name set to zero at the top of the body, after that only added to (`a = add(a, e)`,
  `a += e`, `a = add_index(a, ...)`: `facts.adds_into`, `facts.collects`) and returned; it then starts
  as `into_k`; or
- a dict of accumulators set once (`denv = {0: a}`, a closure's environment): each starts at its entry
  of `into_k` (`tuple_part`), and the dict is `into_k` with them in place (`with_parts`).

Every call of such a backpropagator passes `into_k`: the caller's cotangent where the call's part is added
to it next, with nothing between reading it; Zero elsewhere. The entry's backpropagator, which the API
calls, is left as it is.
"""

from __future__ import annotations

from ..runtime.cotangents import Zero, add, tuple_part, with_parts
from ..runtime.facts import ADDS_INTO, COLLECTED_BY
from ..target.expressions import CallX, DictX, Expr, Name, Obj, TupleX, call, is_call_of, is_zero
from ..target.statements import (
    Accum,
    Assign,
    Def,
    Return,
    Stmt,
    expr_names,
    iter_exprs,
    mentioned,
    names_in,
    nested,
    replace,
    walk,
)


def accumulate_into_callers(defs: list[Def], backpropagators: set[str]) -> list[Def]:
    """The module's functions, each of the `backpropagators` (the entry's left out: the API calls it) whose
    returned parts qualify taking its callers' cotangents."""
    if not backpropagators:  # the entry calls no function of its own: nothing to do, and no walk to pay for
        return defs
    called = _called_by_statements(defs)
    starts = {}
    for d in defs:
        if d.name in backpropagators and d.name in called and (parts := _accumulated(d)):
            starts[d.name] = (len(d.body[-1].value.items), parts)
    # only the parts some call adds into its caller's cotangent: the others would start from Zero every time
    accumulating: set[tuple[str, int]] = set()
    for d in defs:
        _calls_passing(d.body, starts, _mention_counts(d), accumulating)
    starts = {
        name: (count, kept)
        for name, (count, parts) in starts.items()
        if (kept := {k: p for k, p in parts.items() if (name, k) in accumulating})
    }
    if not starts:
        return defs
    out = []
    for d in defs:
        if d.name in starts:
            d = _started_from_callers(d, starts[d.name][1])
        out.append(replace(d, body=_calls_passing(d.body, starts, _mention_counts(d))))
    return out


# ---------------------------------------------------------------- which parts a backpropagator accumulates

Parts = dict[int, tuple[str, bool]]  # component -> (the name returned, whether it is a dict of accumulators)


def _accumulated(d: Def) -> Parts:
    """The components of d's returned tuple that qualify."""
    last = d.body[-1] if d.body else None
    if not (isinstance(last, Return) and isinstance(last.value, TupleX)):
        return {}
    if any(isinstance(s, Return) for s in walk(d.body[:-1])):
        return {}
    returned = last.value.items
    names = [e.id for e in returned if isinstance(e, Name)]
    out = {}
    for k, e in enumerate(returned):
        if not isinstance(e, Name) or names.count(e.id) != 1:
            continue
        made = _set_once(d.body, e.id)
        if made is not None and isinstance(made.value, DictX) and _dict_of_accumulators(d.body, made, last):
            out[k] = (e.id, True)
        elif _accumulator(d.body, e.id, made, [last]):
            out[k] = (e.id, False)
    return out


def _dict_of_accumulators(body: list[Stmt], made: Assign, last: Return) -> bool:
    """`denv = {key: a, ...}` at the top of the body, read only by the return, each `a` an accumulator read nowhere
    else and not added to after it."""
    name, values = made.targets[0], made.value.values
    ids = [v.id for v in values if isinstance(v, Name)]
    if len(ids) != len(values) or len(set(ids)) != len(ids):
        return False
    if any(name in _own_mentions(s) for s in walk(body) if s is not made and s is not last):
        return False
    after = body[body.index(made) + 1 :]
    if any(a in mentioned(s) for s in after for a in ids):
        return False
    return all(_accumulator(body, a, _set_once(body, a), [made]) for a in ids)


def _set_once(body: list[Stmt], name: str) -> Assign | None:
    """The top-level statement `name = e` that first mentions `name`, if the first that does is one."""
    for s in body:
        if name in mentioned(s):
            ok = isinstance(s, Assign) and s.targets == [name] and name not in expr_names(s)
            return s if ok else None
    return None


def _accumulator(body: list[Stmt], name: str, made: Assign | None, users: list[Stmt]) -> bool:
    """Whether `name` is set to zero by `made`, then only added to, and read otherwise only by `users` (one set to a
    value first would add the caller's cotangent to it, as the caller did: nothing gained)."""
    if made is None or not is_zero(made.value):
        return False
    for s in walk(body):
        if s is made or s in users or name not in _own_mentions(s):
            continue
        if not _adds_to(s, name):
            return False
    return True


def _adds_to(s: Stmt, name: str) -> bool:
    """`name = f(name, e...)` for an addition f, or `name += e`, with `name` nowhere in the e's."""
    if isinstance(s, Accum):
        return s.name == name and name not in names_in(s.value)
    if not (isinstance(s, Assign) and s.targets == [name] and isinstance(s.value, CallX) and s.value.args):
        return False
    fn = s.value.func.obj if isinstance(s.value.func, Obj) else None
    first, *rest = s.value.args
    return (
        any(fn is f for f in (add, *ADDS_INTO, *COLLECTED_BY.values()))
        and isinstance(first, Name)
        and first.id == name
        and not s.value.keywords
        and all(name not in names_in(e) for e in rest)
    )


def _started_from_callers(d: Def, parts: Parts) -> Def:
    """`d` with a parameter `into_k` per accumulated component k, each accumulator started from it."""
    body = list(d.body)
    at = {id(s): k for k, s in enumerate(body)}
    for k, (name, is_dict) in parts.items():
        into = Name(f"into_{k}")
        made = _set_once(d.body, name)
        if is_dict:
            for key, a in zip(made.value.keys, made.value.values):
                start = _set_once(d.body, a.id)
                body[at[id(start)]] = replace(start, value=call(tuple_part, into, key, _ZERO))
            body[at[id(made)]] = replace(made, value=call(with_parts, into, made.value))
        else:
            body[at[id(made)]] = replace(made, value=into)
    return replace(d, params=[*d.params, *(f"into_{k}" for k in parts)], body=body)


_ZERO = Obj(Zero, "Zero")


# ---------------------------------------------------------------- the calls


def _called_by_statements(defs: list[Def]) -> set[str]:
    """The module's functions whose every use is a statement `targets = f(saved, d)`."""
    names = {d.name for d in defs}
    uses: dict[str, int] = {}
    calls: dict[str, int] = {}
    for d in defs:
        for e in iter_exprs(d.body):
            if isinstance(e, Name) and e.id in names:
                uses[e.id] = uses.get(e.id, 0) + 1
        for s in walk(d.body):
            if _call_statement(s) is not None:
                calls[s.value.func.id] = calls.get(s.value.func.id, 0) + 1
    return {n for n, k in calls.items() if uses.get(n) == k}


def _call_statement(s: Stmt) -> str | None:
    """f if s is `targets = f(saved, d)` for a function f of the module (a name)."""
    if isinstance(s, Assign) and isinstance(s.value, CallX) and isinstance(s.value.func, Name):
        if len(s.value.args) == 2 and not s.value.keywords:
            return s.value.func.id
    return None


def _calls_passing(
    body: list[Stmt],
    starts: dict[str, tuple[int, Parts]],
    counts: dict[str, int],
    accumulating: set[tuple[str, int]] | None = None,
) -> list[Stmt]:
    """Each call of a backpropagator in `starts` given its `into_k`s: the caller's cotangent its part is added into
    next (that addition dropped), else Zero; the (callee, k) of the first kind go into `accumulating`."""
    out: list[Stmt] = []
    dropped: set[int] = set()
    for k, s in enumerate(body):
        if k in dropped:
            continue
        callee = _call_statement(s)
        if callee not in starts:
            out.append(nested(s, lambda b: _calls_passing(b, starts, counts, accumulating)))
            continue
        count, parts = starts[callee]
        targets = list(s.targets)
        into: list[Expr] = []
        for part in parts:
            name = targets[part] if len(targets) == count else "_"
            added = _added_next(body, k, name) if counts.get(name) == 2 else None  # the call and the addition
            if added is None:
                into.append(_ZERO)
                continue
            j, v = added
            if accumulating is not None:
                accumulating.add((callee, part))
            dropped.add(j)
            targets[part] = v
            into.append(Name(v))
        out.append(replace(s, targets=targets, value=CallX(s.value.func, [*s.value.args, *into])))
    return out


def _added_next(body: list[Stmt], k: int, part: str) -> tuple[int, str] | None:
    """(j, v) if statement j after k is `v = add(v, part)` or `v += part`, and nothing between mentions v or part."""
    for j in range(k + 1, len(body)):
        v = _addition_of(body[j], part)
        if v is not None:
            return None if any(v in mentioned(t) for t in body[k + 1 : j]) else (j, v)
        if part in mentioned(body[j]):
            return None
    return None


def _mention_counts(d: Def) -> dict[str, int]:
    """How many statements of d (nested ones each on their own) mention each name."""
    counts: dict[str, int] = {}
    for s in walk(d.body):
        for n in _own_mentions(s):
            counts[n] = counts.get(n, 0) + 1
    return counts


def _addition_of(s: Stmt, part: str) -> str | None:
    """v if s is `v = add(v, part)` or `v += part` (v not part)."""
    if isinstance(s, Accum) and isinstance(s.value, Name) and s.value.id == part and s.name != part:
        return s.name
    if not (isinstance(s, Assign) and len(s.targets) == 1 and is_call_of(s.value, add) and len(s.value.args) == 2):
        return None
    v, (first, second) = s.targets[0], s.value.args
    ok = isinstance(first, Name) and first.id == v and isinstance(second, Name) and second.id == part and v != part
    return v if ok else None


# ---------------------------------------------------------------- names


def _own_mentions(s: Stmt) -> set[str]:
    """The names s itself reads or binds (not the statements nested in it)."""
    return {x.id for x in iter_exprs(s.exprs()) if isinstance(x, Name)} | set(s.reads()) | set(s.binds())
