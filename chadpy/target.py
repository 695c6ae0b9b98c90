"""The target language: the small subset of Python that CHAD generates.

Expressions overload arithmetic so that derivative rules read like maths
(`d * cos(x)` builds `BinOp('*', Name('d'), Call(Obj(math.cos), [x]))`).
Statements include the accumulator operations of Fig. 8 (`AccPush`, `AccOne`,
`AccPop`) as first-class nodes, so the simplifier can turn them into plain local
variables. `codegen` turns all of this into gast and then into source text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import Loc


class Expr:
    """Base of target expressions; operators build bigger expressions."""

    def __add__(self, o: object) -> Expr:
        return BinOp("+", self, lift(o))

    def __radd__(self, o: object) -> Expr:
        return BinOp("+", lift(o), self)

    def __sub__(self, o: object) -> Expr:
        return BinOp("-", self, lift(o))

    def __rsub__(self, o: object) -> Expr:
        return BinOp("-", lift(o), self)

    def __mul__(self, o: object) -> Expr:
        return BinOp("*", self, lift(o))

    def __rmul__(self, o: object) -> Expr:
        return BinOp("*", lift(o), self)

    def __truediv__(self, o: object) -> Expr:
        return BinOp("/", self, lift(o))

    def __rtruediv__(self, o: object) -> Expr:
        return BinOp("/", lift(o), self)

    def __floordiv__(self, o: object) -> Expr:
        return BinOp("//", self, lift(o))

    def __mod__(self, o: object) -> Expr:
        return BinOp("%", self, lift(o))

    def __pow__(self, o: object) -> Expr:
        return BinOp("**", self, lift(o))

    def __neg__(self) -> Expr:
        return UnaryOp("-", self)

    def compare(self, op: str, o: object) -> Expr:
        return Compare(op, self, lift(o))


@dataclass(eq=False)
class Name(Expr):
    id: str


@dataclass(eq=False)
class Lit(Expr):
    value: object


@dataclass(eq=False)
class Obj(Expr):
    """An outside object (a function, a module, a constant); `codegen` binds it to a name."""

    obj: object
    path: str  # how to spell it, e.g. "math.cos"


@dataclass(eq=False)
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class UnaryOp(Expr):
    op: str  # "-", "+", "not"
    operand: Expr


@dataclass(eq=False)
class Compare(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class IfExp(Expr):
    test: Expr
    body: Expr
    orelse: Expr


@dataclass(eq=False)
class CallX(Expr):
    func: Expr
    args: list[Expr]
    keywords: dict[str, Expr] = field(default_factory=dict)


@dataclass(eq=False)
class Attr(Expr):
    value: Expr
    attr: str


@dataclass(eq=False)
class Item(Expr):
    value: Expr
    index: Expr


@dataclass(eq=False)
class TupleX(Expr):
    items: list[Expr]


@dataclass(eq=False)
class DictX(Expr):
    keys: list[Expr]
    values: list[Expr]


@dataclass(eq=False)
class ListX(Expr):
    items: list[Expr]


def lift(o: object) -> Expr:
    return o if isinstance(o, Expr) else Lit(o)


def call(fn: object, *args: object) -> Expr:
    """A call of an outside function, spelled by its module and name (`math.cos(x)`)."""
    return CallX(Obj(fn, spelling(fn)), [lift(a) for a in args])


def spelling(obj: object) -> str:
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None) or repr(obj)
    if module in ("builtins", ""):
        return name
    if module == "math":
        return f"math.{name}"
    if module.startswith("chadpy"):
        return name
    return f"{module.split('.')[-1]}.{name}"


# ---------------------------------------------------------------- statements


@dataclass(eq=False)
class Stmt:
    pass


@dataclass(eq=False)
class Assign(Stmt):
    targets: list[str]  # more than one: tuple unpacking
    value: Expr
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class Accum(Stmt):
    """`name += value` (`real`) or `name = add(name, value)`: add into a local cotangent."""

    name: str
    value: Expr
    real: bool
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class If(Stmt):
    test: Expr
    body: list[Stmt]
    orelse: list[Stmt]
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class Def(Stmt):
    name: str
    params: list[str]
    body: list[Stmt]
    comment: str = ""
    env: tuple[str, ...] | None = None  # a backpropagator's Γ: the variable in each slot
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class For(Stmt):
    """`for target in iter: body` (the forward pass of a `for` loop)."""

    target: str
    iter: Expr
    body: list[Stmt]
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class While(Stmt):
    """`while True: body` (the forward pass of a `while` loop; the test is in the body)."""

    body: list[Stmt]
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class Break(Stmt):
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class Record(Stmt):
    """`tape.append((a, b))`: one iteration's primal values, for the reverse pass."""

    tape: str
    names: list[str]
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class Replay(Stmt):
    """`for a, b in reversed(tape): body`: the iterations again, newest first, without recursion."""

    tape: str
    names: list[str]
    body: list[Stmt]
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


def bodies(s: Stmt) -> list[list[Stmt]]:
    """The statement lists nested directly in a compound statement."""
    if isinstance(s, If):
        return [s.body, s.orelse]
    if isinstance(s, (Def, For, While, Replay)):
        return [s.body]
    return []


def with_bodies(s: Stmt, new: list[list[Stmt]]) -> Stmt:
    """A compound statement with its nested lists replaced (in the order of `bodies`)."""
    if isinstance(s, If):
        return replace(s, body=new[0], orelse=new[1])
    return replace(s, body=new[0])


@dataclass(eq=False)
class Return(Stmt):
    value: Expr
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class Do(Stmt):
    """An expression evaluated for its effect (a call)."""

    value: Expr
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


# The environment accumulator of Fig. 8: slot numbers are static De Bruijn levels.
@dataclass(eq=False)
class AccNew(Stmt):
    """`acc = EArr(depth)`: the accumulator `run` allocates for one call (its class is the stage's)."""

    acc: str
    depth: int
    cls: type
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class AccPush(Stmt):
    """`acc.push0(slot, zero)`: a fresh zero cotangent for a newly bound variable."""

    acc: str
    slot: int
    ct: str  # the cotangent's name once the slot becomes a local variable
    zero: Expr
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class AccOne(Stmt):
    """`acc.one(slot, value)`: add a cotangent into a variable's slot (Fig. 7 variable rule)."""

    acc: str
    slot: int
    ct: str
    value: Expr
    real: bool
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


@dataclass(eq=False)
class AccPop(Stmt):
    """`ct = acc.pop(slot)`: end of a scope; the variable's total cotangent."""

    acc: str
    slot: int
    ct: str
    comment: str = ""
    loc: Loc | None = None  # the user's source line it comes from


# ---------------------------------------------------------------- traversal


def map_exprs(node: object, fn) -> object:
    """Rebuild an expression bottom-up, applying `fn` to every sub-expression."""
    if isinstance(node, list):
        return [map_exprs(x, fn) for x in node]
    if isinstance(node, dict):
        return {k: map_exprs(v, fn) for k, v in node.items()}
    if not isinstance(node, Expr):
        return node
    changes = {f.name: map_exprs(getattr(node, f.name), fn) for f in fields(node) if f.name not in ("obj",)}
    return fn(replace(node, **changes))


def rename(node: object, mapping: dict[str, str]) -> object:
    """Substitute names in an expression or a statement list (targets included)."""
    if not mapping:
        return node
    if isinstance(node, list):
        return [rename(s, mapping) for s in node]
    if isinstance(node, Expr):
        return map_exprs(node, lambda e: Name(mapping.get(e.id, e.id)) if isinstance(e, Name) else e)
    if isinstance(node, Def) and set(node.params) & set(mapping):  # a parameter shadows the outer name
        mapping = {k: v for k, v in mapping.items() if k not in node.params}
    changes = {}
    for f in fields(node):
        v = getattr(node, f.name)
        if isinstance(v, (Expr, list)) and f.name not in ("targets", "params", "names"):
            changes[f.name] = rename(v, mapping)
        elif f.name in ("name", "ct", "tape", "target") and isinstance(v, str):
            changes[f.name] = mapping.get(v, v)
        elif f.name in ("targets", "names"):
            changes[f.name] = [mapping.get(t, t) for t in v]
    return replace(node, **changes)


def iter_exprs(node: object):
    """Every expression inside an expression, a statement or a list of them."""
    if isinstance(node, list):
        for x in node:
            yield from iter_exprs(x)
    elif isinstance(node, dict):
        for x in node.values():
            yield from iter_exprs(x)
    elif isinstance(node, (Expr, Stmt)):
        if isinstance(node, Expr):
            yield node
        for f in fields(node):
            if f.name != "obj":
                yield from iter_exprs(getattr(node, f.name))


def expr_names(node: object) -> set[str]:
    """Every name read anywhere inside an expression or statement list."""
    out = {e.id for e in iter_exprs(node) if isinstance(e, Name)}
    if isinstance(node, list):
        stack = list(node)
        while stack:
            s = stack.pop()
            if isinstance(s, Accum):  # `name += value` reads name
                out.add(s.name)
            elif isinstance(s, Record):
                out.update(s.names)
            elif isinstance(s, Replay):
                out.add(s.tape)
            for body in bodies(s):
                stack.extend(body)
    elif isinstance(node, Accum):
        out.add(node.name)
    return out


def local_names(stmts: list[Stmt], out: set[str] | None = None) -> set[str]:
    """Every name the generated code binds (targets, parameters, functions)."""
    out = set() if out is None else out
    for s in stmts:
        if isinstance(s, Def):
            out.add(s.name)
            out.update(s.params)
            local_names(s.body, out)
        elif isinstance(s, (For, Replay)):
            out.update([s.target] if isinstance(s, For) else s.names)
            local_names(s.body, out)
        elif bodies(s):
            for body in bodies(s):
                local_names(body, out)
        elif isinstance(s, Assign):
            out.update(s.targets)
        elif isinstance(s, (Accum,)):
            out.add(s.name)
        elif isinstance(s, (AccPop,)):
            out.add(s.ct)
        elif isinstance(s, (AccNew,)):
            out.add(s.acc)
    return out
