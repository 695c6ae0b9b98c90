"""D[fold] (Section 7): the CHAD rule of a loop.

The forward pass runs the iterations, recording on a tape, per iteration, the primal
values its backpropagator needs (the state, what the body binds; a `for` loop's count is
read again from the sequence it counted, `Replay.index`);
the backpropagator replays the tape newest first and runs one iteration's
backpropagator per record, carrying the state's cotangents from each iteration to
the one before. Iteratively: no recursion, whatever the trip count, and each
iteration's backward work is a constant factor of its forward work.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..ir.types import Float
from ..runtime.cotangents import tuple_part
from ..target.expressions import CallX, ListX, Name, UnaryOp, call
from ..target.statements import (
    AccPop,
    AccPush,
    Assign,
    Break,
    Def,
    Do,
    For,
    If,
    Record,
    Replay,
    Stmt,
    While,
    assigned,
    expr_names,
    one_or_tuple,
    set_on_one_path_only,
)
from .context import Rules


def transform_loop(c: Rules, e: ir.Loop, target: str | tuple[str, ...], depth: int, bp: str | None) -> list[Stmt]:
    """D[fold] (Section 7): run the iterations forward, recording each one's primal values on a
    tape; the backpropagator replays the tape newest first, running one iteration's
    backpropagator per record (iteratively: no recursion, whatever the trip count)."""
    state = e.state
    # a loop that carries nothing (it runs only for what it calls) has no state to set
    fwd: list[Stmt] = [Assign(list(state), one_or_tuple([c.primal(a) for a in e.init]))] if state else []
    tape = c.names.fresh("tape") if bp is not None else None
    if tape is not None:
        fwd.append(Assign([tape], ListX([]), comment="one record per iteration"))
    d = depth
    for p in state:  # the state variables are in scope in the body, newest slots
        if bp is not None and c.active(p):
            c.open_slot(p, d)
            d += 1
    iteration: list[Stmt] = []
    if isinstance(e, ir.WhileLoop):
        test_fwd, _ = c.block(e.test, d, "test", wanted=False)
        iteration += test_fwd
        iteration.append(If(UnaryOp("not", c.primal(e.test.result)), [Break()], []))
    body_fwd, body_bp = c.block(e.body, d, "iteration", wanted=bp is not None, results=e.next)
    primal, defs = split_defs(body_fwd)
    iteration += primal
    record = None
    if tape is not None:
        bound = assigned(primal)
        needed = expr_names(defs)
        record = Record(tape, [n for n in dict.fromkeys(list(state) + bound) if n in needed])
        iteration.append(record)
        always = set(assigned(primal, always=True))
        sometimes = [n for n in record.names if n in bound and n not in always]
        if sometimes:  # bound on one path only: the record still needs a value
            iteration.insert(0, set_on_one_path_only(sometimes))
    if state:
        iteration.append(Assign(list(state), one_or_tuple([c.primal(a) for a in e.next])))
    if e.stop is not None:
        iteration.append(If(c.primal(e.stop), [Break()], []))
    if isinstance(e, ir.ForLoop):
        fwd.append(For(e.index, c.primal(e.seq), iteration, comment="D[loop]: forward iterations"))
    else:
        fwd.append(While(iteration, comment="D[loop]: forward iterations"))
    outputs = ir.target_names(target)
    fwd.append(Assign(outputs, one_or_tuple([Name(p) for p in state])))
    if bp is None:
        return fwd

    fwd.append(_replay(c, e, target, defs, body_bp, record, needed, depth, bp))
    return fwd


def _replay(
    c: Rules,
    e: ir.Loop,
    target: str | tuple[str, ...],
    defs: list[Stmt],
    body_bp: str | None,
    record: Record,
    needed: set[str],
    depth: int,
    bp: str,
) -> Def:
    """The loop's backpropagator: replay the tape newest first, carrying the state's cotangents back
    through the iterations, each record's backpropagators defined again over its values."""
    state = e.state
    live = [k for k, p in enumerate(state) if c.active(p)]
    carry = {k: c.names.fresh("d" + state[k] + "_carry") for k in live}
    back: list[Stmt] = []
    for k in live:
        part = Name(c.d) if isinstance(target, str) else call(tuple_part, Name(c.d), k, c.zero(c.spec.types[state[k]]))
        back.append(Assign([carry[k]], part, comment=f"cotangent of the final {state[k]}"))
    replay: list[Stmt] = list(defs)
    for k in live:
        p = state[k]
        replay.append(AccPush(c.acc, c.slot[p], c.ct[p], c.zero(c.spec.types[p]), comment=f"scope {p}"))
    if body_bp is not None:
        args = [Name(carry[k]) for k, n in enumerate(e.next) if k in carry and c.active(n)]
        replay.append(Do(CallX(Name(body_bp), [*args, Name(c.acc)]), comment="this iteration's backpropagator"))
    for k in reversed(live):
        p = state[k]
        replay.append(AccPop(c.acc, c.slot[p], c.ct[p]))
    for k in live:
        replay.append(Assign([carry[k]], Name(c.ct[state[k]])))
    floats = tuple(carry[k] for k in live if isinstance(c.spec.types[state[k]], Float))
    # a `for` loop's count is read again from what it counted (a range or a list), not recorded
    counted = isinstance(e, ir.ForLoop) and e.index in needed
    positions = c.primal(e.seq) if counted else None
    if counted and not isinstance(positions, Name):
        record.names.insert(0, e.index)
        counted = False
    back.append(
        Replay(
            record.tape,
            record.names,
            replay,
            floats=floats,
            index=e.index if counted else None,
            positions=positions.id if counted else None,
            comment="the iterations, newest first",
        )
    )
    for k in live:
        back += c.var(e.init[k], Name(carry[k]))
    return Def(bp, [c.d, c.acc], back, comment="D[loop]: replay the tape", slots=depth)


def split_defs(stmts: list[Stmt]) -> tuple[list[Stmt], list[Stmt]]:
    """A loop body's forward code without its backpropagators, and the backpropagators
    (which the reverse pass defines again per record, over that record's values)."""
    primal: list[Stmt] = []
    defs: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Def):
            defs.append(s)
        elif isinstance(s, If):
            p1, d1 = split_defs(s.body)
            p2, d2 = split_defs(s.orelse)
            primal.append(If(s.test, p1, p2, comment=s.comment, loc=s.loc))
            if d1 or d2:
                defs.append(If(s.test, d1, d2, comment="the branch taken forward", loc=s.loc))
        else:
            primal.append(s)
    return primal, defs
