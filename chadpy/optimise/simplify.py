"""Simplification: from the paper's form to hand-written-looking adjoint code.

CHAD's output (Fig. 7) is compositional: one closure per let, each called exactly
once. Because every name is bound once (SSA) and the whole derivative lives in one
Python function, these passes are safe and turn it into straight adjoint code:

1. `hoist_case_backpropagators`: both branches of an `if` define the same
   backpropagator; define it once after the `if`, branching on the same condition.
2. `inline_backpropagators`: a backpropagator called once is replaced by its body.
3. `localize_accumulator`: with everything inlined, slot numbers are static, so
   each slot becomes a local variable (`acc.one(2, e)` becomes `dz += e`).
4. `propagate_zeros`: `dz = 0.0` followed by `dz += e` becomes `dz = e`.
5. `propagate_copies`: `dw = dr` with both never changed again: read `dr` instead.
6. `remove_dead_cotangents`: cotangents nobody reads are not computed.
7. `tidy` (`tidy.py`): no empty branches, one-hot contributions added in place, no
   `unbroadcast` where the shapes cannot differ.
8. `fuse` (`fuse.py`): a loop that carries one float cotangent unchanged adds its reverse
   pass up in the forward pass, per unit of that cotangent, and keeps no tape.
9. `collect` (`collect.py`): a loop's one-hots to a cotangent it only adds to are appended to
   two lists and added once after the loop.
10. `trim_tapes`: a loop records only the primal values its reverse pass still reads.
11. `release` (`release.py`): arrays the backward pass reads only for their shape are let go
   in the forward pass (a loop's tape records a stand-in for them).

The forward pass runs exactly the user's operations, in the user's order: the passes only
add statements to it (`fuse`'s sums, `collect`'s lists, `release`'s stand-ins and `del`s).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..ir.types import VType
from ..target.expressions import CallX, Name, is_zero
from ..target.statements import (
    AccNew,
    AccOne,
    AccPop,
    AccPush,
    Accum,
    Assign,
    Def,
    Do,
    If,
    Record,
    Replay,
    Stmt,
    count_statements,
    expr_names,
    in_defs,
    iter_exprs,
    mentioned,
    names_in,
    nested,
    rename,
    replace,
    walk,
)
from .collect import collect
from .fuse import fuse
from .release import release
from .tidy import tidy


@dataclass
class Optimising:
    """One specialisation's target program as the passes rewrite it: the function, its variables'
    types (for the passes about arrays), and the accumulator's slots once inlining made them static."""

    fn: Def
    types: dict[str, VType] | None = None
    slots: frozenset[str] = frozenset()  # the names of the slots' cotangents

    def in_backpropagators(self, rewrite: Callable[[list[Stmt]], list[Stmt]]) -> None:
        """Rewrite the bodies of the backpropagators (never primal code)."""
        self.fn = replace(self.fn, body=in_defs(self.fn.body, rewrite))


def hoist(o: Optimising) -> None:
    """Both branches of an `if` define the same backpropagator: define it once after the `if`."""
    o.fn = replace(o.fn, body=hoist_case_backpropagators(o.fn.body))


def inline(o: Optimising) -> None:
    """A backpropagator called once is replaced by its body."""
    body = inline_backpropagators(o.fn.body)
    o.slots = frozenset(s.ct for s in walk(body) if isinstance(s, (AccPush, AccOne, AccPop)))
    o.fn = replace(o.fn, body=body)


def localize(o: Optimising) -> None:
    """With everything inlined, each slot of the accumulator becomes a local variable."""
    o.fn = replace(o.fn, body=[localize_accumulator(s) if isinstance(s, Def) else s for s in o.fn.body])


def zeros(o: Optimising) -> None:
    """`dz = 0.0` followed by `dz += e` becomes `dz = e`; adding zero is dropped."""
    o.in_backpropagators(propagate_zeros)


def copies(o: Optimising) -> None:
    """`dw = dr` with both never changed again: read `dr` for `dw`."""
    o.in_backpropagators(lambda b: propagate_copies(b, o.slots))


def dead(o: Optimising) -> None:
    """Cotangents nobody reads are not computed."""
    o.in_backpropagators(remove_dead_cotangents)


def tidied(o: Optimising) -> None:
    """No empty branches, one-hots added in place, no `unbroadcast` where the shapes cannot differ."""
    o.fn = tidy(o.fn, o.types)


def fused(o: Optimising) -> None:
    """A loop that carries one float cotangent unchanged sums its reverse pass forward: no tape."""
    o.fn = fuse(o.fn)


def collected(o: Optimising) -> None:
    """A loop's one-hots to a cotangent it only adds to are appended to two lists, added once after."""
    o.fn = collect(o.fn)


def tapes(o: Optimising) -> None:
    """A loop records only the primal values its reverse pass still reads."""
    o.fn = trim_tapes(o.fn)


def released(o: Optimising) -> None:
    """Arrays the backward pass reads only for their shape are let go in the forward pass."""
    if o.types:
        o.fn = release(o.fn, o.types)


# The passes in the order they run (`pipeline.PASSES` names them); zeros and copies run again after
# tidy and fuse, which leave zeros and copies of their own.
PASSES: tuple[tuple[str, Callable[[Optimising], None]], ...] = (
    ("hoist", hoist),
    ("inline", inline),
    ("localize", localize),
    ("zeros", zeros),
    ("copies", copies),
    ("dead", dead),
    ("tidy", tidied),
    ("fuse", fused),
    ("collect", collected),
    ("zeros_again", zeros),
    ("copies_again", copies),
    ("tapes", tapes),
    ("release", released),
)


def simplify(fn: Def, types: dict[str, VType] | None = None) -> Def:
    """The simplified form of a CHAD-transformed function (`types`: its variables', for `tidy`)."""
    o = Optimising(fn, types)
    for _, run in PASSES:
        run(o)
    return o.fn


# ------------------------------------------------------------------ 1. hoisting


def hoist_case_backpropagators(stmts: list[Stmt]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        if not isinstance(s, If):
            out.append(nested(s, hoist_case_backpropagators))
            continue
        body = hoist_case_backpropagators(s.body)
        orelse = hoist_case_backpropagators(s.orelse)
        shared = {d.name for d in body if isinstance(d, Def)} & {d.name for d in orelse if isinstance(d, Def)}
        hoisted = []
        for name in sorted(shared):
            d1 = next(d for d in body if isinstance(d, Def) and d.name == name)
            d2 = next(d for d in orelse if isinstance(d, Def) and d.name == name)
            body.remove(d1)
            orelse.remove(d2)
            d2_body = rename(d2.body, dict(zip(d2.params, d1.params)))
            branches = If(s.test, d1.body, d2_body, comment="the branch taken forward", loc=s.loc)
            hoisted.append(Def(name, d1.params, [branches], comment=s.comment, loc=s.loc))
        out.append(replace(s, body=body, orelse=orelse))
        out.extend(hoisted)
    return out


# ------------------------------------------------------------------ 2. inlining


def _called(s: Stmt) -> str | None:
    if isinstance(s, Do) and isinstance(s.value, CallX) and isinstance(s.value.func, Name):
        return s.value.func.id
    return None


def inline_backpropagators(stmts: list[Stmt]) -> list[Stmt]:
    defs = {s.name: s for s in walk(stmts) if isinstance(s, Def)}
    calls: dict[str, int] = {}
    for s in walk(stmts):
        name = _called(s)
        if name in defs:
            calls[name] = calls.get(name, 0) + 1
    # a backpropagator also used as a value (returned, passed on) stays a function
    uses = Counter(e.id for e in iter_exprs(stmts) if isinstance(e, Name) and e.id in defs)
    inlinable = {n for n in defs if calls.get(n) == 1 and uses[n] == 1}

    def expand(body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            name = _called(s)
            if name in inlinable:
                d = defs[name]
                mapping = {}
                for param, arg in zip(d.params, s.value.args):
                    if isinstance(arg, Name):
                        if arg.id != param:  # (`body_bp(d, acc)`: nothing to rename in its long body)
                            mapping[param] = arg.id
                    else:  # e.g. a tuple cotangent {0: da, 1: db}: d_a_b, for `a, b = ...`
                        ct = "d_" + name.removesuffix("_bp")
                        out.append(Assign([ct], arg, comment=s.comment, loc=d.loc or s.loc))
                        mapping[param] = ct
                out.extend(expand(rename(d.body, mapping)))
            elif isinstance(s, Def) and s.name in inlinable:
                continue
            else:
                out.append(nested(s, expand))
        return out

    return expand(stmts)


# ------------------------------------------------------------------ 3. locals for slots


def localize_accumulator(run: Def) -> Def:
    """Turn the accumulator of a fully inlined backpropagator into local variables."""
    if any(isinstance(s, Def) for s in walk(run.body)):
        return run  # something was not inlined: keep the accumulator

    def convert(body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            if isinstance(s, AccNew):
                continue
            if isinstance(s, AccPush):
                out.append(Assign([s.ct], s.zero, comment=s.comment, loc=s.loc))
            elif isinstance(s, AccOne):
                out.append(Accum(s.ct, s.value, s.real, loc=s.loc))  # `D[x]`: its name says it
            elif isinstance(s, AccPop):
                continue  # the local already holds the total
            else:
                out.append(nested(s, convert))
        return out

    return replace(run, body=convert(run.body))


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
