"""State kept on an object the function was given, written and read again in the call (`self.states[:, t] = h`
then `self.states[:, t - 1]`; `self.h = h` then `self.h @ W`): a variable of the call, so that derivatives flow
through what the call reads back.

| code | becomes |
| --- | --- |
| `self.h = v` ... `self.h` ... `return r` | `self_h = v` ... `self_h` ... `put_back(self, "h", self_h, False)` |
| `self.s[t] = h` ... `self.s[t - 1]` | `self_s = copied_in(self.s)` ... `self_s[t] = h` ... `put_back(..., True)` |

The attribute is read (or, if it is first assigned, not read) just before the first top-level statement using it,
and given back before every `return` after that and at the end: into the object it had where the function only
updated it in place (every name of that object sees the change, as in the plain call), else as the attribute's new
value (`runtime.records.put_back`). The object's other attributes are left as they are (read as ordinary fields;
written ones run as written, `as_written.py`).

It is done only where it is exact: the object is a parameter the function never assigns, used only through its
attributes (never passed on, returned, or a method of it called, which could read the state: those stay refused,
`as_written.py`), the attribute is not used inside a nested function, the first top-level statement using it
does not assign it on a path only (`if not self.built: self.w = ...`: it may not be there before), and an
attribute that is both assigned and updated in place is assigned first. An exception leaving the function leaves
the object as it was on entry (the plain call's updates before it are lost): the one difference. A helper that
gives back a differentiated value is refused (`ownership`: its caller could read it).
"""

from __future__ import annotations

import gast

from ..names import NameSupply
from ..read import scope
from ..read.source import ParsedFunction
from ..runtime import records
from .blocks import at, gast_name


def local_state(parsed: ParsedFunction) -> None:
    """Make each such attribute of the function's parameters a variable of the call, in place."""
    fn = parsed.tree
    if not isinstance(fn, gast.FunctionDef) or fn.name == "__init__":  # `self` in `__init__` is the function's own
        return
    params = set(scope.parameters(fn)) - scope.assigned(fn.body, attributes=False)
    names: NameSupply | None = None
    tree = _Tree(fn.body)
    for param, attr in [(p, a) for p in sorted(params) for a in tree.localised(p)]:  # decided on the tree as written
        if names is None:
            names = NameSupply(scope.all_names(fn))
            helpers = names.fresh("copied_in"), names.fresh("put_back")
            parsed.outside.update(zip(helpers, (records.copied_in, records.put_back)))
        _localise(fn, tree, param, attr, names.fresh(f"{param}_{attr}"), helpers)
        tree = _Tree(fn.body)


class _Tree:
    """The function's body walked once: each node's parent, whether it is in a nested function, the targets of
    augmented assignments, and each parameter's attributes with their nodes."""

    def __init__(self, body: list[gast.stmt]):
        self.body = body
        self.parent: dict[int, gast.AST | None] = {}
        self.augmented: set[int] = set()
        self.uses: dict[str, dict[str, list[gast.Attribute]]] = {}  # name -> its attribute -> the nodes
        self.escapes: set[str] = set()  # names used otherwise than through an attribute, or a method called
        self.nested: set[str] = set()  # names with an attribute used inside a nested function
        for node, parent, _, nested in scope.in_context(body, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            self.parent[id(node)] = parent
            if isinstance(node, gast.AugAssign):
                self.augmented.add(id(node.target))
            if isinstance(node, gast.Name):
                if not isinstance(parent, gast.Attribute):
                    self.escapes.add(node.id)
                else:
                    self.uses.setdefault(node.id, {}).setdefault(parent.attr, []).append(parent)
                    if nested:
                        self.nested.add(node.id)
        for name, attributes in self.uses.items():  # `obj.m(...)`: a method of it, which could read the state
            for n in (n for nodes in attributes.values() for n in nodes):
                call = self.parent.get(id(n))
                if isinstance(call, gast.Call) and call.func is n:
                    self.escapes.add(name)

    def localised(self, param: str) -> list[str]:
        """The attributes of `param` the function writes and reads, where making them variables is exact."""
        if param in self.escapes or param in self.nested:
            return []
        out = []
        for attr, nodes in self.uses.get(param, {}).items():
            written = [n for n in nodes if self.written(n)]
            if not written or len(written) == len(nodes):
                continue
            first = _first_user(self.body, {id(n) for n in nodes})
            if first is None or not _simple(self.body[first]) and _assigned_first(self.body[first], nodes):
                continue  # assigned first on a path: it may not be there before (`if not self.built: self.w = ...`)
            if self.rebound(nodes) and self.in_place(nodes) and not _assigns(self.body[first], param, attr):
                continue  # updated in place before it is assigned: the object it had must see the update
            out.append(attr)
        return out

    def written(self, node: gast.AST) -> bool:
        """`obj.a = v`, `obj.a += v`, `obj.a[k] = v` (or deeper), `obj.a.append(v)`."""
        if isinstance(node.ctx, gast.Store):
            return True
        parent = self.parent.get(id(node))
        while isinstance(parent, gast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, gast.Store):
                return True
            node, parent = parent, self.parent.get(id(parent))
        if isinstance(parent, gast.Attribute) and parent.attr in scope.MUTATING:
            return isinstance(self.parent.get(id(parent)), gast.Call)
        return False

    def in_place(self, nodes: list[gast.AST]) -> bool:
        """Whether the object the attribute holds is updated in place (`obj.a[k] = v`, `obj.a += v`, a mutator)."""
        return any(self.written(n) and (not isinstance(n.ctx, gast.Store) or id(n) in self.augmented) for n in nodes)

    def rebound(self, nodes: list[gast.AST]) -> bool:
        """Whether the attribute is assigned anew (`obj.a = v`)."""
        return any(isinstance(n.ctx, gast.Store) and id(n) not in self.augmented for n in nodes)


def _localise(fn: gast.FunctionDef, tree: _Tree, param: str, attr: str, local: str, helpers: tuple[str, str]) -> None:
    """Make `param.attr` the variable `local` (`helpers`: the names `copied_in` and `put_back` have here)."""
    copy_in, give_back = helpers
    body = fn.body
    nodes = tree.uses[param][attr]
    in_place = tree.in_place(nodes) and not tree.rebound(nodes)
    written = next(n for n in nodes if tree.written(n))  # where a message about giving it back points
    first = _first_user(body, {id(n) for n in nodes})
    start: list[gast.stmt] = []
    if not _assigns(body[first], param, attr) or _reads(body[first], param, attr):
        current = gast.Attribute(gast_name(param), attr, gast.Load())
        value = gast.Call(gast_name(copy_in), [current], []) if in_place else current
        start = [at(gast.Assign([gast_name(local, gast.Store)], value, None), body[first])]
    for node in nodes:  # `self.h` is the variable now: read, assigned or updated
        ctx = node.ctx
        node.__class__ = gast.Name
        del node.value, node.attr
        node.id, node.ctx, node.annotation, node.type_comment = local, ctx, None, None
    args = [gast_name(param), gast.Constant(attr, None), gast_name(local), gast.Constant(in_place, None)]

    def given_back() -> gast.stmt:
        return at(gast.Expr(gast.Call(gast_name(give_back), list(args), [])), written)

    rest = _returning(body[first:], given_back)
    if not isinstance(rest[-1], gast.Return):
        rest.append(given_back())
    fn.body = [*body[:first], *start, *rest]


def _returning(stmts: list[gast.stmt], given_back) -> list[gast.stmt]:
    """The statements, each `return` among them (not a nested function's) giving the variable back first (the
    value it returns reads no attribute of the object: nothing else of it is read but its fields)."""
    out: list[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            out.append(given_back())
        elif not isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner:
                    setattr(stmt, field, _returning(inner, given_back))
            for handler in getattr(stmt, "handlers", ()):
                handler.body = _returning(handler.body, given_back)
        out.append(stmt)
    return out


def _is_attr(node: gast.AST, param: str, attr: str) -> bool:
    return (
        isinstance(node, gast.Attribute)
        and node.attr == attr
        and isinstance(node.value, gast.Name)
        and node.value.id == param
    )


def _first_user(body: list[gast.stmt], ids: set[int]) -> int | None:
    """The position of the first top-level statement using one of the nodes (the attribute is read just before it,
    where it is not assigned first there)."""
    for k, stmt in enumerate(body):
        if any(id(n) in ids for n in scope.walk(stmt)):
            return k
    return None


def _assigned_first(stmt: gast.stmt, nodes: list[gast.Attribute]) -> bool:
    """Whether the first use of the attribute in the statement (in the order of the source) assigns it."""
    ids = {id(n) for n in nodes}
    used = [n for n in scope.walk(stmt) if id(n) in ids]  # by line; on a line, what is read comes first
    used.sort(key=lambda n: (n.lineno, isinstance(n.ctx, gast.Store), n.col_offset))
    return bool(used) and isinstance(used[0].ctx, gast.Store)


def _simple(stmt: gast.stmt) -> bool:
    return isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr))


def _assigns(stmt: gast.stmt, param: str, attr: str) -> bool:
    """`obj.a = v` (the attribute assigned anew, whatever it held)."""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and _is_attr(stmt.targets[0], param, attr)


def _reads(stmt: gast.stmt, param: str, attr: str) -> bool:
    return any(_is_attr(n, param, attr) and isinstance(n.ctx, gast.Load) for n in scope.walk(stmt))
