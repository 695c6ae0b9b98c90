"""Element assignment, desugared into the in-place update it is.

| statement | becomes |
| --- | --- |
| `x[k] = v` | `x.__setitem__(k, v)` (a slice `a:b` in k as `slice(a, b)`) |
| `x[k] op= v` | `x.__setitem__(k, x[k] op v)`, k evaluated once |
| `x.fill(v)` | `x.__setitem__(..., v)` |

`x.__setitem__` is then an update like `xs.append` (`updates.py`): it binds x to a new SSA
name, `ownership` checks that nobody else sees the object, and `runtime/writes.py` makes the write in
place, logged, at O(1). Like `with`, this runs on the whole tree before lowering.
"""

from __future__ import annotations

import gast

from ..names import NameSupply
from ..read.scope import walk
from ..read.source import ParsedFunction
from .blocks import gast_name, rewrite_blocks


def element_assignments(parsed: ParsedFunction) -> None:
    """Rewrite every element assignment of the function (nested functions' too), in place."""
    rewrite_blocks(parsed, _assigns_elements, lambda stmts, names: [new for s in stmts for new in _rewritten(s, names)])


def _assigns_elements(stmt: gast.stmt) -> bool:
    if isinstance(stmt, gast.Assign):
        return any(isinstance(t, gast.Subscript) for t in stmt.targets)
    if isinstance(stmt, gast.AugAssign):
        return isinstance(stmt.target, gast.Subscript)
    return _filled(stmt) is not None


def _filled(stmt: gast.stmt) -> gast.Call | None:
    """The call in `x.fill(v)`."""
    if isinstance(stmt, gast.Expr) and isinstance(call := stmt.value, gast.Call):
        f = call.func
        if isinstance(f, gast.Attribute) and f.attr == "fill" and isinstance(f.value, gast.Name):
            if len(call.args) == 1 and not call.keywords:
                return call
    return None


def _rewritten(stmt: gast.stmt, names: NameSupply) -> list[gast.stmt]:
    if not _assigns_elements(stmt):
        return [stmt]
    out: list[gast.stmt] = []
    if isinstance(stmt, gast.Assign):
        value = stmt.value
        if len(stmt.targets) > 1 or not _simple(value):  # evaluated once, before the targets (Python's order)
            value = _bound(value, names, out, "value")
        for target in stmt.targets:
            if isinstance(target, gast.Subscript):
                out.append(_set(target.value, key_expression(target.slice), value))
            else:
                out.append(gast.Assign([target], value, None))
    elif isinstance(stmt, gast.AugAssign):
        key = key_expression(stmt.target.slice)
        if not _simple(key):
            key = _bound(key, names, out, "key")
        current = gast.Subscript(gast_name(stmt.target.value.id), key, gast.Load())
        out.append(_set(stmt.target.value, key, gast.BinOp(current, stmt.op, stmt.value)))
    else:
        call = _filled(stmt)
        out.append(_set(call.func.value, gast.Constant(Ellipsis, None), call.args[0]))
    for new in out:
        for n in walk(new):
            if isinstance(n, (gast.expr, gast.stmt)):
                gast.copy_location(n, stmt)
    return out


def _set(container: gast.Name, key: gast.expr, value: gast.expr) -> gast.Expr:
    method = gast.Attribute(gast_name(container.id), "__setitem__", gast.Load())
    return gast.Expr(gast.Call(method, [key, value], []))


def key_expression(node: gast.expr) -> gast.expr:
    """A subscript's index as an expression: `a:b` is `slice(a, b)`."""
    if isinstance(node, gast.Slice):
        parts = [p if p is not None else gast.Constant(None, None) for p in (node.lower, node.upper, node.step)]
        return gast.Call(gast_name("slice"), parts, [])
    if isinstance(node, gast.Tuple):
        return gast.Tuple([key_expression(e) for e in node.elts], gast.Load())
    return node


def _simple(node: gast.expr) -> bool:
    """A name or a constant (a tuple of them): evaluating it earlier or later gives the same value."""
    if isinstance(node, gast.Tuple):
        return all(map(_simple, node.elts))
    return isinstance(node, (gast.Name, gast.Constant))


def _bound(value: gast.expr, names: NameSupply, out: list[gast.stmt], hint: str) -> gast.Name:
    name = names.fresh(hint)
    out.append(gast.Assign([gast_name(name, gast.Store)], value, None))
    return gast_name(name)
