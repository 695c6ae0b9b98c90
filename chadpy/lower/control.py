"""Control flow: the loops and the `if`s whose branches both fall through (part of `lower`).

Loops become `Loop`s over the variables they carry (those assigned in the body and
read later); `break`, `continue` and `return` inside a loop end the body with a
status (0 go on, 1 break, 2 return) that is part of the state, so they need no
exceptions and no flags in the user's sense. An `if` whose branches both fall
through joins the variables they assign (and that are read later) into a tuple:
`let <w, v> = case c of {...}`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gast

from ..ir import nodes as ir
from ..read import scope
from ..runtime.scalar import UNASSIGNED
from . import closures
from .context import Lowering

# Binds a loop's target in the body's environment (adding lets to its prelude); returns the counter's name.
Binder = Callable[[dict, list], str]


@dataclass
class LoopExits:
    """How the body of the loop being lowered ends: each path yields the next state."""

    state: list[str]  # the user's names of the state variables
    status: str | None  # the state variable holding 0 (go on), 1 (break) or 2 (return)
    retval: str | None  # the state variable holding the returned value

    def finish(self, lw: Lowering, env: dict, lets: list, status: int, retval: ir.Atom | None = None):
        items = [closures.current(lw, env, v, lets, None) for v in self.state]
        if self.status is not None:
            items.insert(0, ir.Const(status))
        if self.retval is not None:
            items.append(retval if retval is not None else ir.Var(self.retval))
        t = lw.names.fresh("state")
        lets.append(ir.Let(t, ir.MakeTuple(items), lw.loc))
        return ir.Block(lets, ir.Var(t))


def lower_loop(
    lw: Lowering,
    stmt: gast.For | gast.While,
    env: dict,
    lets: list,
    live: set[str],
    iteration: tuple[ir.Atom, Binder] | None,
) -> tuple[str, str] | None:
    """Lower a loop into `let <state> = loop ...`; return (status, retval) if it may `return`.
    `iteration`: what a `for` counts and how it binds its target (`desugar.iteration`)."""
    loc = lw.parsed.loc(stmt)
    state = _carried(lw, stmt, env, live)
    returns = scope.returns(stmt.body)
    stops = returns or scope.breaks(stmt.body, (gast.Break,))

    seq = binder = None
    if isinstance(stmt, gast.For):
        seq, binder = iteration
    init = [closures.current(lw, env, v, lets, stmt) if v in env else ir.Const(None) for v in state]
    body_env = dict(env)
    params = [lw.bind(v, body_env) for v in state]
    status = lw.names.fresh("status") if stops else None
    retval = lw.names.fresh("retval") if returns else None
    exits = LoopExits(state, status, retval)

    prelude: list[ir.Let] = []
    index = None
    if binder is not None:
        lw.loc = loc
        index = binder(body_env, prelude)
    test = None
    if isinstance(stmt, gast.While):
        lw.loc = loc
        test_lets: list[ir.Let] = []
        test = ir.Block(test_lets, lw.atom(stmt.test, body_env, test_lets))
    lw.loops.append(exits)
    body = lw.block(stmt.body, body_env, lambda e, lt: exits.finish(lw, e, lt, 0), set(state))
    lw.loops.pop()
    lw.loc = loc
    body.lets[:0] = prelude

    all_params = ([status] if status else []) + params + ([retval] if retval else [])
    all_init = ([ir.Const(0)] if status else []) + init + ([ir.Const(None)] if retval else [])
    nxt = _next_state(lw, body, len(all_params), loc)

    outputs = ([lw.names.fresh("status")] if status else []) + [lw.bind(v, env) for v in state]
    outputs += [lw.names.fresh("retval")] if retval else []
    stop = nxt[0] if status else None
    if isinstance(stmt, gast.For):
        expr = ir.ForLoop(state=all_params, init=all_init, index=index, seq=seq, body=body, next=nxt, stop=stop)
    else:
        expr = ir.WhileLoop(state=all_params, init=all_init, test=test, body=body, next=nxt, stop=stop)
    target = outputs[0] if len(outputs) == 1 else tuple(outputs) if outputs else lw.names.fresh("_")
    lets.append(ir.Let(target, expr, loc))
    return (outputs[0], outputs[-1]) if returns else None


def _carried(lw: Lowering, stmt: gast.For | gast.While, env: dict, live: set[str]) -> list[str]:
    """The loop's state: the variables it assigns that are read later or by the loop itself (and have a
    value before it, or are read after it)."""
    assigned = scope.assigned(stmt.body)
    if isinstance(stmt, gast.For):
        assigned |= {n.id for n in scope.walk(stmt.target) if isinstance(n, gast.Name)}
    reads = scope.read(stmt.body) | (scope.read([stmt.test]) if isinstance(stmt, gast.While) else set())
    reads = closures.expand(lw, reads)  # a call of a function named here reads what it reads
    return sorted(v for v in assigned if (v in live or v in reads) and (v in env or v in live))


def _next_state(lw: Lowering, body: ir.Block, width: int, loc: object) -> list[ir.Atom]:
    """The atoms of the next iteration's state, from the body's result tuple (its elements where the body
    ends by making it); the body's result becomes None."""
    last = body.lets[-1] if body.lets else None
    if (
        last is not None
        and isinstance(body.result, ir.Var)
        and last.target == body.result.name
        and isinstance(last.expr, ir.MakeTuple)
    ):
        body.lets.pop()
        nxt = list(last.expr.items)
    else:
        names = tuple(lw.names.fresh("next") for _ in range(width))
        if len(names) == 1:  # a one-tuple: take its element
            body.lets.append(ir.Let(names[0], ir.Proj(body.result, ir.Const(0)), loc))
        elif names:
            body.lets.append(ir.Let(names, body.result, loc))
        nxt = [ir.Var(n) for n in names]
    body.result = ir.Const(None)
    return nxt


def join_if(lw: Lowering, stmt: gast.If, cond: ir.Atom, env: dict, lets: list, live: set[str]) -> None:
    """An `if` whose branches both fall through: join the live variables they assign."""
    joined = sorted((scope.assigned(stmt.body) | scope.assigned(stmt.orelse)) & live)
    loc = lw.parsed.loc(stmt)

    def finish(branch_env: dict, branch_lets: list) -> ir.Block:
        # a variable this branch leaves unassigned: Python raises reading it after the `if`
        values = [
            closures.current(lw, branch_env, v, branch_lets, stmt)
            if v in branch_env
            else ir.Ref("unassigned", UNASSIGNED)
            for v in joined
        ]
        if len(joined) <= 1:
            return ir.Block(branch_lets, values[0] if values else ir.Const(None))
        t = lw.names.fresh("joined")
        branch_lets.append(ir.Let(t, ir.MakeTuple(values), loc))
        return ir.Block(branch_lets, ir.Var(t))

    then = lw.block(stmt.body, dict(env), finish, live)
    orelse = lw.block(stmt.orelse, dict(env), finish, live)
    case = ir.Case(cond, then, orelse)
    if len(joined) == 1:
        lets.append(ir.Let(lw.bind(joined[0], env), case, loc))
    elif joined:
        lets.append(ir.Let(tuple(lw.bind(v, env) for v in joined), case, loc))
    else:
        lets.append(ir.Let(lw.names.fresh("_"), case, loc))
