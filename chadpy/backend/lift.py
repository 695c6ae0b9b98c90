"""A backpropagator as a record: Section 9's defunctionalisation, applied to CHAD's own closures.

CHAD gives each function a backpropagator that reads the forward pass's values (Fig. 7); CHAD
makes it a nested `def`, a closure. In Python a closure is a function object, a tuple of cells
and one cell per variable it reads, and the cyclic garbage collector tracks each of them until
the backward pass drops it. A recursive function (a determinant by minors: 8,660 calls) kept
tens of thousands of them alive, and the collections they started scanned them all again and
again: its gradient took 103-120 ms with the collector running and 37-39 ms without.

So the generated module has two module-level functions per specialisation: `f_chad(args)`
returns the primal result and `saved`, the tuple of the values its backpropagator reads, and
`f_bp(saved, d)` is the backpropagator, which starts by unpacking them. A tuple is one object,
and once it holds only numbers and arrays the collector stops tracking it (the same gradient:
36-38 ms, collector running). A call site knows its callee's specialisation statically (closure
conversion made function values data, Section 9), so it calls the callee's `f_bp` on the tuple
the callee returned (`calls.invoke`); the API does the same for the entry point.

The backpropagator is made nested and lifted here, after simplification, so the passes see a
function and its backpropagator together.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..infer.inference import Spec
from ..names import NameSupply
from ..target.expressions import Name, TupleX
from ..target.statements import (
    Def,
    Del,
    Return,
    Stmt,
    assigned,
    expr_names,
    iter_exprs,
    local_names,
    set_on_one_path_only,
    unpack,
    walk,
)


def name_apart(specs: list[Spec]) -> None:
    """Name each specialisation's backpropagator after its CHAD form (`f_chad_1`, `f_bp_1`), both
    apart from every variable of the program: a user's variable `g_chad` must not hide `g_chad`."""
    taken = {n for s in specs for n in [*s.types, *s.fn.params]}
    for s in specs:
        suffix = s.name.removeprefix(f"{s.fn.name}_chad")  # "" or "_k"
        k = int(suffix[1:] or 0)
        while (names := {f"{s.fn.name}_chad{suffix}", f"{s.fn.name}_bp{suffix}"}) & taken:
            k += 1
            suffix = f"_{k}"
        s.name, s.backward = f"{s.fn.name}_chad{suffix}", f"{s.fn.name}_bp{suffix}"
        taken |= names


def lift_backpropagators(fn: Def, backward: str, module: set[str]) -> tuple[Def, Def]:
    """`def f_chad(..): ..; def bp(d): ..; return (r, bp)` (CHAD's form) as
    `def f_chad(..): ..; return (r, saved)` and `def f_bp(saved, d): .. = saved; ..`
    (`module`: the names of the module's functions, which it reads as they are)."""
    *forward, bp, ret = fn.body
    assert isinstance(bp, Def) and isinstance(ret, Return) and isinstance(ret.value, TupleX), fn.name
    result, made = ret.value.items
    assert isinstance(made, Name) and made.id == bp.name, fn.name
    saved = [n for n in free_names(bp) if n not in module]
    deleted = {n for s in walk(forward) if isinstance(s, Del) for n in s.names}
    assert not set(saved) & deleted, f"{fn.name}'s backpropagator reads a deleted name"
    bound = set(fn.params) | set(assigned(forward, always=True))
    unset = [n for n in saved if n not in bound]
    if unset:  # bound on one path only: the tuple still needs a value
        forward.insert(0, set_on_one_path_only(unset))
    forward.append(Return(TupleX([result, TupleX([Name(n) for n in saved])])))
    record = NameSupply(local_names([fn]) | expr_names([fn])).fresh("saved")
    body = bp.body
    if saved:
        body = [unpack(saved, Name(record)), *body]
        body[0].comment = "the values of the forward pass it reads"
    return (
        Def(fn.name, fn.params, forward, comment=fn.comment, loc=fn.loc),
        Def(backward, [record, *bp.params], body, comment=bp.comment, loc=bp.loc),
    )


def free_names(fn: Def) -> list[str]:
    """The names a function reads from the scope around it, in the order it first reads them
    (Python's rule: a name it binds anywhere in its own body is its own)."""
    own = set(fn.params)
    reads: list[str] = []
    for s in _own_statements(fn.body):
        if isinstance(s, Def):
            own.add(s.name)
            reads += free_names(s)
        else:
            own.update(s.binds())
            reads += [e.id for e in iter_exprs(s.exprs()) if isinstance(e, Name)] + s.reads()
    return [n for n in dict.fromkeys(reads) if n not in own]


def _own_statements(stmts: list[Stmt]) -> Iterator[Stmt]:
    """The statements of a function's own scope: nested ones too, but not a nested function's body."""
    for s in stmts:
        yield s
        if not isinstance(s, Def):
            for body in s.bodies():
                yield from _own_statements(body)
