"""Statement lists rewritten before lowering: the walk that finds and replaces them (`rewrite_blocks`,
which `assignments` also uses), and `with` blocks spelled as calls of `__enter__` and `__exit__`."""

from __future__ import annotations

from collections.abc import Callable

import gast

from ..errors import UnsupportedSyntax
from ..names import NameSupply
from ..read import scope
from ..read.source import ParsedFunction


def gast_name(name: str, ctx: type = gast.Load) -> gast.Name:
    """A name in code the desugaring writes."""
    return gast.Name(name, ctx(), None, None)


def at(new: gast.stmt, stmt: gast.stmt) -> gast.stmt:
    """`new`, every node of it at `stmt`'s place."""
    for n in scope.walk(new):
        if isinstance(n, (gast.expr, gast.stmt)):
            gast.copy_location(n, stmt)
    return new


# ---------------------------------------------------------------- `with`: calls of `__enter__` and `__exit__`


def with_blocks(parsed: ParsedFunction) -> None:
    """Rewrite every `with cm as v: body` of the function (nested ones too) into the statements
    `_cm = cm; v = _cm.__enter__(); body; _cm.__exit__()` (`__exit__(None, None, None)` when it runs), in
    place, before any
    lowering: the body is lowered as ordinary code, the context manager (data) is entered and left
    around it when the forward pass runs. A body that may leave early (`return`, `break`, `continue`)
    would skip `__exit__`: rejected."""
    rewrite_blocks(parsed, lambda s: isinstance(s, gast.With), lambda stmts, names: _without_with(parsed, stmts, names))


def rewrite_blocks(
    parsed: ParsedFunction,
    holds: Callable[[gast.stmt], bool],
    rewrite: Callable[[list[gast.stmt], NameSupply], list[gast.stmt]],
) -> None:
    """Replace each statement list of the function (a body or an `else`, nested functions' too) that
    holds a statement `holds` picks by `rewrite(stmts, names)`, in place. `names` supplies fresh names;
    it is made at the first rewrite (most functions have nothing to rewrite)."""
    names = None
    for node in scope.outline(parsed.tree):  # statement lists are never inside an expression
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and any(map(holds, stmts)):
                if names is None:
                    names = NameSupply(scope.all_names(parsed.tree))
                setattr(node, field, rewrite(stmts, names))


def _without_with(parsed: ParsedFunction, stmts: list[gast.stmt], names: NameSupply) -> list[gast.stmt]:
    out: list[gast.stmt] = []
    for stmt in stmts:
        if not isinstance(stmt, gast.With):
            out.append(stmt)
            continue
        if scope.may_exit(stmt.body):
            raise UnsupportedSyntax(
                "`return`, `break` or `continue` inside a `with` block is not supported (it would leave the "
                "block without running the context manager's `__exit__`)",
                parsed.loc(stmt),
            )
        enter, leave = [], []
        for item in stmt.items:
            cm = names.fresh("context")
            entered = gast.Call(gast.Attribute(gast_name(cm), "__enter__", gast.Load()), [], [])
            enter.append(gast.Assign([gast_name(cm, gast.Store)], item.context_expr, None))
            if item.optional_vars is not None:
                enter.append(gast.Assign([item.optional_vars], entered, None))
            else:
                enter.append(gast.Expr(entered))
            leave.insert(0, gast.Expr(gast.Call(gast.Attribute(gast_name(cm), "__exit__", gast.Load()), [], [])))
        for new in enter + leave:
            for n in scope.walk(new):
                if isinstance(n, (gast.expr, gast.stmt)):
                    gast.copy_location(n, stmt)
        out += [*enter, *_without_with(parsed, stmt.body, names), *leave]
    return out
