"""The core IR: the paper's first-order language (Fig. 1), in A-normal form.

A function body is a `Block`: a chain of `Let` bindings ending in an atom, i.e.
`let x1 = e1 in ... let xn = en in result`. Every name is bound once (SSA), so a
later stage may refer to any name without worrying about reassignment. Arguments
of every expression are atoms (`Var`, `Const`, `Ref`), as in A-normal form.

Python maps onto it as follows: assignments are lets, tuples are n-ary products,
`t[k]` is a projection, `if`/conditional expressions/`and`/`or` are `Case`s on a
discrete condition whose branches end in the tuple of live-out variables, calls of
`math` functions and operators are `Prim`s, and calls of user functions are `Call`s.

Functions as values are closure-converted here (Section 9, Appendix C): a `lambda`
or nested `def` becomes `MakeClosure(code, captured)`, a pair of a closed
`Function` (whose first parameter is the tuple of captured values) and the values
it captures; calling a function value is `Apply`. So no function of the IR reads
a variable of another, and CHAD never needs a cotangent for a function itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import Loc
    from .primitives import Primitive


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
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

    op: Primitive
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
    """A call of a function value (`MakeClosure`): its code on its environment and `args`."""

    fn: Atom
    args: list[Atom]


@dataclass
class MakeTuple:
    """A tuple or (`kind="list"`) a list literal: the paper's n-ary product / array build."""

    items: list[Atom]
    kind: str = "tuple"


@dataclass
class MakeDict:
    """A dict literal; keys are discrete."""

    keys: list[Atom]
    values: list[Atom]


@dataclass
class GetItem:
    """`base[index]`: a projection of a tuple, an element of a list/dict/array, or a slice.

    `slice`: None for an element; for a slice, the `slice` object if its bounds are
    constants, else True. `natural`: the index is a valid non-negative position (a
    loop counter). `of_loop`: the element `for` yields at position `index` (a
    dict yields its keys, so then it is the index itself).
    """

    base: Atom
    index: Atom
    slice: object = None
    natural: bool = False
    of_loop: bool = False


@dataclass
class Case:
    """`case cond of {True -> then | False -> orelse}`; cond is discrete."""

    cond: Atom
    then: Block
    orelse: Block


@dataclass
class Loop:
    """A loop over a tuple of state variables (the paper's fold, Section 7, generalised).

    `for index in seq` (seq discrete: a range or a list of keys) or `while test`
    (test evaluated from the state before each iteration). Each iteration runs
    `body` with the state variables bound, and yields the new state `next`. When
    `stop` is given (the loop has `break` or `return`), it is a discrete atom of
    the body: the loop ends after an iteration in which it is true.
    The let binding a loop takes the final state.
    """

    state: list[str]
    init: list[Atom]
    index: str | None
    seq: Atom | None
    test: Block | None
    body: Block
    next: list[Atom]
    stop: Atom | None = None


Expr = Atom | Prim | Call | MakeClosure | Apply | MakeTuple | MakeDict | GetItem | Case | Loop


@dataclass
class Let:
    """`let target = expr`; a tuple target destructures an atom (`let <x, y> = t`)."""

    target: str | tuple[str, ...]
    expr: Expr
    loc: Loc | None = None


@dataclass
class Block:
    lets: list[Let]
    result: Atom


@dataclass(eq=False)  # compared by identity: a function value's type names its code
class Function:
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


def format_atom(a: Atom) -> str:
    if isinstance(a, Var):
        return a.name
    if isinstance(a, Ref):
        return a.path
    return repr(a.value)


def format_expr(e: Expr, indent: str) -> str:
    if isinstance(e, (Var, Const, Ref)):
        return format_atom(e)
    if isinstance(e, Prim):
        return f"{e.op.name}({', '.join(map(format_atom, e.args))})"
    if isinstance(e, Call):
        return f"call {e.fn.__name__}({', '.join(map(format_atom, e.args))})"
    if isinstance(e, MakeClosure):
        return f"closure {code_name(e.code)}<{', '.join(map(format_atom, e.captured))}>"
    if isinstance(e, Apply):
        return f"{format_atom(e.fn)}({', '.join(map(format_atom, e.args))})"
    if isinstance(e, MakeTuple):
        brackets = "[]" if e.kind == "list" else "<>"
        return brackets[0] + ", ".join(map(format_atom, e.items)) + brackets[1]
    if isinstance(e, MakeDict):
        return "{" + ", ".join(f"{format_atom(k)}: {format_atom(v)}" for k, v in zip(e.keys, e.values)) + "}"
    if isinstance(e, GetItem):
        return f"{format_atom(e.base)}[{format_atom(e.index)}]"
    inner = indent + "    "
    if isinstance(e, Loop):
        head = f"for {e.index} in {format_atom(e.seq)}" if e.seq is not None else "while"
        state = ", ".join(f"{s} = {format_atom(a)}" for s, a in zip(e.state, e.init))
        out = f"loop {head} with {state}\n"
        if e.test is not None:
            out += f"{inner}test ->\n{format_block(e.test, inner + '    ')}\n"
        out += f"{inner}body ->\n{format_block(e.body, inner + '    ')}\n"
        out += f"{inner}next <{', '.join(map(format_atom, e.next))}>"
        if e.stop is not None:
            out += f" stop if {format_atom(e.stop)}"
        return out
    return (
        f"case {format_atom(e.cond)} of\n{inner}True ->\n{format_block(e.then, inner + '    ')}\n"
        f"{inner}False ->\n{format_block(e.orelse, inner + '    ')}"
    )


def code_name(code: object) -> str:
    """The name of a function value's code (a lifted `Function` or a Python function)."""
    return code.name if isinstance(code, Function) else code.__name__


def format_block(b: Block, indent: str = "") -> str:
    lines = []
    for let in b.lets:
        target = let.target if isinstance(let.target, str) else "<" + ", ".join(let.target) + ">"
        lines.append(f"{indent}let {target} = {format_expr(let.expr, indent)}")
    lines.append(f"{indent}in {format_atom(b.result)}")
    return "\n".join(lines)


def format_function(f: Function) -> str:
    return f"def {f.name}({', '.join(f.params)}):\n{format_block(f.body, '    ')}"
