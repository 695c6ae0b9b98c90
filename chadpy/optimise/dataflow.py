"""Dataflow clean-ups of the inlined backward pass: zeros added to, copies of copies, cotangents nobody
reads, and tape records nobody replays."""

from __future__ import annotations

import bisect
from collections import Counter

from ..target.expressions import CallX, Name, is_zero
from ..target.statements import (
    Accum,
    Assign,
    Def,
    Record,
    Replay,
    Stmt,
    count_statements,
    expr_names,
    iter_exprs,
    mentioned,
    names_in,
    nested,
    rename,
    walk,
)

# ------------------------------------------------------------------ 4. zeros


def propagate_zeros(stmts: list[Stmt]) -> list[Stmt]:
    out = [nested(s, propagate_zeros) for s in stmts]
    mentions: dict[str, list[int]] = {}  # name -> the statements mentioning it, in order
    for k, s in enumerate(out):
        for name in mentioned(s):
            mentions.setdefault(name, []).append(k)
    keep = [True] * len(out)
    for i, s in enumerate(out):
        if isinstance(s, Accum) and is_zero(s.value):  # `dx += 0` changes nothing
            keep[i] = False
        elif isinstance(s, Assign) and len(s.targets) == 1 and is_zero(s.value):
            v = s.targets[0]
            later = mentions[v]
            k = bisect.bisect_right(later, i)
            if k == len(later):  # never used again
                keep[i] = False
                continue
            nxt = out[later[k]]
            if isinstance(nxt, Accum) and nxt.name == v and v not in expr_names(nxt.value):
                out[later[k]] = Assign([v], nxt.value, comment=nxt.comment, loc=nxt.loc)
                keep[i] = False
    return [s for s, k in zip(out, keep) if k]


# ------------------------------------------------------------------ 5. copies


def propagate_copies(stmts: list[Stmt], slots: frozenset[str] = frozenset()) -> list[Stmt]:
    """Drop `v = u` where both are assigned once and never accumulated into: read u for v (or,
    when v is a variable's cotangent (in `slots`) and u a temporary, call u's value v)."""
    assigned = Counter(t for s in walk(stmts) if isinstance(s, Assign) for t in s.targets)
    for s in walk(stmts):  # a replayed record is assigned once per iteration: never a fixed copy
        if isinstance(s, Replay):
            assigned.update(s.binds() + s.binds())
    accumulated = {s.name for s in walk(stmts) if isinstance(s, Accum)}
    fixed = {v for v, n in assigned.items() if n == 1 and v not in accumulated}
    mapping: dict[str, str] = {}
    copies: set[int] = set()  # the copies dropped
    for s in walk(stmts):
        if isinstance(s, Assign) and len(s.targets) == 1 and isinstance(s.value, Name):
            v, u = s.targets[0], s.value.id
            if v in fixed and u in fixed and v in slots and u not in slots and u not in mapping:
                mapping[u] = v
            elif v in fixed and (u in fixed or u not in assigned and u not in accumulated):
                mapping[v] = mapping.get(u, u)
            else:
                continue
            copies.add(id(s))
    if not mapping:
        return stmts
    for v in mapping:  # chains: v -> u -> w
        while mapping[v] in mapping:
            mapping[v] = mapping[mapping[v]]

    def drop(body: list[Stmt]) -> list[Stmt]:
        return [nested(s, drop) for s in body if id(s) not in copies]

    return rename(drop(stmts), mapping)


# ------------------------------------------------------------------ 6. dead code


def remove_dead_cotangents(stmts: list[Stmt]) -> list[Stmt]:
    while True:
        # names read by anything but their own accumulation
        read = names_in(stmts)
        new = _drop_unread(stmts, read)
        if count_statements(new) == count_statements(stmts):
            return new
        stmts = new


def _calls_no_backpropagator(e: object) -> bool:
    """No call of a backpropagator or pullback (those are the only calls with effects here)."""
    return not any(isinstance(x, CallX) and isinstance(x.func, Name) for x in iter_exprs(e))


def _drop_unread(stmts: list[Stmt], read: set[str]) -> list[Stmt]:
    out = []
    for s in stmts:
        if isinstance(s, Accum) and s.name not in read and _calls_no_backpropagator(s.value):
            continue
        if isinstance(s, Assign) and not (set(s.targets) & read) and _calls_no_backpropagator(s.value):
            continue
        out.append(nested(s, lambda b: _drop_unread(b, read)))
    return out


# ------------------------------------------------------------------ 8. tapes


def trim_tapes(fn: Def) -> Def:
    """Record only what each replay still reads (after the passes above removed code)."""
    keep: dict[str, list[str]] = {}
    for s in walk([fn]):
        if isinstance(s, Replay):
            read = expr_names(s.body)
            s.names = [n for n in s.names if n in read]
            if s.index not in read:
                s.index = s.positions = None
            keep[s.tape] = s.names
    for s in walk([fn]):
        if isinstance(s, Record) and s.tape in keep:
            s.names = keep[s.tape]
    return fn
