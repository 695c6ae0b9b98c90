"""Target-language expressions: what the generated code computes, and what rules are written in.

Expressions overload arithmetic so that derivative rules read like maths
(`d * cos(x)` builds `BinOp('*', Name('d'), Call(Obj(math.cos), [x]))`). Each
expression declares its parts (`parts`, `with_parts`), so traversals need not know
its fields. `statements.py` builds statements from them; `codegen` prints both.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class Expr:
    """Base of target expressions; operators build bigger expressions."""

    def __add__(self, o: object) -> Expr:
        return BinOp("+", self, as_expr(o))

    def __radd__(self, o: object) -> Expr:
        return BinOp("+", as_expr(o), self)

    def __sub__(self, o: object) -> Expr:
        return BinOp("-", self, as_expr(o))

    def __rsub__(self, o: object) -> Expr:
        return BinOp("-", as_expr(o), self)

    def __mul__(self, o: object) -> Expr:
        return BinOp("*", self, as_expr(o))

    def __rmul__(self, o: object) -> Expr:
        return BinOp("*", as_expr(o), self)

    def __truediv__(self, o: object) -> Expr:
        return BinOp("/", self, as_expr(o))

    def __rtruediv__(self, o: object) -> Expr:
        return BinOp("/", as_expr(o), self)

    def __floordiv__(self, o: object) -> Expr:
        return BinOp("//", self, as_expr(o))

    def __mod__(self, o: object) -> Expr:
        return BinOp("%", self, as_expr(o))

    def __pow__(self, o: object) -> Expr:
        return BinOp("**", self, as_expr(o))

    def __neg__(self) -> Expr:
        return UnaryOp("-", self)

    def compare(self, op: str, o: object) -> Expr:
        return Compare(op, self, as_expr(o))

    # the declared traversal: an expression's direct sub-expressions, and a copy with new ones
    def parts(self) -> list[Expr]:
        return []

    def with_parts(self, parts: list[Expr]) -> Expr:
        return self


@dataclass(eq=False)
class Name(Expr):
    """A variable of the generated code."""

    id: str


@dataclass(eq=False)
class Lit(Expr):
    """A literal value, printed with `repr`."""

    value: object


@dataclass(eq=False)
class Obj(Expr):
    """An outside object (a function, a module, a constant); `codegen` binds it to a name."""

    obj: object
    path: str  # how to spell it, e.g. "math.cos"


@dataclass(eq=False)
class _Binary(Expr):
    """An expression of two operands and an operator (`BinOp`, `Compare`)."""

    op: str
    left: Expr
    right: Expr

    def parts(self) -> list[Expr]:
        return [self.left, self.right]

    def with_parts(self, parts: list[Expr]) -> Expr:
        return type(self)(self.op, *parts)


@dataclass(eq=False)
class BinOp(_Binary):
    """`left op right` for an arithmetic operator."""

    pass


@dataclass(eq=False)
class UnaryOp(Expr):
    """`op operand`: `-x`, `+x`, `not x`."""

    op: str  # "-", "+", "not"
    operand: Expr

    def parts(self) -> list[Expr]:
        return [self.operand]

    def with_parts(self, parts: list[Expr]) -> Expr:
        return UnaryOp(self.op, *parts)


@dataclass(eq=False)
class Compare(_Binary):
    """`left op right` for a comparison."""

    pass


@dataclass(eq=False)
class IfExp(Expr):
    """`body if test else orelse`."""

    test: Expr
    body: Expr
    orelse: Expr

    def parts(self) -> list[Expr]:
        return [self.test, self.body, self.orelse]

    def with_parts(self, parts: list[Expr]) -> Expr:
        return IfExp(*parts)


@dataclass(eq=False)
class CallX(Expr):
    """A call: the function, its positional arguments and its keywords."""

    func: Expr
    args: list[Expr]
    keywords: dict[str, Expr] = field(default_factory=dict)

    def parts(self) -> list[Expr]:
        return [self.func, *self.args, *self.keywords.values()]

    def with_parts(self, parts: list[Expr]) -> Expr:
        n = 1 + len(self.args)
        return CallX(parts[0], parts[1:n], dict(zip(self.keywords, parts[n:])))


@dataclass(eq=False)
class Attr(Expr):
    """`value.attr`."""

    value: Expr
    attr: str

    def parts(self) -> list[Expr]:
        return [self.value]

    def with_parts(self, parts: list[Expr]) -> Expr:
        return Attr(parts[0], self.attr)


@dataclass(eq=False)
class Item(Expr):
    """`value[index]`."""

    value: Expr
    index: Expr

    def parts(self) -> list[Expr]:
        return [self.value, self.index]

    def with_parts(self, parts: list[Expr]) -> Expr:
        return Item(*parts)


@dataclass(eq=False)
class TupleX(Expr):
    """A tuple display."""

    items: list[Expr]

    def parts(self) -> list[Expr]:
        return self.items

    def with_parts(self, parts: list[Expr]) -> Expr:
        return TupleX(parts)


@dataclass(eq=False)
class DictX(Expr):
    """A dict display (a sparse cotangent `{k: d}`, or a user's dict)."""

    keys: list[Expr]
    values: list[Expr]

    def parts(self) -> list[Expr]:
        return [*self.keys, *self.values]

    def with_parts(self, parts: list[Expr]) -> Expr:
        return DictX(parts[: len(self.keys)], parts[len(self.keys) :])


@dataclass(eq=False)
class ListX(Expr):
    """A list display."""

    items: list[Expr]

    def parts(self) -> list[Expr]:
        return self.items

    def with_parts(self, parts: list[Expr]) -> Expr:
        return ListX(parts)


def is_zero(e: object) -> bool:
    """e is a zero cotangent written out: the float `0.0` or `Zero`."""
    return (isinstance(e, Lit) and e.value == 0.0 and isinstance(e.value, float)) or (
        isinstance(e, Obj) and repr(e.obj) == "Zero"
    )


def is_call_of(e: object, fn: object) -> bool:
    """Whether e is a call of the outside function fn."""
    return isinstance(e, CallX) and isinstance(e.func, Obj) and e.func.obj is fn


def as_expr(o: object) -> Expr:
    return o if isinstance(o, Expr) else Lit(o)


def call(fn: object, *args: object) -> Expr:
    """A call of an outside function, spelled by its module and name (`math.cos(x)`)."""
    return CallX(Obj(fn, spelling(fn)), [as_expr(a) for a in args])


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
