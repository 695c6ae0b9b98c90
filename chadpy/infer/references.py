"""Which variables of a specialisation refer to the same objects, and what each expression does with the
references it reads (`ownership` asks both)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..ir import nodes as ir
from ..ir.types import Arr, Dct, Lst, Rec, Tup, VType, of_value
from ..rules.records import SET_FIELD
from ..rules.sequences import AFTER_UPDATE, UPDATES, VIEWED_AGAIN, WRITTEN_BACK


class References:
    """Which variables refer to the same objects: copies and later names of one object (`same`), views
    of an array's data and containers holding values (`views`, `holders`)."""

    def __init__(self) -> None:
        self.same: dict[str, set[str]] = {}  # a variable -> earlier variables holding the same object
        self.views: dict[str, set[str]] = {}  # a view (`a[1:]`, `a.T`, ...) -> the variables whose data it shares
        self.holders: set[str] = set()  # the views that are containers holding the values (a tuple, a record)

    def alias(self, name: str, *sources: str | None) -> None:
        """`name` holds the same object as (one of) `sources`."""
        self.same.setdefault(name, set()).update(s for s in sources if s is not None)

    def updated_by(self, name: str) -> set[str]:
        """The variables whose objects an update of `name`'s changes: its earlier names, and what it is a view
        of (and their earlier names), transitively."""
        out, todo = set(), [name]
        while todo:
            for n in self.earlier_names(todo.pop()) - out:
                out.add(n)
                todo.extend(self.views.get(n, ()))
        return out

    def earlier_names(self, name: str) -> set[str]:
        """`name` and the earlier names of the same object (copies, loop state, branches)."""
        objects, todo = {name}, [name]
        while todo:
            for earlier in self.same.get(todo.pop(), ()):
                if earlier not in objects:
                    objects.add(earlier)
                    todo.append(earlier)
        return objects

    def referring(self, name: str, holding: bool = True) -> set[str]:
        """The variables that refer to the object `name` holds: its names, views of it, containers and
        closures holding it (unless not `holding`), and (as the same objects) later names of those."""
        objects = self.earlier_names(name)
        referring = set(objects)
        while True:
            more = {v for v, bases in self.views.items() if bases & referring and (holding or v not in self.holders)}
            more |= {v for v, earlier in self.same.items() if earlier & referring}
            if more <= referring:
                return referring
            referring |= more


class Aliasing:
    """What an expression does with the references it reads, by the variables' types: which variables
    it reads, which its result refers to (the arrays it views, the values a container holds), whether
    it is a view, whether it makes new arrays."""

    def __init__(self, types: dict[str, VType]):
        self.types = types

    def reads(self, e: ir.Expr) -> Iterator[str]:
        """The variables an expression reads (`x.__updated_by__(t)` reads only the one it settles on)."""
        if isinstance(e, ir.Prim) and e.op is AFTER_UPDATE:
            return iter(atom_names(self.after_update(e)))
        if isinstance(e, ir.Prim) and e.op in (WRITTEN_BACK, VIEWED_AGAIN) and self.array_view(e):
            return iter(atom_names(e.args[1]) | atom_names(e.args[3]))  # not the version that missed a write
        return reads_of(e, self.reads)

    def array_view(self, e: ir.Prim) -> bool:
        """Whether `views.py`'s write-back or re-derivation is of an array's view (a tuple, list or dict
        holds its elements themselves: what is written through one is the container's business)."""
        base = e.args[0] if e.op is WRITTEN_BACK else e.args[1]
        return isinstance(self.types.get(name_of(base)), Arr)

    def after_update(self, e: ir.Prim) -> ir.Atom:
        """What `x.__updated_by__(t)` is: t if Python updated x's object in place, else x."""
        x, t = e.args
        return t if mutable(self.types.get(name_of(x))) else x

    def viewed(self, e: ir.Expr, target: str | tuple[str, ...]) -> list[ir.Var]:
        """The variables the result refers to: the arrays it is a view of (`a[1:]`, `a.T`, `max(a, b)`),
        the values a tuple, list, dict or closure holds."""
        if isinstance(e, ir.Read):  # basic indexing views the array (an integer array or a mask copies)
            view = isinstance(self.types.get(name_of(e.base)), Arr) and isinstance(self.types.get(target), Arr)
            return [e.base] if view and not self.advanced(e) else []
        if isinstance(e, ir.Prim) and e.op is VIEWED_AGAIN and self.array_view(e):
            return [a for a in e.args[1:2] if isinstance(a, ir.Var)]
        if isinstance(e, ir.Prim) and e.op.aliases in ("view", "argument"):
            args = e.args[:1] if e.op.aliases == "view" else e.args
            return [a for a in args if isinstance(a, ir.Var)]
        held = {
            ir.MakeTuple: "items",
            ir.MakeList: "items",
            ir.MakeDict: "values",
            ir.MakeClosure: "captured",
            ir.MakeRecord: "values",
        }
        if type(e) in held:
            return [a for a in getattr(e, held[type(e)]) if isinstance(a, ir.Var)]
        if isinstance(e, ir.Prim) and (e.op in UPDATES or e.op is SET_FIELD):  # the container (object) holds it
            return [a for a in e.args[1:] if isinstance(a, ir.Var)]
        return []

    def is_view(self, e: ir.Expr) -> bool:
        """An array view (`a[1:]`, `a.reshape(3)`, `a.T`): the whole result refers to one array's data."""
        return isinstance(e, ir.Read) or isinstance(e, ir.Prim) and (e.op.aliases == "view" or e.op is VIEWED_AGAIN)

    def advanced(self, e: ir.Read) -> bool:
        """Whether an array is indexed with an integer array, a list or a mask (NumPy copies then)."""
        index = self.types.get(e.index.name) if isinstance(e.index, ir.Var) else of_value(e.index.value, False)
        parts = index.items if isinstance(index, Tup) else (index,)
        return any(isinstance(p, (Arr, Lst)) for p in parts)

    def new_arrays(self, e: ir.Expr, target: str | tuple[str, ...]) -> bool:
        """Whether `e` is a NumPy function returning a tuple of new arrays (`np.modf`, `np.linalg.eigh`)."""
        numpy = isinstance(e, ir.Prim) and getattr(e.op.fn, "__module__", "").split(".")[0] == "numpy"
        return numpy and not e.op.aliases and isinstance(target, str) and isinstance(self.types.get(target), Tup)


def mutable(t: VType | None) -> bool:
    """A list, a dict, an array or an object: Python updates it in place."""
    return isinstance(t, (Lst, Dct, Arr, Rec))


def name_of(atom: ir.Atom) -> str | None:
    return atom.name if isinstance(atom, ir.Var) else None


def atom_names(atom: ir.Atom) -> set[str]:
    return {atom.name} if isinstance(atom, ir.Var) else set()


def block_reads(block: ir.Block, reads: Callable[[ir.Expr], Iterator[str]] | None = None) -> Iterator[str]:
    for let in block.lets:
        yield from (reads or reads_of)(let.expr)
    yield from atom_names(block.result)


def reads_of(e: ir.Expr, reads: Callable[[ir.Expr], Iterator[str]] | None = None) -> Iterator[str]:
    """The variables an expression reads (those of nested blocks too, each as `reads` says)."""
    for a in ir.operands(e) + (ir.loop_results(e) if isinstance(e, ir.Loop) else []):
        yield from atom_names(a)
    for b in ir.blocks(e):
        yield from block_reads(b, reads)
