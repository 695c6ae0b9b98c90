"""Ownership: where Python would update a list or an array in place, nobody else may see it.

The core IR is functional: `xs.append(v)` and `a += b` bind a new name to the updated
value (`let xs' = append(xs, v)`), and the derivative is that of a functional update.
Python updates the object itself, so every other reference to it sees the change.
Both agree exactly when no other reference to the object is used afterwards. This pass
checks that, per specialisation (it needs the types: `x += 1` on a float is no update
at all), with a linear discipline:

- a variable *owns* its value if the function created that list or array (a literal,
  a comprehension, `list(...)`, arithmetic, `np.zeros`, ...) and it is the only
  reference to it;
- ownership moves with a copy `b = a` when `a` is not used again, and through a
  branch or a loop when every path hands it on (a loop's variable owns its value if
  its initial value and every iteration's new value do);
- anything that may keep another reference ends it: storing the value in a tuple,
  list, dict or closure, passing it to a function, a view of an array (`a[1:]`,
  `a.T`), or a copy `b = a` after which `a` is still used;
- an in-place update needs its variable to own its value, and not to be used again
  (in SSA form a later use can only be through another path to the same object).

So `xs = []; for ...: xs.append(v)` and `s = np.zeros(3); s += v` are accepted, and
`b = a; a += z; np.sum(b)` or `xs.append(v)` on an argument are rejected with the
line: chadpy never mutates a caller's argument and never computes a gradient of
code whose aliasing it changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from . import ir
from .errors import UnsupportedSyntax
from .rules.sequences import LIST_APPEND
from .vtypes import Arr, Lst, VType


def check(spec: object) -> None:
    """Raise `UnsupportedSyntax` at an in-place update that another reference could see."""
    _Owners(spec.types).block(spec.fn.body, set(), lambda name: False)


UsedAfter = Callable[[str], bool]  # whether a variable is read after the current point


class _Owners:
    def __init__(self, types: dict[str, VType]):
        self.types = types
        # a tuple variable made of variables that owned their values and were not used again:
        # which of its components own theirs (so `a, b = b, a` and a branch's joined variables keep them)
        self.packed: dict[str, list[bool]] = {}
        self.items: dict[str, list[str | None]] = {}  # a tuple variable -> the variables it was made of
        self.same: dict[str, set[str]] = {}  # a variable -> earlier variables holding the same object
        self.views: dict[str, set[str]] = {}  # a view (`a[1:]`, `a.T`, ...) -> the variables whose data it shares
        self.defined: set[str] = set()  # the variables bound so far on the way to the current let

    def block(self, block: ir.Block, owned: set[str], outside: UsedAfter) -> set[str]:
        """Walk a block with the variables that own their values on entry; return those at its end.

        `outside(name)`: whether a variable is read after the block (by what follows it, or by
        the next iteration of a loop it is the body of)."""
        last = {}  # variable -> the index of the last let reading it (len for the result)
        for k, let in enumerate(block.lets):
            for name in _reads(let.expr):
                last[name] = k
        for name in _atom_names(block.result):
            last[name] = len(block.lets)
        owned = set(owned)
        for k, let in enumerate(block.lets):
            self.let(let, owned, lambda name, k=k: last.get(name, -1) > k or outside(name))
            self.defined.update(ir.bound_names(let))
        return owned

    def let(self, let: ir.Let, owned: set[str], after: UsedAfter) -> None:
        """Update `owned` past one let; `after(name)`: whether a variable is read after it."""
        e, target = let.expr, let.target
        if isinstance(e, ir.Case):
            self.case(let, e, owned, after)
        elif isinstance(e, ir.Loop):
            self.loop(let, e, owned, after)
        elif isinstance(e, ir.Var):
            self.copy(e.name, target, owned, after)
        elif isinstance(e, ir.GetItem) and _name(e.base) in self.packed and isinstance(e.index, ir.Const):
            # a component of a packed tuple (`x = t[0]`)
            base, k = e.base.name, e.index.value
            if not after(base) and self.packed[base][k]:
                owned.add(target)
            self.alias(target, self.items[base][k])
        else:
            if isinstance(e, ir.MakeTuple) and e.kind == "tuple" and isinstance(target, str):
                self.packed[target] = [_name(a) in owned and not after(a.name) for a in e.items]
                self.items[target] = [_name(a) for a in e.items]
            for a in self.consumed(e):
                _consume(a, owned)
            for a in self.viewed(e, target):
                self.views.setdefault(target, set()).update({a.name} | self.views.get(a.name, set()))
            if isinstance(e, ir.Prim) and e.inplace:
                self.update(let, e, owned, after)
            if isinstance(target, str) and self.fresh(e, target):
                owned.add(target)

    def alias(self, name: str, *sources: str | None) -> None:
        """`name` holds the same object as (one of) `sources`."""
        self.same.setdefault(name, set()).update(s for s in sources if s is not None)

    def copy(self, source: str, target: str | tuple[str, ...], owned: set[str], after: UsedAfter) -> None:
        """`let target = source`: ownership moves along if `source` is not used again."""
        moves = not after(source)
        if isinstance(target, tuple):  # destructuring a tuple: each target is one of its components
            if moves and source in self.packed:
                owned.update(t for t, own in zip(target, self.packed[source]) if own)
            for t, item in zip(target, self.items.get(source, ())):
                self.alias(t, item)
            return
        if moves and source in owned:
            owned.add(target)
        if moves and source in self.packed:
            self.packed[target] = self.packed[source]
            self.items[target] = self.items[source]
        owned.discard(source)
        self.alias(target, source)

    def consumed(self, e: ir.Expr) -> list[ir.Atom]:
        """The atoms a container, a closure or a callee may keep a reference to (for good)."""
        if isinstance(e, ir.MakeTuple):
            return e.items
        if isinstance(e, ir.MakeDict):
            return e.values
        if isinstance(e, ir.MakeClosure):
            return e.captured
        if isinstance(e, (ir.Call, ir.Apply)):
            return e.args
        if isinstance(e, ir.Prim) and e.op.data_only and e.op.aliases:  # a call chadpy cannot read
            return e.args
        if isinstance(e, ir.Prim) and e.op is LIST_APPEND:  # the list keeps the element
            return e.args[1:]
        return []

    def viewed(self, e: ir.Expr, target: str | tuple[str, ...]) -> list[ir.Var]:
        """The variables whose data the result shares: `a[1:]`, `a.T`, `np.asarray(a)`, `max(a, b)`."""
        if isinstance(e, ir.GetItem):
            view = isinstance(self.types.get(_name(e.base)), Arr) and isinstance(self.types.get(target), Arr)
            return [e.base] if view else []
        if isinstance(e, ir.Prim) and e.op.aliases and not e.op.data_only:
            return [a for a in e.args if isinstance(a, ir.Var)]
        return []

    def fresh(self, e: ir.Expr, target: str) -> bool:
        """Whether `e` makes a new list or array (the target then owns it)."""
        if isinstance(e, ir.MakeTuple):
            return e.kind == "list"
        if isinstance(e, ir.GetItem):  # a list's slice is a copy
            return e.slice is not None and isinstance(self.types.get(_name(e.base)), Lst)
        if isinstance(e, ir.Prim):
            return not e.op.aliases and _mutable(self.types.get(target))
        return False

    def update(self, let: ir.Let, e: ir.Prim, owned: set[str], after: UsedAfter) -> None:
        """`xs.append(v)`, `a += b`: Python updates the object in place; allowed if nobody else sees it:
        the variable owns it, is not read again, and no view of it is."""
        xs = e.args[0]
        if not _mutable(self.types.get(_name(xs))):
            return  # `x += 1` on a number or a tuple: a new value in Python too
        self.alias(let.target, xs.name)  # the same object, updated
        if xs.name in owned and not after(xs.name) and not self.viewed_later(xs.name, after):
            owned.discard(xs.name)
            return
        kind = "a list" if isinstance(self.types.get(xs.name), Lst) else "an array"
        what = "`append`" if e.op is LIST_APPEND else "this augmented assignment"
        raise UnsupportedSyntax(
            f"{what} updates {kind} in place that another name, a view, a container or the caller may also "
            f"hold: chadpy updates only {kind} the function itself created and holds under one name (never a "
            f"caller's); copy it first (`xs = list(xs)`, `a = a.copy()`), or write `a = a + b` for a new one",
            let.loc,
        )

    def viewed_later(self, name: str, after: UsedAfter) -> bool:
        """Whether a view of the object `name` holds (made through any earlier name of it) is read later."""
        objects, todo = {name}, [name]
        while todo:  # the earlier names of the same object
            for earlier in self.same.get(todo.pop(), ()):
                if earlier not in objects:
                    objects.add(earlier)
                    todo.append(earlier)
        return any(v in self.defined and after(v) and bases & objects for v, bases in self.views.items())

    def case(self, let: ir.Let, e: ir.Case, owned: set[str], after: UsedAfter) -> None:
        """Each branch on its own; a target owns its value if it does at the end of both branches."""
        targets = ir.bound_names(let)
        ends, shapes = [], []
        for branch in (e.then, e.orelse):
            end = self.block(branch, owned, after)
            result = _name(branch.result)
            moves = result is not None and not after(result)
            own = moves and result in end
            packed = self.packed.get(result) if moves else None
            end.discard(result)  # handed on to the target
            ends.append(end)
            shapes.append((own, packed))
            if isinstance(let.target, str):
                self.alias(let.target, result)
            else:  # each target is the same component of the branch's tuple
                for t, item in zip(targets, self.items.get(result, ())):
                    self.alias(t, item)
        owned.intersection_update(*ends)
        packs = [p for _, p in shapes]
        same = all(p is not None and len(p) == len(packs[0]) for p in packs)
        if isinstance(let.target, str):
            if all(own for own, _ in shapes):
                owned.add(let.target)
            if same:
                self.packed[let.target] = [all(p[k] for p in packs) for k in range(len(packs[0]))]
                self.items[let.target] = self._joined_items(e, len(packs[0]))
        elif same and len(packs[0]) == len(targets):
            owned.update(t for k, t in enumerate(targets) if all(p[k] for p in packs))

    def _joined_items(self, e: ir.Case, width: int) -> list[str]:
        """For a case whose branches both end in a tuple: a name per component standing for both branches'
        components (so an update through the joined tuple finds their views)."""
        out = []
        for k in range(width):
            joined = f"<component {k} of {id(e)}>"  # not a variable of the program: it links the branches'
            for branch in (e.then, e.orelse):
                items = self.items.get(_name(branch.result), ())
                self.alias(joined, items[k] if k < len(items) else None)
            out.append(joined)
        return out

    def loop(self, let: ir.Let, e: ir.Loop, owned: set[str], after: UsedAfter) -> None:
        """A state variable owns its value if its initial value does and every iteration hands a value it
        owns to the next: assume it for all such, drop those whose new value is not, until stable."""
        bound = _bound(e)
        outer = {n for n in _reads(e) if n not in bound}  # read again by every iteration
        assumed = {p for p, a in zip(e.state, e.init) if _name(a) in owned and not after(a.name)}
        for p, a, n in zip(e.state, e.init, e.next):
            _consume(a, owned)
            self.alias(p, _name(a), _name(n))  # the first iteration's value, or the previous one's
        nexts = {n.name for n in e.next if isinstance(n, ir.Var)}
        while True:
            self.defined -= bound  # what the body binds is not bound yet when an iteration starts
            self.defined.update(e.state)
            start = owned | assumed
            if e.test is not None:
                start = self.block(e.test, start, lambda n: n in outer or n in e.state or after(n))
            end = self.block(e.body, start, lambda n: n in outer or n in nexts or after(n))
            kept = {p for p, n in zip(e.state, e.next) if p in assumed and _name(n) in end and _name(n) not in outer}
            if kept == assumed:
                break
            assumed = kept
        owned.intersection_update(end)  # what the loop consumed is not owned after it
        for t, p in zip(ir.bound_names(let), e.state):
            if p in assumed:
                owned.add(t)
            self.alias(t, p)


def _mutable(t: VType | None) -> bool:
    """A list or an array: Python updates it in place."""
    return isinstance(t, (Lst, Arr))


def _consume(atom: ir.Atom, owned: set[str]) -> None:
    """Another reference to the atom's value may exist from now on."""
    if isinstance(atom, ir.Var):
        owned.discard(atom.name)


def _name(atom: ir.Atom) -> str | None:
    return atom.name if isinstance(atom, ir.Var) else None


def _atom_names(atom: ir.Atom) -> set[str]:
    return {atom.name} if isinstance(atom, ir.Var) else set()


def _bound(e: ir.Loop) -> set[str]:
    """The names a loop binds: its state, its index, and everything bound in its blocks."""
    return {*e.state, *([e.index] if e.index else []), *_bound_in(e.body), *_bound_in(e.test)}


def _bound_in(block: ir.Block | None) -> Iterator[str]:
    """The names bound anywhere inside a block: lets, and nested loops' state and index."""
    for let in block.lets if block is not None else ():
        yield from ir.bound_names(let)
        if isinstance(let.expr, ir.Loop):
            yield from _bound(let.expr)
        elif isinstance(let.expr, ir.Case):
            yield from _bound_in(let.expr.then)
            yield from _bound_in(let.expr.orelse)


def _block_reads(block: ir.Block) -> Iterator[str]:
    for let in block.lets:
        yield from _reads(let.expr)
    yield from _atom_names(block.result)


def _reads(e: ir.Expr) -> Iterator[str]:
    """The variables an expression reads (those of nested blocks too)."""
    if isinstance(e, ir.Var):
        yield e.name
    elif isinstance(e, (ir.Prim, ir.Call, ir.Apply)):
        if isinstance(e, ir.Apply):
            yield from _atom_names(e.fn)
        for a in e.args:
            yield from _atom_names(a)
    elif isinstance(e, ir.MakeClosure):
        for a in e.captured:
            yield from _atom_names(a)
    elif isinstance(e, ir.MakeTuple):
        for a in e.items:
            yield from _atom_names(a)
    elif isinstance(e, ir.MakeDict):
        for a in [*e.keys, *e.values]:
            yield from _atom_names(a)
    elif isinstance(e, ir.GetItem):
        yield from _atom_names(e.base)
        yield from _atom_names(e.index)
    elif isinstance(e, ir.Case):
        yield from _atom_names(e.cond)
        yield from _block_reads(e.then)
        yield from _block_reads(e.orelse)
    elif isinstance(e, ir.Loop):
        for a in [*e.init, *e.next, *([e.seq] if e.seq is not None else []), *([e.stop] if e.stop else [])]:
            yield from _atom_names(a)
        yield from _block_reads(e.body)
        if e.test is not None:
            yield from _block_reads(e.test)
