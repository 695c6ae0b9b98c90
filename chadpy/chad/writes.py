"""Which rules rewind the log of in-place writes (`runtime.writes.Writes`) before they run.

In a function that writes in place (`x[k] = v`, the user's `append`), a rule whose
derivative may read an array, list or dict must see it as its operation did: its forward
part records the log's length (`written = writes.mark()`) and its backward part first
rewinds the log to it (`writes.rewind(written)`). Only the rules that a write may follow
need it; a function where none does gets no log at all (docs/design.md, "Writes in place").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..ir import nodes as ir
from ..ir.types import Arr, Dct, Fn, Lst, Rec, Tup, VType
from ..names import NameSupply
from ..rules.sequences import STORE_IN
from ..target.expressions import Attr, CallX, Name
from ..target.statements import Assign, Do, Stmt


class Rewinds:
    """The log of one function's in-place writes, and which of its rules must rewind it before their backward part
    runs."""

    def __init__(self, fn: ir.Function, methods: dict, type_of: Callable, active: Callable, names: NameSupply):
        self.methods, self.type_of, self.active, self.names = methods, type_of, active, names
        self.written_after = _written_after(fn.body, False) if _writes(fn.body) else set()
        # the kinds of container the function writes: a write to a list changes no array, but one into a list's
        # element (`xs[t][i] = v`, `setitem_in`) changes the element, of any kind
        self.written = {type(type_of(ir.operands(let.expr)[0])) for let in _lets(fn.body) if _logged(let.expr)}
        if any(let.expr.op is STORE_IN for let in _lets(fn.body) if _logged(let.expr)):
            self.written |= {Arr, Lst, Dct}
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
        return any(isinstance(a, ir.Var) and _container(t := self.type_of(a)) and self._holds(t) for a in atoms)

    def _holds(self, t: VType) -> bool:
        """Whether a value of type t is, or holds, a container of a kind the function writes."""
        if type(t) in self.written or not self.written <= {Arr, Lst, Dct}:
            return True
        match t:
            case Lst(item) | Dct(item, None):
                return item is not None and self._holds(item)
            case Dct(_, fields):
                return any(self._holds(f) for _, f in fields)
            case Tup(items) | Fn(_, items):
                return any(map(self._holds, items))
            case Rec(_, fields):
                return any(self._holds(f) for _, f in fields)
        return False

    def add(self, body: list[Stmt], saves: list[Stmt]) -> None:
        """The rule's backward part first rewinds the writes made after its forward part ran."""
        mark = self.names.fresh("written")
        saves.append(Assign([mark], CallX(Attr(Name(self.log), "mark"), []), comment="the writes so far"))
        body.insert(0, Do(CallX(Attr(Name(self.log), "rewind"), [Name(mark)]), comment="as they were here"))


def _container(t: VType) -> bool:
    return isinstance(t, (Arr, Lst, Dct))


def _logged(e: ir.Expr) -> bool:
    """Whether e writes in place, logged (`x[k] = v`, the user's `append`)."""
    return isinstance(e, ir.Prim) and e.op.logged


def _writes(block: ir.Block) -> bool:
    """Whether a block writes in place (`x[k] = v`), in it or in a block nested in it."""
    return any(_logged(let.expr) for let in _lets(block))


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
        after = after or _logged(e) or any(map(_writes, ir.blocks(e)))
    return out
