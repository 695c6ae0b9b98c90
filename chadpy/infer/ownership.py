"""Ownership: where Python would update a list or an array in place, nobody else may see it.

The core IR is functional: `xs.append(v)` and `a += b` bind a new name to the updated
value (`let xs' = append(xs, v)`), and the derivative is that of a functional update.
Python updates the object itself, so every other reference to it sees the change.
Both agree exactly when no other reference to the object is used afterwards. This pass
checks that, per specialisation (it needs the types: `x += 1` on a float is no update
at all), with a linear discipline:

- a variable *owns* its value if the function created that list or array (a literal,
  a comprehension, `list(...)`, arithmetic, `np.zeros`, advanced indexing, a call of
  a function that returns a new one, ...) and it is the only reference to it;
- ownership moves with a copy `b = a` when `a` is not used again, to a view of an
  array nothing else refers to (`a = (x * 2).reshape(3)`), and through a branch or a
  loop when every path hands it on (a loop's variable owns its value if its initial
  value and every iteration's new value do);
- a copy `b = a` after which `a` is still used ends it, and so does passing the
  value to a function that may keep it (return it, store it: `Summary`, computed
  by the same walk over the callee; a function chadpy cannot read keeps everything);
- an in-place update needs its variable to own its value, not to be used again (in
  SSA form a later use can only be through another path to the same object), and
  nothing that refers to the object to be read later: a view of it (`a[1:]`,
  `a.T`, a row), a tuple, list, dict or closure holding it;
- an update of a list's or dict's element (`xs[t][i] = v`) needs more: the container
  owns its *elements* too (`[v]`, a comprehension, `xs.append(v)` of values made for
  it and not used again, marked `xs[*]` among the owned), and no value read out of it
  (`row = xs[t]`, a call given it) is read later.

So `xs = []; for ...: xs.append(v)` and `s = np.zeros(3); s += v` are accepted, and
`b = a; a += z; np.sum(b)` or `xs.append(v)` on an argument are rejected with the
line: chadpy never mutates a caller's argument and never computes a gradient of
code whose aliasing it changed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..errors import UnsupportedSyntax
from ..ir import nodes as ir
from ..ir.types import (
    BOTTOM,
    OBJECT,
    Arr,
    Class,
    Dct,
    Discrete,
    Float,
    Fn,
    Lst,
    Rec,
    Tup,
    VType,
    is_active,
)
from ..read.source import same_data
from ..rules.records import PUT_BACK, SET_FIELD
from ..rules.scalar import READ_UNASSIGNED
from ..rules.sequences import (
    AFTER_UPDATE,
    APPEND,
    DICT_SETDEFAULT,
    DICT_STORE,
    FILLED_AT,
    LIST_APPEND,
    LIST_INSERT,
    MOVES_ELEMENTS,
    POP,
    STORE,
    STORE_IN,
    UPDATES,
    VIEWED_AGAIN,
    WRITTEN_BACK,
)
from ..rules.tangents import PART_OR_NONE, ZEROS
from ..runtime.scalar import UNASSIGNED
from .references import Aliasing, References, atom_names, block_reads, mutable, name_of, reads_of

UsedAfter = Callable[[str], bool]  # whether a variable is read after the current point
Callee = Callable[[object, ir.Call], object]  # (caller's specialisation, call) -> the callee's, if any


def check_ownership(spec: object, callee: Callee, entry: bool = False) -> None:
    """Raise `UnsupportedSyntax` at an in-place update that another reference could see. The entry point's
    differentiated lists and arrays are its own: it updates a copy made on entry (`spec.copied`; the caller's
    stay as they are, and the derivative is at the values on entry)."""
    try:
        _Owners(spec, callee, strict=True, entry=entry).function()
        return
    except UnsupportedSyntax as refused:
        given = {p for p, t in zip(spec.fn.params, spec.sig) if is_active(t) and isinstance(t, (Lst, Arr))}
        if not (entry and given):
            raise
        first = refused
    owners = _Owners(spec, callee, strict=True, entry=entry)
    owners.given = given
    try:
        owners.function()
    except UnsupportedSyntax:
        raise first from None  # not an update of its own arguments alone: the first refusal stands
    spec.copied = tuple(p for p in spec.fn.params if p in owners.updated_given)


def check_outside_stores(specs: list) -> None:
    """Raise `UnsupportedSyntax` where a function stores a differentiated value into outside data
    (`LOG.append(loss)`) that another function of the call reads (by its name): what it reads would carry no
    derivative."""
    reads = {id(spec): _outside_reads(spec) for spec in specs} if any(s.stored_outside for s in specs) else {}
    for spec in specs:
        for root, loc in spec.stored_outside.items():
            held = _root_object(spec.fn.pyfunc, root)
            for other in specs:
                names, objects, originals = reads[id(other)]
                read = root in names or held is not _NO_OBJECT and any(same_data(held, v) for v in objects)
                reader = other.fn.name if other is not spec and read else next(iter(originals), None)
                if reader is not None:
                    raise UnsupportedSyntax(
                        f"this statement stores a differentiated value into `{root}`, which `{reader}` may read "
                        "in this call (a function chadpy reads, or one it runs as it is): what it reads would "
                        "carry no derivative",
                        loc,
                    )


_NO_OBJECT = object()


def _root_object(pyfunc: object, root: str) -> object:
    """The object an outside name of a function holds now (`_NO_OBJECT` if it is not known)."""
    code = getattr(pyfunc, "__code__", None)
    if code is None:  # a lifted nested function: its stores are compared by name alone
        return _NO_OBJECT
    if root in code.co_freevars:
        try:
            return pyfunc.__closure__[code.co_freevars.index(root)].cell_contents
        except ValueError:
            return _NO_OBJECT
    return pyfunc.__globals__.get(root, _NO_OBJECT)


def _outside_reads(spec: object) -> tuple[set[str], list[object], list[str]]:
    """The first names of the outside data a specialisation reads (`LOG` of `LOG`, `cfg` of `cfg.scale`), the
    objects those names hold, and the functions it calls that chadpy runs as they are (whatever they read,
    chadpy does not see)."""
    names, objects, originals = set(), [], []

    def block(b: ir.Block) -> None:
        for let in b.lets:
            e = let.expr
            refs = [a for a in ir.operands(e) if isinstance(a, ir.Ref)]
            names.update(a.path.split(".")[0] for a in refs)
            objects.extend(a.value for a in refs if "." not in a.path)
            if isinstance(e, ir.Call) and (spec.callees.get(id(e)) is None or spec.callees[id(e)].error is not None):
                originals.append(getattr(e.fn, "__name__", repr(e.fn)))
            for inner in ir.blocks(e):
                block(inner)

    block(spec.fn.body)
    return names, objects, originals


def summary(spec: object, callee: Callee) -> Summary:
    """What a call of a specialisation does to references: for each parameter, whether it may keep its
    argument (return it, store it where the result or a callee keeps it), and whether its result is a
    new object nobody else refers to. A recursive cycle assumes the worst."""
    if spec.references is None:
        n = len(spec.fn.params)
        # while being found out (a recursive call): it keeps everything; what it updates and reads, found by
        # walking it again with what the last walk found until that is what it assumed
        assumed = Summary((True,) * n, False, updates=(False,) * n, reads_back=(False,) * n)
        while True:
            spec.references, spec.recursive = assumed, False
            found = _Owners(spec, callee, strict=False).function()
            if not spec.recursive or (found.updates, found.reads_back) == (assumed.updates, assumed.reads_back):
                break
            assumed = assumed._replace(updates=found.updates, reads_back=found.reads_back)
        spec.references, spec.recursive = found, None
    elif spec.recursive is False:  # a call of it met while its summary is being found
        spec.recursive = True
    return spec.references


class Summary(NamedTuple):
    """What a call of a specialisation does to references: whether each parameter may be kept, and whether the
    result is a new object."""

    retains: tuple[bool, ...]
    fresh: bool
    items: tuple[Entry, ...] = ()  # a tuple result: which of its components are new objects nobody else holds
    each: bool = False  # a new list or dict result: whether its elements are new objects nobody else holds too
    updates: tuple[bool, ...] = ()  # for each parameter, whether the call may update its (data's) object in place
    reads_back: tuple[bool, ...] = ()  # for each parameter, whether a derivative rule of the call may read it later


class _Owners:
    """The walk over one specialisation's IR that tracks which variables own their lists and arrays, and
    checks each in-place update against it (`strict`), or finds its `Summary`."""

    def __init__(self, spec: object, callee: Callee, strict: bool, entry: bool = False):
        self.spec = spec
        self.callee = callee
        self.strict = strict  # raise at a rejected update (else: what it updates is simply not owned)
        self.entry = entry  # the function being differentiated (its caller is the user's code)
        self.escaped: set[str] = set()  # variables whose values a callee may keep
        self.types = spec.types
        # a tuple variable made of variables that owned their values and were not used again:
        # which of its components own theirs (so `a, b = b, a` and a branch's joined variables keep them):
        # 0 not, 1 owned, 2 owned with its elements (`EACH`), or (a packed tuple itself, such as an attempt's
        # result) its components' entries
        self.packed: dict[str, list[Entry]] = {}
        self.items: dict[str, list[str | None]] = {}  # a tuple variable -> the variables it was made of
        self.refs = References()  # which variables refer to the same objects
        self.aliasing = Aliasing(spec.types)  # what each expression does with the references it reads
        self.defined: set[str] = set()  # the variables bound so far on the way to the current let
        self.given: set[str] = set()  # parameters the function owns (copied on entry if it updates them)
        self.updated_given: set[str] = set()  # those it updates in place
        self.read_from: dict[str, set[str]] = {}  # a variable -> the containers whose elements it may be or hold
        # data (a list of positions, no derivative in it) the function or a callee updates in place though others may
        # hold it (a helper's argument: index lists updated down a recursion); call -> such arguments
        self.updated_data: set[str] = set()
        self.updated_by_calls: dict[int, tuple[ir.Let, list[str]]] = {}
        # the variables a derivative rule (here or in a callee) reads later: `pop` and `insert` must not move the
        # elements of those lists beforehand, nor a callee update them
        self.rule_reads: set[str] = set()
        self.place: tuple[ir.Block, int, UsedAfter] | None = None  # the block walked, the let's index, `outside`

    @functools.cached_property
    def settled(self) -> set[str]:
        """The updates another name settles on (`x.__updated_by__(t)`: x is t only if the update was in place);
        found where an update of a value of unknown kind asks."""
        body = self.spec.fn.body
        return {e.args[1].name for e in _prims(body) if e.op is AFTER_UPDATE and isinstance(e.args[1], ir.Var)}

    def function(self) -> Summary:
        """Walk the function's body; return which parameters it may keep a reference to, and whether
        its result is a new object it owns."""
        body = self.spec.fn.body
        end = self.block(body, set(self.given), lambda name: False)
        kept = self.escaped | atom_names(body.result)
        retains = tuple(bool(self.refs.referring(p) & kept) for p in self.spec.fn.params)
        result = name_of(body.result)
        fresh = (
            result in end
            and result not in self.escaped
            and not any(result in self.refs.referring(p, holding=False) for p in self.spec.fn.params)
        )
        items = tuple(self.packed[result]) if result in self.packed and result not in self.escaped else ()
        self.check_updated_by_calls()
        params = self.spec.fn.params
        updates = tuple(mutable(self.types.get(p)) and bool(self.refs.referring(p) & self.updated_data) for p in params)
        reads_back = tuple(bool(self.refs.referring(p) & self.rule_reads) for p in params)
        return Summary(retains, fresh, items, fresh and each(result) in end, updates, reads_back)

    def block(self, block: ir.Block, owned: set[str], outside: UsedAfter) -> set[str]:
        """Walk a block with the variables that own their values on entry; return those at its end.

        `outside(name)`: whether a variable is read after the block (by what follows it, or by
        the next iteration of a loop it is the body of)."""
        last = {}  # variable -> the index of the last let reading it (len for the result)
        for k, let in enumerate(block.lets):
            if self.dead_copy(let, block, outside):
                continue
            for name in self.aliasing.reads(let.expr):
                last[name] = k
        for name in atom_names(block.result):
            last[name] = len(block.lets)
        owned = set(owned)
        outer = self.place
        for k, let in enumerate(block.lets):
            self.place = (block, k, outside)
            self.let(let, owned, lambda name, k=k: last.get(name, -1) > k or outside(name))
            self.defined.update(ir.bound_names(let))
            if _raises(let):  # the rest of the block never runs
                break
        self.place = outer
        return owned

    def other_parts_later(self, name: str, k: object) -> bool:
        """Whether everything that reads the tuple `name` after the current let takes another of its components
        (`part_or_none(done, 1)` after `part_or_none(done, 0)`, the forward code's attempt taken apart), so that
        component k moves on though the tuple is read again."""
        if self.place is None:
            return False
        block, at, outside = self.place
        if outside(name) or name in atom_names(block.result):
            return False
        for let in block.lets[at + 1 :]:
            if name in set(self.aliasing.reads(let.expr)):
                component = _component(let.expr)
                if component is None or component[0] != name or component[1] == k:
                    return False
        return True

    def own(self, owned: set[str], name: str, entry: Entry) -> None:
        """Mark `name` as owning its value (1), its elements too (`EACH`), or as a packed tuple (a list)."""
        if isinstance(entry, list):
            self.packed[name], self.items[name] = entry, [None] * len(entry)
        if entry:
            owned.add(name)
        if entry == EACH:
            owned.add(each(name))

    def owning(self, a: ir.Atom, owned: set[str], after: UsedAfter) -> int:
        """How a variable not used again owns its value: 0 not, 1 owned, `EACH` with its elements."""
        if not (isinstance(a, ir.Var) and a.name in owned and not after(a.name)):
            return 0
        return EACH if each(a.name) in owned else 1

    def dead_copy(self, let: ir.Let, block: ir.Block, outside: UsedAfter) -> bool:
        """A copy that nothing reads: `views.py`'s `r = r.__viewed_again__(xs, ...)` of a list's element
        before r is assigned again (it reads r, but nothing reads what it makes)."""
        e, target = let.expr, let.target
        copy = isinstance(e, ir.Prim) and e.op is VIEWED_AGAIN and not self.aliasing.array_view(e)
        if not copy or not isinstance(target, str) or outside(target):
            return False
        return all(target not in reads_of(other.expr) for other in block.lets) and target not in atom_names(
            block.result
        )

    def let(self, let: ir.Let, owned: set[str], after: UsedAfter) -> None:
        """Update `owned` past one let; `after(name)`: whether a variable is read after it."""
        e, target = let.expr, let.target
        e = self.spec.methods.get(id(e), e)  # a method call, a property, an object's call: the call it makes
        if isinstance(e, ir.Case):
            self.case(let, e, owned, after)
        elif isinstance(e, ir.Loop):
            self.loop(let, e, owned, after)
        elif isinstance(e, ir.Var):
            self.copy(e.name, target, owned, after)
        elif isinstance(e, ir.Prim) and e.op is AFTER_UPDATE:  # a copy of the object it settles on
            source = name_of(self.aliasing.after_update(e))
            if source is not None:
                self.copy(source, target, owned, after)
        elif isinstance(e, ir.Prim) and e.op is WRITTEN_BACK:  # the base's object, written through its view
            self.copy(e.args[0].name, target, owned, after)
        elif isinstance(e, ir.Prim) and e.op is FILLED_AT and isinstance(e.args[0], ir.Var):
            self.copy(e.args[0].name, target, owned, after)  # a tangent's container, a new part put in it
        elif (
            isinstance(e, ir.Prim) and e.op is VIEWED_AGAIN and not self.aliasing.array_view(e)
        ):  # a copy keeps its value
            self.copy(e.args[0].name, target, owned, after)
        elif (component := _component(e)) is not None and component[0] in self.packed:
            # a component of a packed tuple (`x = t[0]`; an attempt's completed result's, `part_or_none(done, 0)`)
            base, k = component
            if not after(base) or self.other_parts_later(base, k):
                self.own(owned, target, self.packed[base][k])
            self.refs.alias(target, self.items[base][k])
        else:
            if isinstance(e, ir.MakeTuple) and isinstance(target, str):
                self.packed[target] = [EACH if _unassigned(a) else self.owning(a, owned, after) for a in e.items]
                for k, a in enumerate(e.items):  # a packed tuple inside (an inner `try`'s attempt, handed on)
                    if isinstance(a, ir.Var) and a.name in self.packed and not after(a.name):
                        self.packed[target][k] = list(self.packed[a.name])
                self.items[target] = [name_of(a) for a in e.items]
            elif isinstance(e, ir.Apply) and e.catch is not None:
                # an attempt: <ok, exception, result>; the result's components new where the callee's are
                items = self.attempted_items(e)
                if items and isinstance(target, str):
                    self.packed[target], self.items[target] = [0, 0, list(items)], [None] * 3
                elif items and len(target) == 3:  # taken apart where it is made (forward code's)
                    self.own(owned, target[2], list(items))
            elif isinstance(e, ir.Call) or isinstance(e, ir.Apply) and e.catch is None:
                self.new_components(e, target, owned)
            elif self.aliasing.new_arrays(e, target):  # `w, v = np.linalg.eigh(a)`: each part a new array
                n = len(self.types[target].items)
                self.packed[target], self.items[target] = [True] * n, [None] * n
            self.called_with_data_updated(let, e)
            self.note_rule_reads(e)
            for a in self.consumed(e):
                _consume(a, owned)
                self.escaped.add(a.name)
            viewed = self.aliasing.viewed(e, target)
            if viewed and not self.aliasing.is_view(e) and not (isinstance(e, ir.Prim) and e.op.aliases):
                self.refs.holders.add(target)  # a container holding them (not their data)
            for a in viewed:
                self.refs.views.setdefault(target, set()).update({a.name} | self.refs.views.get(a.name, set()))
            if isinstance(e, ir.Prim) and e.op is VIEWED_AGAIN:  # the same view, its version current again
                self.refs.alias(target, e.args[0].name)
            if self.aliasing.is_view(e) and len(viewed) == 1 and viewed[0].name in owned:
                owned.add(target)  # a view of an array the function owns: an update through either checks the other
            if isinstance(e, ir.Prim) and e.inplace:
                self.update(let, e, owned, after)
            if isinstance(e, ir.Prim) and (e.op.statement is not None or e.op is PUT_BACK) and self.strict:
                self.stored_outside(let, e)
            if isinstance(target, str) and self.fresh(e, target):
                owned.add(target)
                if self.each_fresh(e, owned, after):
                    owned.add(each(target))
            self.note_read_from(let, e)

    def new_components(self, e: ir.Call | ir.Apply, target: str | tuple[str, ...], owned: set[str]) -> None:
        """A call returning a tuple whose components are new objects nobody else holds (`Summary.items`: a forward
        form's <value, tangent>): each part is owned where it is taken apart, or the tuple packed."""
        known = self.callee_summary(e)
        if known is None or not known.items:
            return
        if isinstance(target, str):
            self.packed[target], self.items[target] = list(known.items), [None] * len(known.items)
        elif len(target) == len(known.items):
            for t, own in zip(target, known.items):
                self.own(owned, t, own)

    def copy(self, source: str, target: str | tuple[str, ...], owned: set[str], after: UsedAfter) -> None:
        """`let target = source`: ownership moves along if `source` is not used again. A copy nobody
        reads (`copies.py` leaves `b = a` so when it made b's reads a's) changes nothing."""
        if isinstance(target, str) and not after(target):
            return
        moves = not after(source)
        if isinstance(target, tuple) and isinstance(self.types.get(source), Arr):
            for t in target:  # an array unpacked into its rows: each a view of it (a write to it shows in them)
                if isinstance(self.types.get(t), Arr):  # (a 1-d array's elements are numbers, copies)
                    self.refs.views.setdefault(t, set()).update({source} | self.refs.views.get(source, set()))
            return
        if isinstance(target, tuple):  # destructuring a tuple: each target is one of its components
            if moves and source in self.packed:
                for t, own in zip(target, self.packed[source]):
                    self.own(owned, t, own)
            for t, item in zip(target, self.items.get(source, ())):
                self.refs.alias(t, item)
            return
        if moves and source in owned:
            owned.add(target)
            if each(source) in owned:
                owned.add(each(target))
        if moves and source in self.packed:
            self.packed[target] = self.packed[source]
            self.items[target] = self.items[source]
        owned.discard(source)
        self.refs.alias(target, source)

    def callee_summary(self, e: ir.Call | ir.Apply) -> Summary | None:
        """What the specialisation a call runs does to references, where chadpy read it."""
        spec = self.callee(self.spec, e)
        return summary(spec, self.callee) if spec is not None and spec.error is None else None

    def attempted_items(self, e: ir.Apply) -> tuple[bool, ...]:
        """Which components of the tuple an attempted function returns are new objects nobody else holds."""
        known = self.callee_summary(e)
        return known.items if known is not None else ()

    def by_argument(self, e: ir.Call | ir.Apply, values: tuple[bool, ...]) -> list[tuple[ir.Atom, bool]]:
        """Each argument of a call with what `values` (one per parameter of its callee, from its `Summary`) says
        of it: a function chadpy lifted (a closure, an attempted statement's function) takes its environment
        first."""
        fn = self.types.get(e.fn.name) if isinstance(e, ir.Apply) and isinstance(e.fn, ir.Var) else None
        lifted = isinstance(fn, Fn) and isinstance(fn.code, ir.Function)
        return list(zip(e.args, values[1:] if lifted else values))

    def consumed(self, e: ir.Expr) -> list[ir.Var]:
        """The variables a callee may keep a reference to for good (it may store or return them)."""
        args = [a for a in getattr(e, "args", ()) if isinstance(a, ir.Var)]
        attempt = isinstance(e, ir.Apply) and e.catch is not None  # an attempted statement's function
        if isinstance(e, ir.Call) or attempt:
            known = self.callee_summary(e)
            if known is not None:
                return [a for a, keeps in self.by_argument(e, known.retains) if keeps and isinstance(a, ir.Var)]
            if isinstance(e, ir.Call):
                return args
        if isinstance(e, ir.Apply) or isinstance(e, ir.Prim) and e.op.aliases == "unknown":
            return args  # a function value, or a call chadpy cannot read: it may keep anything
        return []

    def fresh(self, e: ir.Expr, target: str) -> bool:
        """Whether `e` makes a new list or array (the target then owns it)."""
        if isinstance(e, (ir.MakeTuple, ir.MakeList, ir.MakeDict, ir.MakeRecord)):
            return not isinstance(e, ir.MakeTuple)
        if isinstance(e, ir.Read):  # a list's slice and an array's advanced indexing copy
            base = self.types.get(name_of(e.base))
            return (
                isinstance(e, ir.Slice) and isinstance(base, Lst) or isinstance(base, Arr) and self.aliasing.advanced(e)
            )
        if isinstance(e, ir.Prim):
            return not e.op.aliases and mutable(self.types.get(target))  # a new list or array
        if isinstance(e, (ir.Call, ir.Apply)) and not getattr(e, "catch", None):  # a callee returning a new object
            known = self.callee_summary(e)
            return known is not None and known.fresh
        return False

    def update(self, let: ir.Let, e: ir.Prim, owned: set[str], after: UsedAfter) -> None:
        """`xs.append(v)`, `a += b`: Python updates the object in place; allowed if nobody else sees it:
        the variable owns it, is not read again, and no view of it is."""
        xs = e.args[0]
        if not mutable(self.types.get(name_of(xs))):
            return  # `x += 1` on a number or a tuple: a new value in Python too
        self.refs.alias(let.target, xs.name)  # the same object, updated
        moves = e.op in MOVES_ELEMENTS and isinstance(self.types.get(xs.name), Lst)
        if moves and self.strict and self.refs.referring(xs.name) & self.rule_reads:
            raise UnsupportedSyntax(
                f"`{e.op.name}` moves the elements of a list that an earlier operation or call was given, and "
                "its derivative reads that list when the backward pass runs: copy it first (`xs = list(xs)`)",
                let.loc,
            )
        if xs.name in owned and not after(xs.name) and not self.viewed_later(xs.name, after):
            inner = e.op is STORE_IN and not isinstance(self.types.get(xs.name), Arr)  # an element's element
            if inner and (each(xs.name) not in owned or self.elements_read_later(xs.name, after)):
                if self.strict:
                    raise UnsupportedSyntax(
                        "this assignment updates an element of a list or dict in place that something else may "
                        "also hold (a value read out of it and used later, a value put into it that is used "
                        "elsewhere too, or a container the caller gave): chadpy updates an element only where "
                        "the function made the container and each element for it (`[np.zeros(3) for _ in "
                        "range(n)]`); or build the element anew and assign it (`xs[t] = ...`)",
                        let.loc,
                    )
                owned.discard(xs.name)
                return
            if each(xs.name) in owned and self.moved_in(e, owned, after):
                owned.add(each(let.target))
            owned.discard(xs.name)
            owned.discard(each(xs.name))
            self.updated_given |= self.refs.updated_by(xs.name) & self.given
            return
        if self.data_in_place(xs.name, e, let):  # updated in place as Python does: every name of it sees the change
            self.updated_data |= {xs.name, let.target}
            owned.discard(xs.name)
            return
        if not self.strict:  # finding out what a function retains: the updated value is not owned
            owned.discard(xs.name)
            return
        if self.of_unknown_kind(xs.name, e) and not after(xs.name) and let.target not in self.settled:
            self.spec.number_updates.add(id(e))  # checked when the code runs: a number is not updated in place
            return
        kind = {Lst: "a list", Dct: "a dict", Rec: "an object"}.get(type(self.types.get(xs.name)), "an array")
        what = (
            "this attribute assignment"
            if e.op is SET_FIELD
            else f"`{e.op.name}`"
            if e.op in UPDATES
            else "this augmented assignment"
        )
        raise UnsupportedSyntax(
            f"{what} updates {kind} in place that another name, a view, a container or the caller may also "
            f"hold: chadpy updates only {kind} the function itself created and holds under one name (never a "
            f"caller's); copy it first (`xs = list(xs)`, `a = a.copy()`), or write `a = a + b` for a new one",
            let.loc,
        )

    def stored_outside(self, let: ir.Let, e: ir.Prim) -> None:
        """A statement run as written that stores a differentiated value (its primal) into an object the
        function did not make, which the function does not read again (`self.best = f`, `LOG.append(loss)`):
        exact if nothing else in this call reads it either. The object's root is a parameter: only the function
        being differentiated may (its caller is the user's code); outside data: checked over the whole call
        (`check_outside_stores`)."""
        active = any(isinstance(a, ir.Var) and is_active(self.types.get(a.name)) for a in e.args)
        if e.op is PUT_BACK:  # `local_state.py`'s: the state given back into a parameter's object
            root, stores = e.args[0].name, True
            if is_active(self.types.get(root)):
                raise UnsupportedSyntax(
                    f"this function changes an attribute of `{root}`, an object its caller holds that carries a "
                    "derivative here: chadpy never changes such an object; make a new one (or return the new value)",
                    let.loc,
                )
        else:
            root, stores = e.op.statement.root, e.op.statement.stores
        if not (stores and root is not None and active):
            return
        if root in self.spec.fn.params:
            if not self.entry:
                raise UnsupportedSyntax(
                    f"this statement stores a differentiated value into `{root}`, which the caller gave: "
                    "the caller could read it again, and its derivative would be lost; chadpy allows such a store "
                    "only in the function being differentiated",
                    let.loc,
                )
        else:
            self.spec.stored_outside[root] = let.loc

    def data_in_place(self, name: str, e: ir.Prim, let: ir.Let) -> bool:
        """An update of a list, dict or array no derivative flows through (`r[n] = k` on a list of positions a
        caller gave), which the run-time half makes in place: exact whoever else holds it, as long as no
        derivative rule reads it when the backward pass runs after a callee changed it (`check_updated_by_calls`;
        the function's own writes are logged and rewound for its rules)."""
        t, after = self.types.get(name), self.types.get(let.target)
        return e.op in UPDATES and e.op is not STORE_IN and mutable(t) and not is_active(t) and not is_active(after)

    def called_with_data_updated(self, let: ir.Let, e: ir.Expr) -> None:
        """A call that may update data it is given in place: remember which (checked at the end)."""
        if not isinstance(e, (ir.Call, ir.Apply)):
            return
        known = self.callee_summary(e)
        if known is None or not known.updates:
            return
        changed = [a.name for a, k in self.by_argument(e, known.updates) if k and isinstance(a, ir.Var)]
        if changed:
            self.updated_by_calls[id(let)] = (let, changed)
            self.updated_data.update(changed)

    def note_rule_reads(self, e: ir.Expr) -> None:
        """The variables whose values a derivative rule may read when the backward pass runs: an operation's
        arguments, a callee's where its rules read them (all of an unknown callee's)."""
        if isinstance(e, ir.Prim) and not e.op.discrete and e.op not in UPDATES:
            self.rule_reads.update(a.name for a in e.args if isinstance(a, ir.Var))
        elif isinstance(e, ir.Read) and isinstance(e.index, ir.Var):  # `a[idx]`: its rule reads the positions
            self.rule_reads.add(e.index.name)
        elif isinstance(e, (ir.Call, ir.Apply)):
            known = self.callee_summary(e)
            if known is None or not known.reads_back:  # a call chadpy cannot read: its rules may read anything
                self.rule_reads.update(a.name for a in e.args if isinstance(a, ir.Var))
            else:
                pairs = self.by_argument(e, known.reads_back)
                self.rule_reads.update(a.name for a, r in pairs if r and isinstance(a, ir.Var))

    def check_updated_by_calls(self) -> None:
        """Raise where a callee updates data in place that a derivative rule here reads when the backward pass runs
        (it would see the callee's changes, which only the callee's own log rewinds)."""
        if not self.strict:
            return
        for let, changed in self.updated_by_calls.values():
            for name in changed:
                if self.refs.referring(name) & self.rule_reads:
                    raise UnsupportedSyntax(
                        f"this call updates `{name}` in place, and a derivative rule of this function reads it when "
                        "the backward pass runs: pass a copy (`list(xs)`), or compute what the rule needs first",
                        let.loc,
                    )

    def of_unknown_kind(self, name: str, e: ir.Prim) -> bool:
        """`a op= b` where a is typed as an array of unknown shape: perhaps a number (data of a kind seen only
        when the code runs, such as a class's attribute), which Python does not update in place."""
        t = self.types.get(name)
        return isinstance(t, Arr) and t.rank is None and e.op not in UPDATES and e.op is not SET_FIELD

    def moved(self, a: ir.Atom, owned: set[str], after: UsedAfter) -> bool:
        """Whether a value put into a container is a new object nobody else holds (or holds no object at all)."""
        if not isinstance(a, ir.Var):
            return isinstance(a, ir.Const)
        if not _holds_objects(self.types.get(a.name)):
            return True
        return a.name in owned and not after(a.name) and not self.viewed_later(a.name, after)

    def moved_in(self, e: ir.Prim, owned: set[str], after: UsedAfter) -> bool:
        """Whether the elements an update puts into its list or dict are new objects nobody else holds."""
        if e.op in (POP, STORE_IN):
            return True
        if e.op in (LIST_APPEND, APPEND):
            return self.moved(e.args[1], owned, after)
        if e.op in (LIST_INSERT, STORE, DICT_STORE, DICT_SETDEFAULT):
            return self.moved(e.args[2], owned, after)
        if len(e.args) == 2:  # `xs.extend(ys)`, `xs += ys`: ys's elements, if ys owns them and is not used again
            ys = e.args[1]
            return self.moved(ys, owned, after) and (not isinstance(ys, ir.Var) or each(ys.name) in owned)
        return False

    def each_fresh(self, e: ir.Expr, owned: set[str], after: UsedAfter) -> bool:
        """For a new list or dict: whether its elements are new objects nobody else holds too."""
        if isinstance(e, (ir.MakeList, ir.MakeDict)):
            items = e.items if isinstance(e, ir.MakeList) else e.values
            objects = [a.name for a in items if isinstance(a, ir.Var) and _holds_objects(self.types.get(a.name))]
            return len(set(objects)) == len(objects) and all(self.moved(a, owned, after) for a in items)
        if isinstance(e, (ir.Call, ir.Apply)):
            known = self.callee_summary(e)
            return known is not None and known.each
        return isinstance(e, ir.Prim) and e.op is ZEROS  # a zero tangent: new all the way down

    def note_read_from(self, let: ir.Let, e: ir.Expr) -> None:
        """Record the containers whose elements the let's variables may be or hold (`row = xs[t]`, `f(xs)`)."""
        if isinstance(e, (ir.Var, ir.MakeTuple, ir.MakeList, ir.MakeDict, ir.MakeRecord, ir.MakeClosure)):
            return  # a copy, or a container holding the variables themselves (`refs` follows those)
        if isinstance(e, ir.Prim) and (e.inplace or e.op in (AFTER_UPDATE, WRITTEN_BACK, VIEWED_AGAIN)):
            return  # an update: the same object (what it puts in, the container holds: `refs`)
        if isinstance(e, ir.Prim) and e.op is ZEROS:
            return  # a zero tangent: new all the way down, it holds nothing of its argument
        sources = {a.name for a in ir.operands(e) if isinstance(a, ir.Var) and _holds_elements(self.types.get(a.name))}
        if sources:
            for t in ir.bound_names(let):
                if _holds_objects(self.types.get(t)):
                    self.read_from.setdefault(t, set()).update(sources)

    def elements_read_later(self, name: str, after: UsedAfter) -> bool:
        """Whether a value read out of the list or dict `name` holds (an element, a container or view of one, an
        element of one) is read later."""
        containers = self.refs.earlier_names(name)
        readers, frontier = set(), containers
        while frontier:
            read = {v for v, sources in self.read_from.items() if sources & frontier}
            frontier = set().union(*map(self.refs.referring, read)) - readers - containers
            readers |= frontier
        return any(v in self.defined and after(v) for v in readers)

    def viewed_later(self, name: str, after: UsedAfter) -> bool:
        """Whether anything else referring to the object `name` holds, or to an array it is a view of,
        is read later."""
        objects = self.refs.earlier_names(name)
        bases = {b for n in objects if n not in self.refs.holders for b in self.refs.views.get(n, ())}
        if any(map(after, bases)):
            return True
        referring = self.refs.referring(name).union(*map(self.refs.referring, bases))
        earlier = objects.union(*map(self.refs.earlier_names, bases))  # a loop's first value: read at its entry
        return any(v in self.defined and after(v) for v in referring - earlier)

    def case(self, let: ir.Let, e: ir.Case, owned: set[str], after: UsedAfter) -> None:
        """Each branch on its own; a target owns its value if it does at the end of both branches."""
        targets = ir.bound_names(let)
        ends, shapes, eaches = [], [], []
        branches = [b for b in (e.then, e.orelse) if not any(map(_raises, b.lets))] or [e.then, e.orelse]
        for branch in branches:  # one that raises never reaches the join
            end = self.block(branch, owned, after)
            result = name_of(branch.result)
            moves = result is not None and not after(result)
            own = moves and result in end or _unassigned(branch.result)  # nothing else holds what is not there
            own_each = moves and each(result) in end or _unassigned(branch.result)
            packed = self.packed.get(result) if moves else None
            end.discard(result)  # handed on to the target
            end.discard(each(result))
            ends.append(end)
            shapes.append((own, packed))
            eaches.append(own_each)
            if isinstance(let.target, str):
                self.refs.alias(let.target, result)
            else:  # each target is the same component of the branch's tuple
                for t, item in zip(targets, self.items.get(result, ())):
                    self.refs.alias(t, item)
        owned.intersection_update(*ends)
        packs = [p for _, p in shapes]
        same = all(p is not None and len(p) == len(packs[0]) for p in packs)
        if isinstance(let.target, str):
            if all(own for own, _ in shapes):
                owned.add(let.target)
                if all(eaches):
                    owned.add(each(let.target))
            if same:
                self.packed[let.target] = [_joined(*(p[k] for p in packs)) for k in range(len(packs[0]))]
                self.items[let.target] = self._joined_items(e, len(packs[0]))
        elif same and len(packs[0]) == len(targets):
            for k, t in enumerate(targets):
                self.own(owned, t, _joined(*(p[k] for p in packs)))

    def _joined_items(self, e: ir.Case, width: int) -> list[str]:
        """For a case whose branches both end in a tuple: a name per component standing for both branches'
        components (so an update through the joined tuple finds their views)."""
        out = []
        for k in range(width):
            joined = f"<component {k} of {id(e)}>"  # not a variable of the program: it links the branches'
            for branch in (e.then, e.orelse):
                items = self.items.get(name_of(branch.result), ())
                self.refs.alias(joined, items[k] if k < len(items) else None)
            out.append(joined)
        return out

    def loop(self, let: ir.Let, e: ir.Loop, owned: set[str], after: UsedAfter) -> None:
        """A state variable owns its value if its initial value does and every iteration hands a value it
        owns to the next: assume it for all such, drop those whose new value is not, until stable."""
        bound = _bound(e)
        # read again by every iteration (not the first values of the state: read once, at the loop's entry)
        entry = {a.name for a in e.init if isinstance(a, ir.Var)} - set(_reads_inside(e, self.aliasing.reads))
        outer = {n for n in self.aliasing.reads(e) if n not in bound and n not in entry}
        assumed = {p for p, a in zip(e.state, e.init) if name_of(a) in owned and not after(a.name)}
        assumed |= {each(p) for p, a in zip(e.state, e.init) if p in assumed and each(a.name) in owned}
        for p, a, n in zip(e.state, e.init, e.next):
            _consume(a, owned)
            self.refs.alias(p, name_of(a), name_of(n))  # the first iteration's value, or the previous one's
        nexts = {n.name for n in e.next if isinstance(n, ir.Var)}
        while True:
            self.defined -= bound  # what the body binds is not bound yet when an iteration starts
            self.defined.update(e.state)
            start = owned | assumed
            if isinstance(e, ir.WhileLoop):
                start = self.block(e.test, start, lambda n: n in outer or n in e.state or after(n))
            end = self.block(e.body, start, lambda n: n in outer or n in nexts or after(n))
            kept = {
                p for p, n in zip(e.state, e.next) if p in assumed and name_of(n) in end and name_of(n) not in outer
            }
            kept |= {
                each(p) for p, n in zip(e.state, e.next) if p in kept and each(p) in assumed and each(n.name) in end
            }
            if kept == assumed:
                break
            assumed = kept
        owned.intersection_update(end)  # what the loop consumed is not owned after it
        for t, p in zip(ir.bound_names(let), e.state):
            if p in assumed:
                owned.add(t)
            if each(p) in assumed:
                owned.add(each(t))
            self.refs.alias(t, p)


EACH = 2  # in `packed`: a component that owns its value and its elements


Entry = int | list  # a component's ownership in `packed`: 0, 1, `EACH`, or a packed tuple's entries


def _joined(*entries: Entry) -> Entry:
    """A component's ownership where branches join: the least of them (a packed tuple's, component by component)."""
    if all(isinstance(e, list) and len(e) == len(entries[0]) for e in entries):
        return [_joined(*parts) for parts in zip(*entries)]
    return min(e if isinstance(e, int) else 1 for e in entries)


def each(name: str) -> str:
    """The mark, among the owned variables, that the list or dict `name` owns its elements too."""
    return f"{name}[*]"


def _holds_objects(t: VType | None) -> bool:
    """Whether a value of type t is or holds an object updated in place (a list, dict, array, object)."""
    if isinstance(t, Tup):
        return any(map(_holds_objects, t.items))
    if t is None or t is BOTTOM or isinstance(t, Float):
        return False
    return t is OBJECT or isinstance(t, Class) if isinstance(t, Discrete) else True


def _holds_elements(t: VType | None) -> bool:
    """Whether a value of type t is a container whose elements may be objects updated in place."""
    if isinstance(t, Tup):
        return any(map(_holds_objects, t.items))
    if isinstance(t, Lst):
        return _holds_objects(t.item)
    if isinstance(t, Dct):
        return any(_holds_objects(v) for _, v in t.fields) if t.fields is not None else _holds_objects(t.item)
    return isinstance(t, (Rec, Fn)) or t is OBJECT


def _component(e: ir.Expr) -> tuple[str, int] | None:
    """(t, k) for an expression reading component k of the tuple variable t (`t[0]`, and `part_or_none(t, 0)`, an
    attempt's completed result's component, None where it raised)."""
    if isinstance(e, (ir.Proj, ir.Index)) and isinstance(e.base, ir.Var) and isinstance(e.index, ir.Const):
        return e.base.name, e.index.value
    if isinstance(e, ir.Prim) and e.op is PART_OR_NONE and isinstance(e.args[0], ir.Var):
        k = e.args[1]
        return (e.args[0].name, k.value) if isinstance(k, ir.Const) else None
    return None


def _prims(block: ir.Block) -> Iterator[ir.Prim]:
    """The primitive operations of a block, those of its nested blocks too."""
    for let in block.lets:
        if isinstance(let.expr, ir.Prim):
            yield let.expr
        for inner in ir.blocks(let.expr):
            yield from _prims(inner)


def _raises(let: ir.Let) -> bool:
    """Whether the let never completes: the read of a variable not assigned on its path, a `raise`."""
    e = let.expr
    return isinstance(e, ir.Prim) and (e.op is READ_UNASSIGNED or getattr(e.op.statement, "raises", False))


def _unassigned(a: ir.Atom) -> bool:
    """The value of a variable not assigned on a path (a branch's join): no object at all."""
    return isinstance(a, ir.Ref) and a.value is UNASSIGNED


def _consume(atom: ir.Atom, owned: set[str]) -> None:
    """Another reference to the atom's value may exist from now on."""
    if isinstance(atom, ir.Var):
        owned.discard(atom.name)


def _bound(e: ir.Loop) -> set[str]:
    """The names a loop binds: its state, its index, and everything bound in its blocks."""
    return {*ir.scoped(e), *(n for b in ir.blocks(e) for n in _bound_in(b))}


def _bound_in(block: ir.Block) -> Iterator[str]:
    """The names bound anywhere inside a block: lets, and nested loops' state and index."""
    for let in block.lets:
        yield from ir.bound_names(let)
        yield from ir.scoped(let.expr)
        for b in ir.blocks(let.expr):
            yield from _bound_in(b)


def _reads_inside(e: ir.Loop, reads: Callable[[ir.Expr], Iterator[str]]) -> Iterator[str]:
    """The variables a loop's blocks and its next state read (every iteration)."""
    for a in ir.loop_results(e) + ([e.seq] if isinstance(e, ir.ForLoop) else []):
        yield from atom_names(a)
    for b in ir.blocks(e):
        yield from block_reads(b, reads)
