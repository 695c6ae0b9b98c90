"""Early rejection of syntax outside the supported language (after Tangent's `fence`).

One walk over the gast tree before any transformation: every node type is either
in the supported language or rejected here with a message that names it, so later
passes can assume well-formed input and no construct is ever half-differentiated.
"""

from __future__ import annotations

import gast

from ..errors import UnsupportedSyntax
from .scope import children, element_path
from .source import ParsedFunction

# Node types that need no check beyond visiting their children.
_ALLOWED = (
    gast.Module,
    gast.Assign,
    gast.AugAssign,
    gast.AnnAssign,
    gast.Return,
    gast.If,
    gast.Pass,
    gast.Expr,
    gast.Assert,
    gast.BoolOp,
    gast.BinOp,
    gast.UnaryOp,
    gast.IfExp,
    gast.Compare,
    gast.Call,
    gast.keyword,
    gast.Constant,
    gast.Attribute,
    gast.Subscript,
    gast.Name,
    gast.Tuple,
    gast.Load,
    gast.Store,
    gast.arguments,
    gast.And,
    gast.Or,
    gast.Add,
    gast.Sub,
    gast.Mult,
    gast.Div,
    gast.FloorDiv,
    gast.Mod,
    gast.Pow,
    gast.Not,
    gast.USub,
    gast.UAdd,
    gast.Invert,
    gast.Eq,
    gast.NotEq,
    gast.Lt,
    gast.LtE,
    gast.Gt,
    gast.GtE,
    gast.Is,
    gast.IsNot,
    gast.In,
    gast.NotIn,
    gast.For,
    gast.While,
    gast.Break,
    gast.Continue,
    gast.List,
    gast.ListComp,
    gast.GeneratorExp,
    gast.DictComp,
    gast.comprehension,
    gast.Dict,
    gast.Starred,
    gast.With,
    gast.withitem,
    gast.JoinedStr,
    gast.FormattedValue,
    gast.Slice,
    gast.MatMult,
    gast.Try,  # spelled as attempted calls by `rewrite/tries.py`
    gast.ExceptHandler,
)

# The allowed node types with a check of their own below; the others only have their children checked.
_CHECKED = (
    gast.Assign,
    gast.AugAssign,
    gast.AnnAssign,
    gast.Expr,
    gast.List,
    gast.Tuple,
    gast.For,
    gast.While,
    gast.comprehension,
    gast.Dict,
    gast.Attribute,
)
_PLAIN = frozenset(kind for kind in _ALLOWED if kind not in _CHECKED)

# What to call a rejected construct, and a hint where there is one.
_REJECTED = {  # (`raise`, `global`, `import`, `del`, `class` run as written: `rewrite/as_written.py`)
    gast.AsyncWith: "`async with` is not supported",
    gast.AsyncFor: "`async for` is not supported",
    gast.AsyncFunctionDef: "`async def` is not supported",
    gast.Yield: "`yield` (generators) is not supported",
    gast.YieldFrom: "`yield from` (generators) is not supported",
    gast.Await: "`await` is not supported",
    gast.NamedExpr: "assignment expressions (`:=`) are not supported",
    gast.Set: "sets are not supported",
    gast.SetComp: "set comprehensions are not supported",
}


def fence(parsed: ParsedFunction) -> None:
    """Raise `UnsupportedSyntax` at the first construct chadpy does not differentiate."""
    _check_function(parsed.tree, parsed, nested=False)


def _check_function(fn: gast.FunctionDef | gast.Lambda, parsed: ParsedFunction, nested: bool) -> None:
    """A function's parameters, defaults and body (a nested `def` or `lambda` too)."""
    args = fn.args
    if nested and (args.vararg is not None or args.kwarg is not None):
        raise UnsupportedSyntax(
            "star-parameters (`*args`, `**kwargs`) of a nested function are not supported", parsed.loc(fn)
        )
    if nested and args.kwonlyargs:
        raise UnsupportedSyntax("keyword-only parameters of a nested function are not supported", parsed.loc(fn))
    if isinstance(fn, gast.FunctionDef) and nested and fn.decorator_list:
        raise UnsupportedSyntax("decorators on a nested function are not supported", parsed.loc(fn))
    for default in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
        _check(default, parsed, fn)
    for stmt in fn.body if isinstance(fn, gast.FunctionDef) else [fn.body]:
        _check(stmt, parsed, fn)


def _check(node: gast.AST, parsed: ParsedFunction, line_node: gast.AST | None = None) -> None:
    where = node if hasattr(node, "lineno") else line_node
    kind = type(node)
    if kind in _PLAIN:  # most nodes: only their children to check (the tests below, by type, in a set)
        for child in children(node):
            _check(child, parsed, where)
        return
    if kind in _REJECTED:
        raise UnsupportedSyntax(_REJECTED[kind], parsed.loc(where))
    if isinstance(node, (gast.FunctionDef, gast.Lambda)):  # closure-converted by `lower`
        _check_function(node, parsed, nested=True)
        return
    if not isinstance(node, _ALLOWED):
        name = kind.__name__
        raise UnsupportedSyntax(f"`{name}` is not supported", parsed.loc(where))
    if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        for t in targets:
            _check_target(t, parsed, attributes=True, elements=True, starred=isinstance(node, gast.Assign))
        if isinstance(node, gast.AnnAssign) and node.value is None:
            raise UnsupportedSyntax("an annotation without a value is not supported", parsed.loc(node))
    if (
        isinstance(node, gast.Expr)
        and not isinstance(node.value, (gast.Call, gast.Constant))
        and type(node.value) not in _REJECTED  # e.g. `yield x`: named below
    ):
        raise UnsupportedSyntax("an expression statement that is not a call has no effect", parsed.loc(node))
    if isinstance(node, (gast.For, gast.While)) and node.orelse:
        kind = "for" if isinstance(node, gast.For) else "while"
        raise UnsupportedSyntax(f"`{kind} ... else` is not supported; use a flag variable", parsed.loc(node))
    if isinstance(node, gast.For):
        _check_target(node.target, parsed)
    if isinstance(node, gast.comprehension):
        if node.is_async:
            raise UnsupportedSyntax("async comprehensions are not supported", parsed.loc(where))
        _check_target(node.target, parsed)
    if isinstance(node, gast.Dict) and any(k is None for k in node.keys):
        raise UnsupportedSyntax("`**` in a dict literal is not supported", parsed.loc(where))
    if (
        isinstance(node, gast.Attribute)
        and not isinstance(node.ctx, gast.Load)
        and not isinstance(node.value, gast.Name)
    ):
        raise UnsupportedSyntax(
            "assigning an attribute of an attribute (`a.b.c = ...`) is not supported", parsed.loc(where)
        )
    for child in children(node):
        _check(child, parsed, where)


def _check_target(
    target: gast.AST, parsed: ParsedFunction, attributes: bool = False, elements: bool = False, starred: bool = False
) -> None:
    """An assignment's target (`attributes`: `obj.x` may be one; `elements`: `x[k]` of a variable x,
    `assignments.py`; `starred`: `*b` in a tuple of targets, `unpacking.py`) or a loop's."""
    if isinstance(target, gast.Name) or attributes and isinstance(target, gast.Attribute):
        return
    if isinstance(target, gast.Tuple):
        for t in target.elts:
            _check_target(
                t.value if starred and isinstance(t, gast.Starred) else t, parsed, attributes, elements, starred
            )
        return
    if isinstance(target, gast.Subscript):
        path = element_path(target)
        if elements and len(path) <= 2 and isinstance(path[0].value, gast.Name):  # `x[i]`, `x[t][i]`, `a[i], b = v`
            return
        where = "an element three deep or of an attribute" if elements else "an element in this position"
        raise UnsupportedSyntax(
            f"assigning to {where} (`x[i][j][k] = ...`, `obj.xs[i] = ...`, `for x[i] in ...`) is not "
            "supported: assign to an element of a variable or of its element (`x[i][j] = v`, `x[i, j] = v`)",
            parsed.loc(target),
        )
    if isinstance(target, gast.Attribute):
        raise UnsupportedSyntax("an object's attribute as a loop variable is not supported", parsed.loc(target))
    if isinstance(target, gast.Starred):
        raise UnsupportedSyntax(
            "a starred target (`a, *b`) is supported in an assignment only (not in a loop's target)", parsed.loc(target)
        )
    raise UnsupportedSyntax(f"assignment to `{type(target).__name__}` is not supported", parsed.loc(target))
