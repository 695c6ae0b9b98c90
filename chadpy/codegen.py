"""Code generation: target program -> gast -> Python source text.

Simple statements and all expressions are built as gast nodes and printed with
`gast.unparse` (astor cannot print every construct and does not run on newer
Pythons). Compound statements (`def`, `if`) are laid out here, so that each part
of the derivative can carry a comment naming the CHAD rule that produced it, and
each run of statements the user's line it comes from; ASTs have no comments.

Outside objects (`math.cos`, a module constant, the runtime's `add`) get names
from `names.Globals`, which become the globals of the generated module.
"""

from __future__ import annotations

import functools
import io
import math
import sys
import tokenize
from collections.abc import Callable

import gast

from . import runtime
from .errors import Loc
from .expressions import Attr, BinOp, CallX, Compare, DictX, Expr, IfExp, Item, ListX, Lit, Name, Obj, TupleX, UnaryOp
from .names import Globals
from .target import (
    AccNew,
    AccOne,
    AccPop,
    AccPush,
    Accum,
    Assign,
    Break,
    Def,
    Del,
    Do,
    For,
    If,
    Record,
    Replay,
    Return,
    Stmt,
    While,
    local_names,
)

_BINOPS = {
    "+": gast.Add,
    "-": gast.Sub,
    "*": gast.Mult,
    "/": gast.Div,
    "//": gast.FloorDiv,
    "%": gast.Mod,
    "**": gast.Pow,
    "@": gast.MatMult,
}
_CMPOPS = {
    "<": gast.Lt,
    "<=": gast.LtE,
    ">": gast.Gt,
    ">=": gast.GtE,
    "==": gast.Eq,
    "!=": gast.NotEq,
    "is": gast.Is,
    "is not": gast.IsNot,
    "in": gast.In,
    "not in": gast.NotIn,
}
_UNOPS = {"-": gast.USub, "+": gast.UAdd, "not": gast.Not}
_MODULE_ALIASES = {"numpy": "np"}
_WIDTH = 110  # a comment longer than fits before this column goes on its own line above


def _spell(ns: Globals, obj: object, path: str) -> gast.expr:
    """`math.cos` as `math.cos` (binding the module), anything else by a flat name."""
    parts = path.split(".")
    module = sys.modules.get(parts[0]) if len(parts) > 1 else None
    if module is not None and _follow(module, parts[1:]) is obj:
        node: gast.expr = _name(ns.bind(_MODULE_ALIASES.get(parts[0], parts[0]), module))
        for attr in parts[1:]:
            node = gast.Attribute(node, attr, gast.Load())
        return node
    return _name(ns.bind(parts[-1], obj))


def _follow(obj: object, attrs: list[str]) -> object:
    for a in attrs:
        obj = getattr(obj, a, None)
    return obj


def _name(id_: str, ctx: gast.expr_context | None = None) -> gast.Name:
    return gast.Name(id_, ctx or gast.Load(), None, None)


def _constant(value: object, ns: Globals) -> gast.expr:
    if isinstance(value, float) and math.isnan(value):
        return _spell(ns, math.nan, "math.nan")
    if isinstance(value, float) and math.isinf(value):
        inf = _spell(ns, math.inf, "math.inf")
        return inf if value > 0 else gast.UnaryOp(gast.USub(), inf)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        # never a negative literal operand: `-2 ** 2` would mean -(2 ** 2)
        return gast.UnaryOp(gast.USub(), gast.Constant(-value, None))
    return gast.Constant(value, None)


def expr_to_gast(e: Expr, ns: Globals) -> gast.expr:
    g = lambda x: expr_to_gast(x, ns)  # noqa: E731
    if isinstance(e, Name):
        return _name(e.id)
    if isinstance(e, Lit):
        return _constant(e.value, ns)
    if isinstance(e, Obj):
        return _spell(ns, e.obj, e.path)
    if isinstance(e, BinOp):
        return gast.BinOp(g(e.left), _BINOPS[e.op](), g(e.right))
    if isinstance(e, UnaryOp):
        return gast.UnaryOp(_UNOPS[e.op](), g(e.operand))
    if isinstance(e, Compare):
        return gast.Compare(g(e.left), [_CMPOPS[e.op]()], [g(e.right)])
    if isinstance(e, IfExp):
        return gast.IfExp(g(e.test), g(e.body), g(e.orelse))
    if isinstance(e, CallX):
        return gast.Call(g(e.func), [g(a) for a in e.args], [gast.keyword(k, g(v)) for k, v in e.keywords.items()])
    if isinstance(e, Attr):
        return gast.Attribute(g(e.value), e.attr, gast.Load())
    if isinstance(e, Item):
        return gast.Subscript(g(e.value), g(e.index), gast.Load())
    if isinstance(e, TupleX):
        return gast.Tuple([g(x) for x in e.items], gast.Load())
    if isinstance(e, DictX):
        return gast.Dict([g(k) for k in e.keys], [g(v) for v in e.values])
    if isinstance(e, ListX):
        return gast.List([g(x) for x in e.items], gast.Load())
    raise AssertionError(e)


def _simple_to_gast(s: Stmt, ns: Globals) -> gast.stmt:
    g = lambda x: expr_to_gast(x, ns)  # noqa: E731
    if isinstance(s, Assign):
        if len(s.targets) == 1:
            target: gast.expr = _name(s.targets[0], gast.Store())
        else:
            target = gast.Tuple([_name(t, gast.Store()) for t in s.targets], gast.Store())
        return gast.Assign([target], g(s.value), None)
    if isinstance(s, Accum):
        if s.real:
            if isinstance(s.value, UnaryOp) and s.value.op == "-":  # `dx -= e`, not `dx += -e`
                return gast.AugAssign(_name(s.name, gast.Store()), gast.Sub(), g(s.value.operand))
            return gast.AugAssign(_name(s.name, gast.Store()), gast.Add(), g(s.value))
        return gast.Assign(
            [_name(s.name, gast.Store())], g(CallX(Obj(runtime.add, "add"), [Name(s.name), s.value])), None
        )
    if isinstance(s, Return):
        return gast.Return(g(s.value))
    if isinstance(s, Do):
        return gast.Expr(g(s.value))
    if isinstance(s, Del):
        return gast.Delete([_name(n, gast.Del()) for n in s.names])
    if isinstance(s, Break):
        return gast.Break()
    if isinstance(s, Record):
        record = (
            Lit(None) if not s.names else Name(s.names[0]) if len(s.names) == 1 else TupleX(list(map(Name, s.names)))
        )
        return gast.Expr(g(CallX(Attr(Name(s.tape), "append"), [record])))
    if isinstance(s, AccNew):
        return gast.Assign([_name(s.acc, gast.Store())], g(CallX(Obj(s.cls, s.cls.__name__), [Lit(s.depth)])), None)
    if isinstance(s, AccPush):
        return gast.Expr(g(CallX(Attr(Name(s.acc), "push0"), [Lit(s.slot), s.zero])))
    if isinstance(s, AccOne):
        return gast.Expr(g(CallX(Attr(Name(s.acc), "one"), [Lit(s.slot), s.value])))
    if isinstance(s, AccPop):
        return gast.Assign([_name(s.ct, gast.Store())], g(CallX(Attr(Name(s.acc), "pop"), [Lit(s.slot)])), None)
    raise AssertionError(s)


@functools.lru_cache(maxsize=4096)
def _code_of(line: str) -> str:
    """A line of the user's source without its indentation and its comment (asked once per statement
    the line made: cached)."""
    line = line.strip()
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return line[: token.start[1]].rstrip()
    except (tokenize.TokenError, SyntaxError):  # the first line of a longer statement
        pass
    return line


def _unparse(node: gast.AST) -> str:
    if not hasattr(node, "lineno"):  # the unparser reads a statement's own line (not its parts': quicker)
        node.lineno = 1
    return gast.unparse(node).strip()


class _Printer:
    """Lays out statements. A run of statements from one line of the user's code gets that line as
    one comment above it (`# line 12: y = x * x`; at the end of the line of a run of one), shown
    again only where the run is interrupted. A statement's own comment (the rule or note that made
    it) goes at the end of its line if it fits, above it otherwise (a function's always above)."""

    def __init__(self, ns: Globals, annotate: bool):
        self.ns = ns
        self.annotate = annotate
        self.lines: list[str] = []
        self.origins: dict[int, Loc] = {}  # line number (1-based) -> the user's line it comes from

    def comment(self, text: str, indent: str) -> None:
        if self.annotate and text:
            self.lines.append(f"{indent}# {text}")

    def emit(self, s: Stmt, text: str, indent: str, note: str | None = None) -> None:
        """Print a statement's (first) line with its comment (or `note`), remembering which line of
        the user's code it comes from."""
        note = s.comment if note is None else note
        if self.annotate and note and not isinstance(s, Def) and len(indent + text + note) < _WIDTH:
            text += "  # " + note
        else:
            self.comment(note, indent)
        if s.loc is not None:
            self.origins[len(self.lines) + 1] = s.loc
        self.lines.append(indent + text)

    def stmts(self, stmts: list[Stmt], indent: str, shown: tuple[Loc, ...] = ()) -> None:
        """`shown`: the user's lines announced above, innermost last (a statement of one of them
        continues it without a new comment)."""
        if not stmts:
            self.lines.append(indent + "pass")
        current = shown[-1] if shown else None
        for i, s in enumerate(stmts):
            note = None
            if s.loc is not None and s.loc != current and s.loc not in shown:
                line = f"line {s.loc.lineno}: {_code_of(s.loc.line)}"
                alone = i + 1 == len(stmts) or stmts[i + 1].loc != s.loc
                if alone and not s.comment and not s.bodies():
                    note = line  # a line's only statement: its comment at the end
                else:
                    self.comment(line, indent)
            current = s.loc
            self.stmt(s, indent, shown + (s.loc,) if s.loc is not None and s.loc not in shown else shown, note)

    def stmt(self, s: Stmt, indent: str, shown: tuple[Loc, ...], note: str | None = None) -> None:
        g = lambda e: _unparse(expr_to_gast(e, self.ns))  # noqa: E731
        inner = indent + "    "
        if isinstance(s, Def):
            self.emit(s, f"def {s.name}({', '.join(s.params)}):", indent)
        elif isinstance(s, If):
            self.emit(s, f"if {g(s.test)}:", indent)
            if s.orelse:
                self.stmts(s.body, inner, shown)
                self.lines.append(f"{indent}else:")
                self.stmts(s.orelse, inner, shown)
                return
        elif isinstance(s, For):
            self.emit(s, f"for {s.target} in {g(s.iter)}:", indent)
        elif isinstance(s, While):
            self.emit(s, "while True:", indent)
        elif isinstance(s, Replay):
            self.emit(s, f"for {_replay_header(s, lambda f: _spell(self.ns, f, f.__name__).id)}:", indent)
        else:
            self.emit(s, _unparse(_simple_to_gast(s, self.ns)), indent, note)
            return
        self.stmts(s.body, inner, shown)


def _replay_header(s: Replay, spell: Callable[[Callable], str]) -> str:
    """`names in reversed(tape)`; with the loop's count, read again from the sequence it counted:
    `k, (a, b) in zip(reversed(positions[:len(tape)]), reversed(tape))`."""
    names = ", ".join(s.names) if s.names else "_"
    newest_first = f"{spell(reversed)}({s.tape})"
    if s.index is None:
        return f"{names} in {newest_first}"
    counts = f"{spell(reversed)}({s.positions}[:{spell(len)}({s.tape})])"
    if not s.names:
        return f"{s.index} in {counts}"
    records = f"({names})" if len(s.names) > 1 else names
    return f"{s.index}, {records} in {spell(zip)}({counts}, {newest_first})"


def generate(defs: list[Def], annotate: bool = True) -> tuple[str, dict[str, object], dict[int, Loc]]:
    """Source text of the generated module, the bindings its names need, and the user's line each of
    its lines comes from."""
    ns = Globals(local_names(list(defs)))
    printer = _Printer(ns, annotate)
    for i, d in enumerate(defs):
        if i:
            printer.lines.append("")
            printer.lines.append("")
        printer.stmts([d], "")
    return "\n".join(printer.lines) + "\n", ns.bindings, printer.origins
