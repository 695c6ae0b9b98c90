"""Code generation: target program -> Python source text.

Expressions and simple statements are printed directly, parenthesised by precedence as
`ast.unparse` does (building gast nodes for its unparser took an eighth of the
transformation). Compound statements (`def`, `if`) are laid out here too, so that each
part of the derivative can carry a comment naming the CHAD rule that produced it, and
each run of statements the user's line it comes from.

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

from ..errors import Loc
from ..names import Globals
from ..runtime import cotangents
from ..target.expressions import (
    Attr,
    BinOp,
    CallX,
    Compare,
    DictX,
    Expr,
    IfExp,
    Item,
    ListX,
    Lit,
    Name,
    Obj,
    TupleX,
    UnaryOp,
)
from ..target.statements import (
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
    Try,
    While,
    local_names,
)

_MODULE_ALIASES = {"numpy": "np"}
_WIDTH = 110  # a comment longer than fits before this column goes on its own line above


def _spell(ns: Globals, obj: object, path: str) -> str:
    """`math.cos` as `math.cos` (binding the module), anything else by a flat name."""
    parts = path.split(".")
    module = sys.modules.get(parts[0]) if len(parts) > 1 else None
    if module is not None and _follow(module, parts[1:]) is obj:
        return ".".join([ns.bind(_MODULE_ALIASES.get(parts[0], parts[0]), module), *parts[1:]])
    return ns.bind(parts[-1], obj)


def _follow(obj: object, attrs: list[str]) -> object:
    for a in attrs:
        obj = getattr(obj, a, None)
    return obj


# ------------------------------------------------------------------ expressions as text
# The unparser's precedences and layout: parentheses only where needed, a tuple in parentheses
# unless it is an assignment's targets or a subscript's index.

_TUPLE, _YIELD, _TEST, _NOT, _CMP, _ARITH, _TERM, _FACTOR, _POWER, _ATOM = 2, 3, 4, 7, 8, 13, 14, 15, 16, 18
_BINARY = {"+": _ARITH, "-": _ARITH, "*": _TERM, "/": _TERM, "//": _TERM, "%": _TERM, "@": _TERM, "**": _POWER}
_INFINITY = "1e" + repr(sys.float_info.max_10_exp + 1)  # how the unparser writes an infinite literal


def _wrap(text: str, binding: int, outer: int) -> str:
    """text in parentheses when its operator binds less tightly than its context asks."""
    return f"({text})" if outer > binding else text


def _items(texts: list[str]) -> str:
    """A tuple's items: `a, b`, or `a,` for one."""
    return texts[0] + "," if len(texts) == 1 else ", ".join(texts)


def _literal(value: object) -> str:
    if isinstance(value, tuple):
        return f"({_items([_literal(v) for v in value])})"
    if isinstance(value, (float, complex)):
        return repr(value).replace("inf", _INFINITY).replace("nan", f"({_INFINITY}-{_INFINITY})")
    return "..." if value is Ellipsis else repr(value)


def _constant(value: object, ns: Globals, outer: int) -> str:
    if isinstance(value, float) and math.isnan(value):
        return _spell(ns, math.nan, "math.nan")
    if isinstance(value, float) and math.isinf(value):
        inf = _spell(ns, math.inf, "math.inf")
        return inf if value > 0 else _wrap("-" + inf, _FACTOR, outer)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        # never a negative literal operand: `-2 ** 2` would mean -(2 ** 2)
        return _wrap("-" + _literal(-value), _FACTOR, outer)
    return _literal(value)


def expr_text(e: Expr, ns: Globals, outer: int = _TEST) -> str:
    """e as Python source, in parentheses if it binds less tightly than `outer` (a precedence)."""
    t = lambda x, p=_TEST: expr_text(x, ns, p)  # noqa: E731
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Lit):
        return _constant(e.value, ns, outer)
    if isinstance(e, Obj):
        return _spell(ns, e.obj, e.path)
    if isinstance(e, BinOp):
        p = _BINARY[e.op]
        left, right = (p + 1, p) if e.op == "**" else (p, p + 1)  # `**` groups to the right
        return _wrap(f"{t(e.left, left)} {e.op} {t(e.right, right)}", p, outer)
    if isinstance(e, UnaryOp):
        p = _NOT if e.op == "not" else _FACTOR
        return _wrap(f"not {t(e.operand, p)}" if e.op == "not" else e.op + t(e.operand, p), p, outer)
    if isinstance(e, Compare):
        return _wrap(f"{t(e.left, _CMP + 1)} {e.op} {t(e.right, _CMP + 1)}", _CMP, outer)
    if isinstance(e, IfExp):
        return _wrap(f"{t(e.body, _TEST + 1)} if {t(e.test, _TEST + 1)} else {t(e.orelse)}", _TEST, outer)
    if isinstance(e, CallX):
        args = [t(a) for a in e.args] + [f"{k}={t(v)}" for k, v in e.keywords.items()]
        return f"{t(e.func, _ATOM)}({', '.join(args)})"
    if isinstance(e, Attr):
        value = t(e.value, _ATOM)
        if isinstance(e.value, Lit) and isinstance(e.value.value, int) and e.value.value >= 0:
            value += " "  # `3 .real`: `3.real` would read as a float
        return f"{value}.{e.attr}"
    if isinstance(e, Item):
        index = _items([t(x) for x in e.index.items]) if isinstance(e.index, TupleX) and e.index.items else t(e.index)
        return f"{t(e.value, _ATOM)}[{index}]"
    if isinstance(e, TupleX):
        return _wrap(_items([t(x) for x in e.items]), _TUPLE, outer) if e.items else "()"
    if isinstance(e, DictX):
        return "{" + ", ".join(f"{t(k)}: {t(v)}" for k, v in zip(e.keys, e.values)) + "}"
    if isinstance(e, ListX):
        return "[" + ", ".join(map(t, e.items)) + "]"
    raise AssertionError(e)


def _simple_text(s: Stmt, ns: Globals) -> str:
    """A simple statement as one line of Python."""
    t = lambda x, p=_TEST: expr_text(x, ns, p)  # noqa: E731
    if isinstance(s, Assign):
        return f"{', '.join(s.targets) or '()'} = {t(s.value)}"  # `() = ()`: binds nothing
    if isinstance(s, Accum):
        if not s.real:
            return f"{s.name} = {t(CallX(Obj(cotangents.add, 'add'), [Name(s.name), s.value]))}"
        if isinstance(s.value, UnaryOp) and s.value.op == "-":  # `dx -= e`, not `dx += -e`
            return f"{s.name} -= {t(s.value.operand)}"
        return f"{s.name} += {t(s.value)}"
    if isinstance(s, Return):
        return f"return {t(s.value)}"
    if isinstance(s, Do):
        return t(s.value, _YIELD)
    if isinstance(s, Del):
        return f"del {', '.join(s.names)}"
    if isinstance(s, Break):
        return "break"
    if isinstance(s, Record):
        record = (
            Lit(None) if not s.names else Name(s.names[0]) if len(s.names) == 1 else TupleX(list(map(Name, s.names)))
        )
        return t(CallX(Attr(Name(s.tape), "append"), [record]), _YIELD)
    if isinstance(s, AccNew):
        return f"{s.acc} = {t(CallX(Obj(s.cls, s.cls.__name__), [Lit(s.depth)]))}"
    if isinstance(s, AccPush):
        return t(CallX(Attr(Name(s.acc), "push0"), [Lit(s.slot), s.zero]), _YIELD)
    if isinstance(s, AccOne):
        return t(CallX(Attr(Name(s.acc), "one"), [Lit(s.slot), s.value]), _YIELD)
    if isinstance(s, AccPop):
        return f"{s.ct} = {t(CallX(Attr(Name(s.acc), 'pop'), [Lit(s.slot)]))}"
    raise AssertionError(s)


@functools.lru_cache(maxsize=4096)
def _code_of(line: str) -> str:
    """A line of the user's source without its indentation and its comment (asked once per statement
    the line made: cached)."""
    line = line.strip()
    if "#" not in line:  # no comment to find: no tokenizing (most lines)
        return line
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return line[: token.start[1]].rstrip()
    except (tokenize.TokenError, SyntaxError):  # the first line of a longer statement
        pass
    return line


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
        g = functools.partial(expr_text, ns=self.ns)
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
        elif isinstance(s, Try):
            self.emit(s, "try:", indent)
            self.stmts(s.body, inner, shown)
            self.lines.append(f"{indent}except {g(s.catch)} as {s.caught}:")
            self.stmts(s.handler, inner, shown)
            return
        elif isinstance(s, For):
            self.emit(s, f"for {s.target} in {g(s.iter)}:", indent)
        elif isinstance(s, While):
            self.emit(s, "while True:", indent)
        elif isinstance(s, Replay):
            self.emit(s, f"for {_replay_header(s, lambda f: _spell(self.ns, f, f.__name__))}:", indent)
        else:
            self.emit(s, _simple_text(s, self.ns), indent, note)
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
