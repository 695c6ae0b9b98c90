"""Which rules rewind the log of in-place writes (`buffers.Writes`) before they run.

In a function that writes in place (`x[k] = v`, the user's `append`), a rule whose
derivative may read an array, list or dict must see it as its operation did: its forward
part records the log's length (`written = writes.mark()`) and its backward part first
rewinds the log to it (`writes.rewind(written)`). Only the rules that a write may follow
need it; a function where none does gets no log at all (docs/design.md, "Writes in place").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from . import ir
from .expressions import Attr, CallX, Name
from .names import NameSupply
from .target import Assign, Do, Stmt
from .vtypes import Arr, Dct, Lst, VType


class Rewinds:
    def __init__(self, fn: ir.Function, methods: dict, type_of: Callable, active: Callable, names: NameSupply):
        self.methods, self.type_of, self.active, self.names = methods, type_of, active, names
        self.written_after = _written_after(fn.body, False) if _writes(fn.body) else set()
        # the log's name in the generated code, if any rule rewinds it
        self.log = names.fresh("writes") if any(map(self.needed, _lets(fn.body))) else None

    def needed(self, let: ir.Let) -> bool:
        """Whether the let's rule may read an array, list or dict (an argument, or its result) that a
        later write changes: an operation (not a write: its rule reads no values) or a call, that a
        write may follow (in its block, after a block holding it, or in a loop's next iteration)."""
        e = self.methods.get(id(let.expr), let.expr)
        if id(let) not in self.written_after or not isinstance(e, (ir.Prim, ir.Call, ir.Apply)):
            return False
        if isinstance(e, ir.Prim) and (e.op.logged or e.op.vjp is None and e.op.runtime_vjp is None):
            return False
        if not any(self.active(t) for t in ir.bound_names(let)):  # no rule at all
            return False
        atoms = [*ir.operands(e), *map(ir.Var, ir.target_names(let.target))]
        return any(isinstance(a, ir.Var) and _container(self.type_of(a)) for a in atoms)

    def add(self, body: list[Stmt], saves: list[Stmt]) -> None:
        """The rule's backward part first rewinds the writes made after its forward part ran."""
        mark = self.names.fresh("written")
        saves.append(Assign([mark], CallX(Attr(Name(self.log), "mark"), []), comment="the writes so far"))
        body.insert(0, Do(CallX(Attr(Name(self.log), "rewind"), [Name(mark)]), comment="as they were here"))


def _container(t: VType) -> bool:
    return isinstance(t, (Arr, Lst, Dct))


def _writes(block: ir.Block) -> bool:
    """Whether a block writes in place (`x[k] = v`), in it or in a block nested in it."""
    for let in block.lets:
        if isinstance(let.expr, ir.Prim) and let.expr.op.logged or any(map(_writes, ir.blocks(let.expr))):
            return True
    return False


def _lets(block: ir.Block) -> Iterator[ir.Let]:
    """The lets of a block and of the blocks nested in it."""
    for let in block.lets:
        yield let
        for inner in ir.blocks(let.expr):
            yield from _lets(inner)


def _written_after(block: ir.Block, after: bool) -> set[int]:
    """The lets of the block (and of blocks nested in it) that a write may follow (`after`: one may
    follow the block)."""
    out: set[int] = set()
    for let in reversed(block.lets):
        if after:
            out.add(id(let))
        e = let.expr
        nested = after or isinstance(e, ir.Loop) and _writes(e.body)  # the next iteration's
        for inner in ir.blocks(e):
            out |= _written_after(inner, nested)
        after = after or isinstance(e, ir.Prim) and e.op.logged or any(map(_writes, ir.blocks(e)))
    return out
