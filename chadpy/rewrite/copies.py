"""Copies of a name (`b = a`), followed as Python does: both names are then one object, so a
write through either is seen through the other.

The core IR is functional: `b[0] = v` binds a new version of `b`, while `a` would still name
the old one. So, on the tree before lowering, every later read of `b` becomes a read of `a`
for as long as neither name is assigned again (copy propagation): all reads and writes of the
object then go through one name, and the IR's versions are Python's.

| code | becomes |
| --- | --- |
| `b = a; b[0] = v; f(a, b)` | `b = a; a[0] = v; f(a, a)` (`b = a` is left dead) |
| `b = a; a[0] = v; a = e` | `b = a; a[0] = v; b = a; a = e` (`b` takes the object as it is then) |
| `b = a; b += c` | `b = a; b += c; a.__updated_by__(b)` (`a` is `b` if the update was in place) |

Reads left alone keep `b`'s own, older version; that is never silently wrong, because
`ownership` rejects a write that such a read would miss. They are: reads inside a nested
function (its own scope, called later), reads in a loop that assigns `a` or `b`, and reads
after a branch that made `b` a copy of `a` on one path only.
"""

from __future__ import annotations

from collections.abc import Iterator

import gast

from ..read.scope import (
    COMPREHENSIONS,
    assigned,
    attribute_stored,
    functions,
    local_names,
    outline,
    scope_walk,
    updated,
    walk,
)
from ..read.source import ParsedFunction
from .blocks import gast_name


class Copies:
    """The copies that hold at a point: a name -> the name whose object it is (no name is both), and
    the copies whose own version is out of date (the object was written through the original since)."""

    def __init__(self, local: set[str], of: dict[str, str] | None = None, stale: set[str] | None = None):
        self.local = local  # the function's own names (an outside one is never updated here)
        self.of = dict(of or {})
        self.stale = set(stale or ())

    def branch(self) -> Copies:
        return Copies(self.local, self.of, self.stale)

    def forget(self, b: str) -> None:
        del self.of[b]
        self.stale.discard(b)

    def written(self, nodes: list[gast.AST]) -> None:
        """The objects these statements write through their originals' names are out of date in their copies."""
        walked = scope_walk(nodes, comprehensions=False)
        names = {n for node in walked if (n := updated(node) or attribute_stored(node))}
        objects = {self.of.get(n, n) for n in names}
        self.stale |= {b for b, a in self.of.items() if a in objects}


def follow_copies(parsed: ParsedFunction) -> None:
    """Make reads of copies reads of the original, in every function of the tree, in place."""
    for node in functions(parsed.tree):
        if any(map(_is_copy, outline(node))):  # without a `b = a`, no name has copies: nothing changes
            node.body = _block(node.body, Copies(local_names(node)))


def _block(stmts: list[gast.stmt], copies: Copies) -> list[gast.stmt]:
    """The statements with copies followed; `copies` is updated to what holds after them."""
    out: list[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            _substitute(stmt.test, copies)
            then, orelse = copies.branch(), copies.branch()
            stmt.body, stmt.orelse = _block(stmt.body, then), _block(stmt.orelse, orelse)
            copies.of = {b: a for b, a in then.of.items() if orelse.of.get(b) == a}  # those both paths keep
            copies.stale = (then.stale | orelse.stale) & set(copies.of)
            out.append(stmt)
        elif isinstance(stmt, (gast.For, gast.While)):
            if isinstance(stmt, gast.For):  # its iterable is read once, before the loop
                _substitute(stmt.iter, copies)
            out += _part(stmt, _bound([stmt.target, *stmt.body] if isinstance(stmt, gast.For) else stmt.body), copies)
            if isinstance(stmt, gast.While):  # its test, before every iteration
                _substitute(stmt.test, copies)
            copies.written(stmt.body)  # from the second iteration on
            stmt.body = _block(stmt.body, copies.branch())  # what the body copies holds only inside it
            out.append(stmt)
        elif _augments_a_copy(stmt, copies):
            out += _augmented(stmt, copies)
        else:
            if copies.of:  # (with no copies here, nothing is substituted, forgotten or written: a fast path)
                out += _part(stmt, _bound([stmt]), copies)
                _substitute(stmt, copies)
                copies.written([stmt])
            out.append(stmt)
            if _is_copy(stmt):
                copies.of[stmt.targets[0].id] = stmt.value.id
    return out


def _augments_a_copy(stmt: gast.stmt, copies: Copies) -> bool:
    """`t += c` where another name holds t's object."""
    return (
        isinstance(stmt, gast.AugAssign)
        and isinstance(stmt.target, gast.Name)
        and bool(_others(stmt.target.id, copies))
    )


def _others(t: str, copies: Copies) -> list[str]:
    """The other names of t's object."""
    a = copies.of.get(t, t)
    return [n for n in [a, *(b for b, o in copies.of.items() if o == a)] if n != t]


def _augmented(stmt: gast.AugAssign, copies: Copies) -> list[gast.stmt]:
    """`t += c` where other names hold t's object: Python updates a list, dict or array in place, so
    they see the change, and makes a new number or tuple, so they do not; which one is known only
    from the types: each other name n becomes `n.__updated_by__(t)` (`updates.py`)."""
    t = stmt.target.id
    others = _others(t, copies)
    out = [_copy(t, copies.of[t], stmt)] if t in copies.stale else []  # t is current before its update
    for b in [t, *others]:
        if b in copies.of:
            copies.forget(b)
    _substitute(stmt.value, copies)
    out.append(stmt)
    for n in [n for n in others if n in copies.local]:
        call = gast.Call(gast.Attribute(gast_name(n), "__updated_by__", gast.Load()), [gast_name(t)], [])
        out.append(gast.copy_location(gast.Expr(call), stmt))
    return out


def _part(stmt: gast.stmt, bound: set[str], copies: Copies) -> list[gast.stmt]:
    """Before `stmt` assigns the names `bound`: forget the copies involving them, and give each copy
    whose original is assigned, if the object was written since, its object as it is now (`b = a`)."""
    out = []
    for b, a in list(copies.of.items()):
        if a in bound or b in bound:
            if a in bound and b not in bound and b in copies.stale:
                out.append(_copy(b, a, stmt))
            copies.forget(b)
    return out


def _is_copy(stmt: gast.stmt) -> bool:
    """`b = a` of two names."""
    if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1:
        return False
    target, value = stmt.targets[0], stmt.value
    return isinstance(target, gast.Name) and isinstance(value, gast.Name) and target.id != value.id


def _copy(b: str, a: str, where: gast.stmt) -> gast.Assign:
    return gast.copy_location(gast.Assign([gast_name(b, gast.Store)], gast_name(a), None), where)


def _bound(stmts: list[gast.AST]) -> set[str]:
    """The names these statements (and the blocks nested in them) assign in this scope: a write into an
    object (`xs.append(v)`, `obj.x = v`) is not an assignment of its name in Python."""
    return assigned(stmts, attributes=False, updates=False)


def _substitute(node: gast.AST, copies: Copies) -> None:
    for name, shadowed in _reads(node, frozenset()):
        original = copies.of.get(name.id, name.id)
        if original not in shadowed:  # `(b for a in xs)`: this `a` is the comprehension's own
            name.id = original


def _reads(node: gast.AST, shadowed: frozenset[str]) -> Iterator[tuple[gast.Name, frozenset[str]]]:
    """The names `node` reads in this scope (not in a nested function's body, nor a comprehension's
    own variables), each with the comprehension variables that shadow the function's names there."""
    for n in scope_walk([node], comprehensions=False):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in shadowed:
            yield n, shadowed
        elif isinstance(n, COMPREHENSIONS):
            own = shadowed | {t.id for g in n.generators for t in walk(g.target) if isinstance(t, gast.Name)}
            parts = [g.iter for g in n.generators[1:]] + [c for g in n.generators for c in g.ifs]
            parts += [n.key, n.value] if isinstance(n, gast.DictComp) else [n.elt]
            for part in parts:
                yield from _reads(part, own)
