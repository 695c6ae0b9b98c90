"""Inlining: CHAD's one backpropagator per let (Fig. 7), each called exactly once, becomes straight code.

Because every name is bound once (SSA) and the whole derivative lives in one Python function, a
backpropagator's body can replace its call; once every call is inlined the accumulator's slot numbers
are static, and each slot becomes a local variable (`acc.one(2, e)` becomes `dz += e`).
"""

from __future__ import annotations

from collections import Counter

from ..target.expressions import CallX, Name
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
    Stmt,
    iter_exprs,
    nested,
    rename,
    replace,
    walk,
)

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
