"""Element assignment, desugared into the in-place update it is.

| statement | becomes |
| --- | --- |
| `x[k] = v` | `x.__setitem__(k, v)` (a slice `a:b` in k as `slice(a, b)`) |
| `x[k] op= v` | `x.__setitem__(k, x[k] op v)`, k evaluated once |
| `x[t][k] = v` | `x.__setitem_in__(t, k, v)` (an element's element: `x[t]` updated in place) |
| `a[i], b = v` | `p, q = v`, then `a[i] = p` and `b = q` (unpacked first, assigned left to right) |
| `x.fill(v)` | `x.__setitem__(..., v)` |
| `np.add.at(x, k, v)` | `x[k] = added_at(x, k, v)`, then as above (`_adds_at`) |

`x.__setitem__` is then an update like `xs.append` (`updates.py`): it binds x to a new SSA
name, `ownership` checks that nobody else sees the object, and `runtime/writes.py` makes the write in
place, logged, at O(1). Like `with`, this runs on the whole tree before lowering.
"""

from __future__ import annotations

import functools

import gast
import numpy as np

from ..names import NameSupply
from ..read.scope import element_path, walk
from ..read.source import ParsedFunction, Watch
from ..runtime import numpy as numpy_runtime
from .blocks import gast_name, rewrite_blocks


def element_assignments(parsed: ParsedFunction) -> None:
    """Rewrite every element assignment of the function (nested functions' too), in place."""
    _adds_at(parsed)
    rewrite_blocks(parsed, _assigns_elements, lambda stmts, names: [new for s in stmts for new in _rewritten(s, names)])


def _adds_at(parsed: ParsedFunction) -> None:
    """`np.add.at(x, k, v)` on a local x (NumPy's unbuffered `x[k] += v`: a position k names twice gets both
    values) is the element assignment `x[k] = added_at(x, k, v)` of the values x[k] takes (a position named
    twice is written twice with its one total), k and v evaluated once. `np.add` is looked up here (a
    local `np` is not NumPy), `added_at` bound among the function's outside names."""

    def call_of(stmt: gast.stmt) -> gast.Call | None:
        call = stmt.value if isinstance(stmt, gast.Expr) else None
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "at"):
            return None
        if len(call.args) != 3 or call.keywords or not isinstance(call.args[0], gast.Name):
            return None
        path, node = [], call.func.value
        while isinstance(node, gast.Attribute):
            path, node = [node.attr, *path], node.value
        if not isinstance(node, gast.Name) or node.id in local():
            return None
        value = parsed.resolve(node.id, Watch())
        for attr in path:
            value = getattr(value, attr, None)
        return call if value is np.add else None

    def rewritten(stmts: list[gast.stmt], names: NameSupply) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            call = call_of(stmt)
            if call is None:
                out.append(stmt)
                continue
            start = len(out)
            x, k, v = call.args
            k, v = (e if _simple(e) else _bound(e, names, out, hint) for e, hint in ((k, "key"), (v, "value")))
            helper = names.fresh("added_at")
            parsed.outside[helper] = numpy_runtime.added_at
            target = gast.Subscript(gast_name(x.id), k, gast.Store())
            out.append(gast.Assign([target], gast.Call(gast_name(helper), [gast_name(x.id), k, v], []), None))
            for n in (n for new in out[start:] for n in walk(new)):
                if isinstance(n, (gast.expr, gast.stmt)):
                    gast.copy_location(n, stmt)
        return out

    @functools.cache
    def local() -> set[str]:  # the names the function binds (its nested functions' too): read only for a `.at`
        return {n.id for n in walk(parsed.tree) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}

    rewrite_blocks(parsed, lambda stmt: call_of(stmt) is not None, rewritten)


def _assigns_elements(stmt: gast.stmt) -> bool:
    if isinstance(stmt, gast.Assign):
        return any(map(_holds_element, stmt.targets))
    if isinstance(stmt, gast.AugAssign):
        return isinstance(stmt.target, gast.Subscript)
    return _filled(stmt) is not None


def _holds_element(target: gast.expr) -> bool:
    """An element target, or a tuple target with one inside (`h[:, t], cache = ...`)."""
    if isinstance(target, gast.Tuple):
        return any(map(_holds_element, target.elts))
    return isinstance(target, gast.Subscript)


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
            _assign(target, value, names, out)
    elif isinstance(stmt, gast.AugAssign):
        keys = [key_expression(s.slice) for s in element_path(stmt.target)]
        keys = [k if _simple(k) else _bound(k, names, out, "key") for k in keys]
        current = _container(stmt.target)
        for k in keys:
            current = gast.Subscript(current, k, gast.Load())
        out.append(_set(_container(stmt.target), *keys, gast.BinOp(current, stmt.op, stmt.value)))
    else:
        call = _filled(stmt)
        out.append(_set(call.func.value, gast.Constant(Ellipsis, None), call.args[0]))
    for new in out:
        for n in walk(new):
            if isinstance(n, (gast.expr, gast.stmt)):
                gast.copy_location(n, stmt)
    return out


def _assign(target: gast.expr, value: gast.expr, names: NameSupply, out: list[gast.stmt]) -> None:
    """`target = value` for a target holding elements: a tuple unpacked into fresh names first (Python unpacks
    the whole value, then assigns the targets from left to right), an element as the update it is."""
    if isinstance(target, gast.Tuple) and any(map(_holds_element, target.elts)):
        parts = [names.fresh("unpacked") for _ in target.elts]
        out.append(gast.Assign([gast.Tuple([gast_name(p, gast.Store) for p in parts], gast.Store())], value, None))
        for t, p in zip(target.elts, parts):
            _assign(t, gast_name(p), names, out)
    elif isinstance(target, gast.Subscript):
        out.append(_set(_container(target), *(key_expression(s.slice) for s in element_path(target)), value))
    else:
        out.append(gast.Assign([target], value, None))


def _container(target: gast.Subscript) -> gast.Name:
    """The variable `x` of the target `x[k]` or `x[t][k]`."""
    return gast_name(element_path(target)[0].value.id)


def _set(container: gast.Name, *keys_and_value: gast.expr) -> gast.Expr:
    """`x.__setitem__(k, v)`, or `x.__setitem_in__(t, k, v)` for an element's element."""
    method = "__setitem__" if len(keys_and_value) == 2 else "__setitem_in__"
    return gast.Expr(gast.Call(gast.Attribute(gast_name(container.id), method, gast.Load()), list(keys_and_value), []))


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
