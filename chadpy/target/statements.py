"""The target language: the small subset of Python that CHAD generates.

Its expressions are in `expressions.py`; its statements are here. They include
the accumulator operations of Fig. 8 (`AccPush`, `AccOne`, `AccPop`) as
first-class nodes, so the simplifier can turn them into plain local variables.
`codegen` turns all of this into gast and then into source text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import is_not
from typing import TYPE_CHECKING

from .expressions import Expr, Item, Lit, Name, TupleX

if TYPE_CHECKING:
    from ..errors import Loc


# ---------------------------------------------------------------- statements
#
# Each statement declares its traversal, so that no pass needs to know its fields: the names it
# binds, the names it reads besides those in its expressions, its expressions, the statement
# lists nested in it, and `map`: a copy with its names (bound or read), expressions and nested
# lists transformed. `comment` is the rule (or note) that made it; `loc` the user's source line it
# comes from, which the printer shows above a run of statements from that line.

Names = Callable[[str], str]
Exprs = Callable[[Expr], Expr]
Bodies = Callable[[list["Stmt"]], list["Stmt"]]


def replace(stmt: Stmt, **changes: object) -> Stmt:
    """`dataclasses.replace` for a statement (a plain dataclass: every field set by `__init__`, no
    `__post_init__`), without its inspection of the fields on every call: the passes rebuild
    statements often, and this is most of what the one-off transformation spends on it."""
    new = object.__new__(type(stmt))
    new.__dict__.update(stmt.__dict__, **changes)
    return new


@dataclass(eq=False)
class Stmt:
    """A statement of the generated code, with the CHAD rule that made it (`comment`) and the user's line (`loc`)."""

    comment: str = field(default="", kw_only=True)
    loc: Loc | None = field(default=None, kw_only=True)

    def binds(self) -> list[str]:
        return []

    def reads(self) -> list[str]:
        return []

    def exprs(self) -> list[Expr]:
        return []

    def bodies(self) -> list[list[Stmt]]:
        return []

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return self


@dataclass(eq=False)
class Assign(Stmt):
    """`a, b = value` (one target: `a = value`)."""

    targets: list[str]  # more than one: tuple unpacking
    value: Expr

    def binds(self) -> list[str]:
        return self.targets

    def exprs(self) -> list[Expr]:
        return [self.value]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, targets=[name(t) for t in self.targets], value=expr(self.value))


@dataclass(eq=False)
class Accum(Stmt):
    """`name += value` (`real`) or `name = add(name, value)`: add into a local cotangent."""

    name: str
    value: Expr
    real: bool

    def binds(self) -> list[str]:
        return [self.name]

    def reads(self) -> list[str]:
        return [self.name]

    def exprs(self) -> list[Expr]:
        return [self.value]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, name=name(self.name), value=expr(self.value))


@dataclass(eq=False)
class If(Stmt):
    """`if test: body else: orelse`."""

    test: Expr
    body: list[Stmt]
    orelse: list[Stmt]

    def exprs(self) -> list[Expr]:
        return [self.test]

    def bodies(self) -> list[list[Stmt]]:
        return [self.body, self.orelse]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, test=expr(self.test), body=body(self.body), orelse=body(self.orelse))


@dataclass(eq=False)
class Try(Stmt):
    """`try: body except catch as caught: handler` (the forward pass of a call a `try` statement guards)."""

    body: list[Stmt]
    catch: Expr
    caught: str
    handler: list[Stmt]

    def binds(self) -> list[str]:
        return [self.caught]

    def exprs(self) -> list[Expr]:
        return [self.catch]

    def bodies(self) -> list[list[Stmt]]:
        return [self.body, self.handler]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(
            self, catch=expr(self.catch), caught=name(self.caught), body=body(self.body), handler=body(self.handler)
        )


@dataclass(eq=False)
class Def(Stmt):
    """A function of the generated code (a specialisation's forward or backward half, or a backpropagator closure
    before lifting); `slots` is the size of a backpropagator's Γ."""

    name: str
    params: list[str]
    body: list[Stmt]
    slots: int | None = field(default=None, kw_only=True)  # a backpropagator's Γ: how many slots it has

    def binds(self) -> list[str]:
        return [self.name, *self.params]  # the parameters in its own scope

    def bodies(self) -> list[list[Stmt]]:
        return [self.body]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, name=name(self.name), body=body(self.body))


@dataclass(eq=False)
class For(Stmt):
    """`for target in iter: body` (the forward pass of a `for` loop)."""

    target: str
    iter: Expr
    body: list[Stmt]

    def binds(self) -> list[str]:
        return [self.target]

    def exprs(self) -> list[Expr]:
        return [self.iter]

    def bodies(self) -> list[list[Stmt]]:
        return [self.body]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, target=name(self.target), iter=expr(self.iter), body=body(self.body))


@dataclass(eq=False)
class While(Stmt):
    """`while True: body` (the forward pass of a `while` loop; the test is in the body)."""

    body: list[Stmt]

    def bodies(self) -> list[list[Stmt]]:
        return [self.body]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, body=body(self.body))


@dataclass(eq=False)
class Break(Stmt):
    """`break`."""

    pass


@dataclass(eq=False)
class Record(Stmt):
    """`tape.append((a, b))`: one iteration's primal values, for the reverse pass."""

    tape: str
    names: list[str]

    def reads(self) -> list[str]:
        return [self.tape, *self.names]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, tape=name(self.tape), names=[name(n) for n in self.names])


@dataclass(eq=False)
class Replay(Stmt):
    """`for a, b in reversed(tape): body`: the iterations again, newest first, without recursion.

    With `index`, a `for` loop's count is not on the tape but read again from the sequence it
    counted (`positions`, a range or a list): `for k, (a, b) in zip(reversed(positions[:len(tape)]),
    reversed(tape))`."""

    tape: str
    names: list[str]
    body: list[Stmt]
    floats: tuple[str, ...] = field(default=(), kw_only=True)  # the carried cotangents that are floats (`fuse`)
    index: str | None = field(default=None, kw_only=True)
    positions: str | None = field(default=None, kw_only=True)

    def binds(self) -> list[str]:
        return self.names if self.index is None else [self.index, *self.names]

    def reads(self) -> list[str]:
        return [self.tape] if self.positions is None else [self.tape, self.positions]

    def bodies(self) -> list[list[Stmt]]:
        return [self.body]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(
            self,
            tape=name(self.tape),
            names=[name(n) for n in self.names],
            body=body(self.body),
            floats=tuple(map(name, self.floats)),
            index=self.index and name(self.index),
            positions=self.positions and name(self.positions),
        )


@dataclass(eq=False)
class Return(Stmt):
    """`return value`."""

    value: Expr

    def exprs(self) -> list[Expr]:
        return [self.value]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, value=expr(self.value))


@dataclass(eq=False)
class Del(Stmt):
    """`del a, b`: the forward pass lets go of arrays nothing reads any more (`release`)."""

    names: list[str]

    def reads(self) -> list[str]:
        return self.names

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, names=[name(n) for n in self.names])


@dataclass(eq=False)
class Do(Stmt):
    """An expression evaluated for its effect (a call)."""

    value: Expr

    def exprs(self) -> list[Expr]:
        return [self.value]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, value=expr(self.value))


# The environment accumulator of Fig. 8: slot numbers are static De Bruijn levels. The accumulator is
# no name the passes see (never renamed, never read); a slot's cotangent name (`ct`) is one.
@dataclass(eq=False)
class AccNew(Stmt):
    """`acc = EArr(depth)`: the accumulator `run` allocates for one call (its class is the stage's)."""

    acc: str
    depth: int
    cls: type

    def binds(self) -> list[str]:
        return [self.acc]


@dataclass(eq=False)
class AccPush(Stmt):
    """`acc.push0(slot, zero)`: a fresh zero cotangent for a newly bound variable."""

    acc: str
    slot: int
    ct: str  # the cotangent's name once the slot becomes a local variable
    zero: Expr

    def exprs(self) -> list[Expr]:
        return [self.zero]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, ct=name(self.ct), zero=expr(self.zero))


@dataclass(eq=False)
class AccOne(Stmt):
    """`acc.one(slot, value)`: add a cotangent into a variable's slot (Fig. 7 variable rule)."""

    acc: str
    slot: int
    ct: str
    value: Expr
    real: bool

    def exprs(self) -> list[Expr]:
        return [self.value]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, ct=name(self.ct), value=expr(self.value))


@dataclass(eq=False)
class AccPop(Stmt):
    """`ct = acc.pop(slot)`: end of a scope; the variable's total cotangent."""

    acc: str
    slot: int
    ct: str

    def binds(self) -> list[str]:
        return [self.ct]

    def map(self, name: Names, expr: Exprs, body: Bodies) -> Stmt:
        return replace(self, ct=name(self.ct))


# ---------------------------------------------------------------- traversal


def one_or_tuple(items: list[Expr]) -> Expr:
    """The only item, or the tuple of them (a state of one variable is the variable)."""
    return items[0] if len(items) == 1 else TupleX(items)


def set_on_one_path_only(names: list[str]) -> Assign:
    """`a, b = (None, None)` first: names bound on one path only, which a loop's record or the
    values a backpropagator reads (`pullbacks`) still need on the others."""
    return Assign(names, one_or_tuple([Lit(None)] * len(names)), comment="set on one path only")


def unpack(names: list[str], value: Expr) -> Assign:
    """`a, b = value`; a single name takes the only element (`a = value[0]`)."""
    return Assign(names, Item(value, Lit(0))) if len(names) == 1 else Assign(names, value)


def bodies(s: Stmt) -> list[list[Stmt]]:
    """The statement lists nested directly in a compound statement."""
    return s.bodies()


def with_bodies(s: Stmt, new: list[list[Stmt]]) -> Stmt:
    """A compound statement with its nested lists replaced (in the order of `bodies`)."""
    lists = iter(new)
    return s.map(_same, _same, lambda _: next(lists))


def _same(x):
    return x


def nested(s: Stmt, fn: Callable[[list[Stmt]], list[Stmt]]) -> Stmt:
    """s with `fn` applied to each statement list nested directly in it."""
    return with_bodies(s, [fn(b) for b in s.bodies()]) if s.bodies() else s


def lists_bottom_up(stmts: list[Stmt], fn: Callable[[list[Stmt]], list[Stmt]]) -> list[Stmt]:
    """`fn` applied to this list and to every list nested in it, innermost first."""
    return fn([s.map(_same, _same, lambda body: lists_bottom_up(body, fn)) for s in stmts])


def in_defs(stmts: list[Stmt], fn: Callable[[list[Stmt]], list[Stmt]]) -> list[Stmt]:
    """`fn` applied to the body of each function defined in these statements (in their branches and
    loops too, not inside another function): the backpropagators, never the primal code."""
    out = []
    for s in stmts:
        if isinstance(s, Def):
            s = replace(s, body=fn(s.body))
        elif s.bodies():
            s = with_bodies(s, [in_defs(b, fn) for b in s.bodies()])
        out.append(s)
    return out


def map_statement_exprs(stmts: list[Stmt], fn: Callable[[Expr], Expr]) -> list[Stmt]:
    """Each statement's expressions (whole: `map_exprs` reaches their parts) replaced by `fn`, in nested
    lists too; names and binders unchanged."""
    return [s.map(_same, fn, lambda body: map_statement_exprs(body, fn)) for s in stmts]


def walk(stmts: list[Stmt]) -> Iterator[Stmt]:
    """Every statement, and every statement nested in one, in order."""
    for s in stmts:
        yield s
        for body in s.bodies():
            yield from walk(body)


def map_exprs(node: object, fn) -> object:
    """Rebuild an expression (or each of a list) bottom-up, applying `fn` to every sub-expression
    (expressions are never changed in place, so a part `fn` left as it is is shared, not copied)."""
    if isinstance(node, list):
        return [map_exprs(x, fn) for x in node]
    if not isinstance(node, Expr):
        return node
    parts = node.parts()
    if parts:
        new = [map_exprs(p, fn) for p in parts]
        if any(map(is_not, new, parts)):
            node = node.with_parts(new)
    return fn(node)


def rename(node: object, mapping: dict[str, str]) -> object:
    """Substitute names in an expression or a statement list (binders included)."""
    if not mapping:
        return node
    if isinstance(node, list):
        return [rename(s, mapping) for s in node]
    if isinstance(node, Expr):
        return map_exprs(node, lambda e: Name(mapping[e.id]) if isinstance(e, Name) and e.id in mapping else e)
    if isinstance(node, Def) and set(node.params) & set(mapping):  # a parameter shadows the outer name
        mapping = {k: v for k, v in mapping.items() if k not in node.params}
    return node.map(lambda n: mapping.get(n, n), lambda e: rename(e, mapping), lambda b: rename(b, mapping))


def iter_exprs(node: object) -> list[Expr]:
    """Every expression inside an expression, a statement or a list of them, outermost first (a
    list: the passes ask often, and a generator per node cost more than the walk itself)."""
    out: list[Expr] = []
    _add_exprs(node, out)
    return out


def _add_exprs(node: object, out: list[Expr]) -> None:
    if isinstance(node, Expr):
        out.append(node)
        for p in node.parts():
            _add_exprs(p, out)
    elif isinstance(node, list):
        for x in node:
            _add_exprs(x, out)
    elif isinstance(node, Stmt):
        for e in node.exprs():
            _add_exprs(e, out)
        for body in node.bodies():
            _add_exprs(body, out)


def names_in(node: object) -> set[str]:
    """The names the expressions inside node read (an expression, a statement or a list of either;
    not what a statement reads itself, such as a tape: `expr_names` adds those)."""
    return {e.id for e in iter_exprs(node) if isinstance(e, Name)}


def expr_names(node: object) -> set[str]:
    """Every name read anywhere inside an expression, a statement or a statement list."""
    out = names_in(node)
    for s in walk(node if isinstance(node, list) else [node] if isinstance(node, Stmt) else []):
        out.update(s.reads())
    return out


def mentioned(s: Stmt) -> set[str]:
    """The names s (or anything nested in it) reads or binds."""
    out = names_in(s)
    for x in walk([s]):
        out.update(x.reads())
        out.update(x.binds())
    return out


def assigned(stmts: list[Stmt], always: bool = False) -> list[str]:
    """Names these statements assign or define (in branches too, not inside loops);
    `always`: only those assigned on every path."""
    out: list[str] = []
    for s in stmts:
        if isinstance(s, Assign):
            out += s.targets
        elif isinstance(s, Def):
            out.append(s.name)
        elif isinstance(s, (If, Try)):
            then, orelse = (assigned(b, always) for b in s.bodies())
            out += [n for n in then if n in orelse] if always else then + orelse
    return out


def count_statements(stmts: list[Stmt]) -> int:
    return sum(1 for _ in walk(stmts))


def local_names(stmts: list[Stmt]) -> set[str]:
    """Every name the generated code binds (targets, parameters, functions)."""
    return {n for s in walk(stmts) for n in s.binds()}
