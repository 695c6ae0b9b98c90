"""The core IR: the paper's first-order language (Fig. 1), in A-normal form.

A function body is a `Block`: a chain of `Let` bindings ending in an atom, i.e.
`let x1 = e1 in ... let xn = en in result`. Every name is bound once (SSA), so a
later stage may refer to any name without worrying about reassignment. Arguments
of every expression are atoms (`Var`, `Const`, `Ref`), as in A-normal form.
`verify.py` checks these invariants after every lowering.

Python maps onto it as follows (one node per idea):

| Python | IR |
| --- | --- |
| `x = e` | `Let` |
| `(a, b)`, `[a, b]`, `{k: v}` | `MakeTuple` (the paper's product), `MakeList`, `MakeDict` |
| `t[k]`, `xs[i]`, `xs[a:b]` | `Proj` (a tuple the lowerer built), `Index`, `Slice` |
| a default kept in a function value | `EnvRead` |
| `if`, `a if c else b`, `and`, `or` | `Case` on a discrete condition; branches end in the live-out tuple |
| `for`, `while` (with `break`, `continue`, `return`) | `ForLoop`, `WhileLoop`: a fold over a state tuple |
| operators, `math`/NumPy functions, builtins | `Prim` |
| a call of a user function; `C(a)` of a user class | `Call` (of `C`'s constructor) |
| `obj.x`, `obj.m(a)`, a dataclass's or namedtuple's fields | `Field`, `MethodCall` (resolved per type), `MakeRecord` |
| `obj.x = v` in `__init__` | `Prim` (`setattr`, a functional update) |
| `lambda`, nested `def`; calling a function value | `MakeClosure`, `Apply` |
| a statement of a `try` body (a call of a function of it, `rewrite/tries.py`) | `Apply` with `catch` |
| `chad.jvp(f, primals, tangents)` inside differentiated code | `Jvp` (resolved to a call of f's forward form) |

Functions as values are closure-converted (Section 9, Appendix C; `closures.py`):
a `lambda` or nested `def` becomes `MakeClosure(code, captured)`, a pair of a
closed `Function` (whose first parameter is the tuple of captured values) and the
values it captures; calling a function value is `Apply`. So no function of the IR
reads a variable of another, and CHAD never needs a cotangent for a function itself.

`format_function` prints a function in the paper's `let ... in` form, each binder
with its type when given the types inference found (`chadpy.source(f, stage="ir")`).
`operands`, `blocks` and `scoped` are the one traversal every pass shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import Loc
from .types import code_name


class Operation(Protocol):
    """A primitive operation as the IR sees it: a name. Everything else about it (how it is written,
    its kind rule, its derivatives) is its registration's, `rules.registry.Primitive`."""

    name: str


@dataclass(frozen=True)
class Var:
    """A variable (an SSA name)."""

    name: str


@dataclass(frozen=True)
class Const:
    """A constant written in the source (a number, a string, None, a tuple of them)."""

    value: object


@dataclass(frozen=True)
class Ref:
    """An object from outside the function (a module constant, `math.pi`), read as a constant."""

    path: str
    value: object = field(compare=False)


Atom = Var | Const | Ref


@dataclass
class Prim:
    """A primitive operation: an operator, a `math` function, a builtin. `inplace`: Python
    updates its first argument in place if that is a list or an array (`xs.append(v)`,
    `a += b`); here it is a new value, which `ownership` checks nobody else can see."""

    op: Operation
    args: list[Atom]
    inplace: bool = False


@dataclass
class Call:
    """A call of another user function, differentiated through its own CHAD form."""

    fn: object  # the Python function
    args: list[Atom]


@dataclass
class MakeClosure:
    """A function value: closed `code` and the values it captures (its environment).

    `code` is a lifted `Function` whose first parameter is the environment tuple, or a
    module-level Python function (then `captured` is empty and the code takes no
    environment)."""

    code: object  # Function | types.FunctionType
    captured: list[Atom]


@dataclass
class Apply:
    """A call of a function value (`MakeClosure`): its code on its environment and `args`. With `catch` (a
    statement of a `try` body, `rewrite/tries.py`), the call is attempted: its value is `<True, None, result>`,
    or `<False, exception, None>` when the code raises an exception of the classes `catch` holds."""

    fn: Atom
    args: list[Atom]
    catch: Atom | None = None


@dataclass
class Jvp:
    """`chad.jvp(fn, primals, tangents)` inside differentiated code: the pair <fn(*primals), its tangent along
    `tangents>` (both tuples). Inference resolves it to the call of fn's forward form, which the transformations
    differentiate like any other code: the inner tangents are values, so perturbations are never confused."""

    fn: Atom
    primals: Atom
    tangents: Atom


@dataclass
class MakeTuple:
    """A tuple: the paper's n-ary product."""

    items: list[Atom]


@dataclass
class MakeRecord:
    """An object of user class `cls` with these attributes (`records.py`): a product whose
    components have names (a namedtuple's are its positions too). No fields: a new empty
    object, which its `__init__` then fills."""

    cls: type
    names: list[str]
    values: list[Atom]


@dataclass
class MethodCall:
    """`receiver.name(args, **keywords)` on a value whose class is known only per specialisation:
    inference resolves it to the `Call` of the function it is (`Model.predict(receiver, x)`)."""

    receiver: Atom
    name: str
    args: list[Atom]
    keywords: dict[str, Atom]


@dataclass
class MakeList:
    """A list literal (Section 7's array build, of any length)."""

    items: list[Atom]


@dataclass
class MakeDict:
    """A dict literal; keys are discrete."""

    keys: list[Atom]
    values: list[Atom]


@dataclass
class Read:
    """A part of a value: `base[index]`. Each kind of read is its own node, below."""

    base: Atom
    index: Atom


@dataclass
class Proj(Read):
    """The paper's projection: component `index` (a constant) of a tuple the lowerer built
    (a loop's one-element state, a closure's one-element environment)."""


@dataclass
class Index(Read):
    """An element of a tuple, list, dict or array, as Python's `base[index]` reads it.

    `natural`: the index is a valid non-negative position (a loop counter).
    `of_loop`: the element a `for` loop yields at position `index` (a dict yields its
    keys, so then it is the index itself)."""

    natural: bool = False
    of_loop: bool = False


@dataclass
class Slice(Read):
    """`base[a:b]`, `A[:, k]`: `index` is a slice, or a tuple of slices and indices;
    `static` is the slice itself when its bounds are literal numbers (a tuple's slice
    then has a static type)."""

    static: slice | None = None


@dataclass
class Field(Read):
    """An attribute of an object: `base.name` (`index` is the constant name), a record's field,
    a namedtuple's component, or a property (a call of its getter, resolved like a method)."""


@dataclass
class EnvRead(Read):
    """A value a function value holds: its captured value or default number `index`."""


@dataclass
class Case:
    """`case cond of {True -> then | False -> orelse}`; cond is discrete."""

    cond: Atom
    then: Block
    orelse: Block


@dataclass(kw_only=True)
class Loop:
    """A loop over a tuple of state variables (the paper's fold, Section 7, generalised).

    Each iteration runs `body` with the state variables bound and yields the new state
    `next`. When `stop` is given (the loop has `break` or `return`), it is a discrete
    atom of the body: the loop ends after an iteration in which it is true. The let
    binding a loop takes the final state."""

    state: list[str]
    init: list[Atom]
    body: Block
    next: list[Atom]
    stop: Atom | None = None


@dataclass(kw_only=True)
class ForLoop(Loop):
    """`for index in seq`: seq is discrete (a range, a list of positions or of keys)."""

    index: str
    seq: Atom


@dataclass(kw_only=True)
class WhileLoop(Loop):
    """`while test`: `test` is evaluated from the state before each iteration."""

    test: Block


Expr = (
    Atom
    | Prim
    | Call
    | MethodCall
    | MakeClosure
    | Apply
    | Jvp
    | MakeTuple
    | MakeRecord
    | MakeList
    | MakeDict
    | Read
    | Case
    | Loop
)


@dataclass
class Let:
    """`let target = expr`; a tuple target destructures an atom (`let <x, y> = t`)."""

    target: str | tuple[str, ...]
    expr: Expr
    loc: Loc | None = None


@dataclass
class Block:
    """`let x1 = e1 in ... let xn = en in result`: a chain of lets ending in an atom."""

    lets: list[Let]
    result: Atom


@dataclass(eq=False)  # compared by identity: a function value's type names its code
class Function:
    """A function of the IR: its parameters, body and place in the source (a lifted nested function also holds what
    it captured)."""

    name: str
    params: list[str]
    body: Block
    loc: Loc
    pyfunc: object  # the Python function; None for a lifted lambda or nested def
    captured: tuple[str, ...] | None = None  # lifted code: the variables its environment holds
    defaults: tuple[str, ...] = ()  # lifted code: parameters whose defaults follow them in the environment
    transient: bool = False  # it captures a variable assigned again later: it must not outlive it


def bound_names(let: Let) -> tuple[str, ...]:
    return let.target if isinstance(let.target, tuple) else (let.target,)


def target_names(target: str | tuple[str, ...]) -> list[str]:
    """The names a let's target binds, as a list."""
    return [target] if isinstance(target, str) else list(target)


# The traversal every pass shares: what an expression reads, the blocks it holds, what it binds for them.


def operands(e: Expr) -> list[Atom]:
    """The atoms an expression reads where it stands (not those inside its blocks)."""
    match e:
        case Var() | Const() | Ref():
            return [e]
        case Prim(_, args) | Call(_, args):
            return list(args)
        case Apply(fn, args, None):
            return [fn, *args]
        case Apply(fn, args, catch):
            return [fn, *args, catch]
        case MakeClosure(_, captured):
            return list(captured)
        case Jvp(fn, primals, tangents):
            return [fn, primals, tangents]
        case MakeTuple(items) | MakeList(items):
            return list(items)
        case MakeDict(keys, values):
            return [*keys, *values]
        case MakeRecord(_, _, values):
            return list(values)
        case MethodCall(receiver, _, args, keywords):
            return [receiver, *args, *keywords.values()]
        case Read(base, index):
            return [base, index]
        case Case(cond):
            return [cond]
        case ForLoop():
            return [*e.init, e.seq]
        case Loop():
            return list(e.init)
    raise TypeError(f"not an IR expression: {e!r}")


def blocks(e: Expr) -> list[Block]:
    """The blocks an expression holds: a case's branches, a loop's test and body."""
    match e:
        case Case(_, then, orelse):
            return [then, orelse]
        case WhileLoop():
            return [e.test, e.body]
        case Loop():
            return [e.body]
    return []


def scoped(e: Expr) -> list[str]:
    """The names an expression binds for its blocks: a loop's state variables and index."""
    match e:
        case ForLoop():
            return [*e.state, e.index]
        case Loop():
            return list(e.state)
    return []


def loop_results(e: Loop) -> list[Atom]:
    """What a loop's body yields (read in the body's scope): the next state and the stop flag."""
    return [*e.next, *([e.stop] if e.stop is not None else [])]


def name_hint(a: Atom) -> str:
    """A readable stem for a name made after an atom (a cotangent's `d` + it): the variable's name, or "const"."""
    return a.name if isinstance(a, Var) else "const"


def format_atom(a: Atom) -> str:
    match a:
        case Var(name):
            return name
        case Ref(path):
            return path
        case Const(value):
            return repr(value)
    return f"<not an atom: {a!r}>"  # printed by the verifier's messages


def format_expr(e: Expr, indent: str = "", types: Mapping[str, object] | None = None) -> str:
    """One expression; `types` (SSA name -> type) annotates the names nested blocks bind."""
    args = lambda atoms: ", ".join(map(format_atom, atoms))  # noqa: E731
    inner = indent + "    "
    match e:
        case Var() | Const() | Ref():
            return format_atom(e)
        case Prim(op, xs):
            return f"{op.name}({args(xs)})"
        case Call(fn, xs):
            return f"call {code_name(fn)}({args(xs)})"
        case MakeClosure(code, captured):
            return f"closure {code_name(code)}<{args(captured)}>"
        case Apply(fn, xs, None):
            return f"{format_atom(fn)}({args(xs)})"
        case Apply(fn, xs, catch):
            return f"try {format_atom(fn)}({args(xs)}) except {format_atom(catch)}"
        case Jvp(fn, primals, tangents):
            return f"jvp {format_atom(fn)}({format_atom(primals)}; {format_atom(tangents)})"
        case MakeTuple(items):
            return f"<{args(items)}>"
        case MakeList(items):
            return f"[{args(items)}]"
        case MakeDict(keys, values):
            return "{" + ", ".join(f"{format_atom(k)}: {format_atom(v)}" for k, v in zip(keys, values)) + "}"
        case MakeRecord(cls, names, values):
            return f"{cls.__name__}{{" + ", ".join(f"{k}={format_atom(v)}" for k, v in zip(names, values)) + "}"
        case MethodCall(receiver, name, xs, keywords):
            named = [f"{k}={format_atom(v)}" for k, v in keywords.items()]
            return f"{format_atom(receiver)}.{name}(" + ", ".join([*map(format_atom, xs), *named]) + ")"
        case Field(base, index):
            return f"{format_atom(base)}.{index.value}"
        case Read(base, index):
            return f"{format_atom(base)}[{format_atom(index)}]"
        case Case(cond, then, orelse):
            return (
                f"case {format_atom(cond)} of\n{inner}True ->\n{format_block(then, inner + '    ', types)}\n"
                f"{inner}False ->\n{format_block(orelse, inner + '    ', types)}"
            )
        case Loop():
            state = ", ".join(f"{_typed(s, types)} = {format_atom(a)}" for s, a in zip(e.state, e.init))
            if isinstance(e, ForLoop):
                out = f"loop for {_typed(e.index, types)} in {format_atom(e.seq)} with {state}\n"
            else:
                out = f"loop while with {state}\n{inner}test ->\n{format_block(e.test, inner + '    ', types)}\n"
            out += f"{inner}body ->\n{format_block(e.body, inner + '    ', types)}\n"
            out += f"{inner}next <{args(e.next)}>"
            return out + (f" stop if {format_atom(e.stop)}" if e.stop is not None else "")
    raise TypeError(f"not an IR expression: {e!r}")


def _typed(name: str, types: Mapping[str, object] | None) -> str:
    return f"{name}: {types[name]!r}" if types is not None and name in types else name


def format_block(b: Block, indent: str = "", types: Mapping[str, object] | None = None) -> str:
    """`let x1 = e1` ... `in result`, one let per line (the paper's `let ... in` form)."""
    lines = []
    for let in b.lets:
        names = [_typed(n, types) for n in bound_names(let)]
        target = names[0] if isinstance(let.target, str) else "<" + ", ".join(names) + ">"
        lines.append(f"{indent}let {target} = {format_expr(let.expr, indent, types)}")
    lines.append(f"{indent}in {format_atom(b.result)}")
    return "\n".join(lines)


def format_function(f: Function, types: Mapping[str, object] | None = None) -> str:
    """The function in the paper's form; with `types`, every binder says its type."""
    params = ", ".join(_typed(p, types) for p in f.params)
    return f"def {f.name}({params}):\n{format_block(f.body, '    ', types)}"
