"""In-place updates of a container the function owns, lowered as functional updates.

`xs.append(v)`, `xs.extend(ys)`, `xs.insert(i, v)`, `xs.pop(i)`, `d.pop(k)` and `d.setdefault(k, v)`
change the object `xs` names. In the core IR each binds `xs` to a new SSA name for the changed object
(`let xs_1 = append(xs, v)`, marked `inplace`), and `ownership` checks that nobody else can see the
object, so that treating the update as a new value is exact (and that no derivative rule still reads
the list's old layout, for `pop` and `insert`, which move elements). What a method returns is read
with the ordinary rules: `v = xs.pop(i)` is `v = xs[i]` before the update, `d.setdefault(k, v)` is
`d[k]` after it.
"""

from __future__ import annotations

from collections.abc import Callable

import gast

from ..errors import UnsupportedSyntax
from ..ir import nodes as ir
from ..rules.registry import OPERATORS
from ..rules.sequences import (
    AFTER_UPDATE,
    APPEND,
    DICT_GET,
    DICT_SETDEFAULT,
    DICT_STORE,
    EXTEND,
    LIST_APPEND,
    LIST_COPY,
    LIST_INSERT,
    POP,
    STORE,
    STORE_IN,
    VIEWED_AGAIN,
    WRITTEN_BACK,
)
from .context import Lowering

NONE = ir.Const(None)
LAST = ir.Const(-1)


def update(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Atom:
    """Lower `xs.method(...)` for one of the methods below; return what the method returns."""
    name, method = node.func.value.id, node.func.attr
    if name not in env:
        raise lw.error(
            UnsupportedSyntax,
            f"`{name}.{method}(...)` changes a list or dict this function did not make (data from outside it, "
            "or one assigned only on some paths): chadpy updates in place only the lists and dicts a function "
            "makes",
            node,
        )
    if node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
        raise lw.error(UnsupportedSyntax, f"`.{method}()` takes its arguments by position here", node)
    least, most, lower = _METHODS[method]
    if not least <= len(node.args) <= most:
        raise lw.error(UnsupportedSyntax, f"`.{method}()` with {len(node.args)} arguments is not supported", node)
    args = [lw.atom(a, env, lets) for a in node.args]
    xs = lw.read(name, env, node.func.value, lets)  # after the arguments: `ys.insert(0, ys.pop())` updates it first
    return lower(_Update(lw, name, xs, env, lets), *args)


class _Update:
    """The container being updated, and how to bind its new SSA name."""

    def __init__(self, lw: Lowering, name: str, xs: ir.Atom, env: dict, lets: list):
        self.lw, self.name, self.xs, self.env, self.lets = lw, name, xs, env, lets

    def let(self, e: ir.Expr, hint: str) -> ir.Var:
        return self.lw.let(e, self.lets, hint)

    def rebind(self, op: object, *args: ir.Atom, inplace: bool = True) -> ir.Var:
        """The container's new name: `let xs_1 = op(xs, *args)`."""
        target = self.lw.bind(self.name, self.env)
        self.lets.append(ir.Let(target, ir.Prim(op, [self.xs, *args], inplace=inplace), self.lw.loc))
        return ir.Var(target)


def _append(u: _Update, v: ir.Atom) -> ir.Atom:
    u.rebind(APPEND, v)
    return NONE


def _comprehension_append(u: _Update, v: ir.Atom) -> ir.Atom:
    """A list comprehension's step (its list is never read before it is made)."""
    u.rebind(LIST_APPEND, v)
    return NONE


def _extend(u: _Update, ys: ir.Atom) -> ir.Atom:
    if ys == u.xs:  # `xs.extend(xs)`: the elements as they were (the rule reads len(ys) after the update)
        ys = u.let(ir.Prim(LIST_COPY, [ys]), "copy")
    u.rebind(EXTEND, ys)
    return NONE


def _insert(u: _Update, i: ir.Atom, v: ir.Atom) -> ir.Atom:
    u.rebind(LIST_INSERT, i, v)
    return NONE


def _pop(u: _Update, i: ir.Atom = LAST, default: ir.Atom | None = None) -> ir.Atom:
    """`xs.pop(i)` (a list; `i` -1 by default) or `d.pop(k[, default])` (a dict): the element, then the update."""
    if default is None:
        element = u.let(ir.Index(u.xs, i), "popped")
    else:
        element = u.let(ir.Prim(DICT_GET, [u.xs, i, default]), "popped")
    u.rebind(POP, i)
    return element


def _setdefault(u: _Update, k: ir.Atom, v: ir.Atom = NONE) -> ir.Atom:
    absent = u.let(ir.Prim(OPERATORS["not in"], [k, u.xs]), "absent")
    d = u.rebind(DICT_SETDEFAULT, k, v, absent)
    return u.let(ir.Index(d, k), "value")


def _comprehension_item(u: _Update, k: ir.Atom, v: ir.Atom) -> ir.Atom:
    """`d[k] = v` as a dict comprehension's step (its dict is never read before it is made)."""
    u.rebind(DICT_STORE, k, v)
    return NONE


def _setitem(u: _Update, k: ir.Atom, v: ir.Atom) -> ir.Atom:
    """`x[k] = v` (`assignments.py`): an array's, list's or dict's element, written in place."""
    u.rebind(STORE, k, v)
    return NONE


def _setitem_in(u: _Update, t: ir.Atom, k: ir.Atom, v: ir.Atom) -> ir.Atom:
    """`x[t][k] = v` (`assignments.py`): the element at t updated in place (`ownership` checks nobody else holds it)."""
    u.rebind(STORE_IN, t, k, v)
    return NONE


def _updated_by(u: _Update, t: ir.Atom) -> ir.Atom:
    """`x.__updated_by__(t)` (`copies.py`): after `t += c` on x's object, x is t if that was in place."""
    u.rebind(AFTER_UPDATE, t, inplace=False)
    return NONE


def _written_back(u: _Update, view: ir.Atom, how: ir.Atom, key: ir.Atom) -> ir.Atom:
    """`base.__written_back__(view, how, key)` (`views.py`): base after writes through its view."""
    u.rebind(WRITTEN_BACK, view, how, key, inplace=False)
    return NONE


def _viewed_again(u: _Update, base: ir.Atom, how: ir.Atom, key: ir.Atom) -> ir.Atom:
    """`view.__viewed_again__(base, how, key)` (`views.py`): a view after writes to its base."""
    u.rebind(VIEWED_AGAIN, base, how, key, inplace=False)
    return NONE


# method -> (least and most arguments, its lowering); `scope.UPDATING` names the same methods
_METHODS: dict[str, tuple[int, int, Callable[..., ir.Atom]]] = {
    "append": (1, 1, _append),
    "extend": (1, 1, _extend),
    "insert": (2, 2, _insert),
    "pop": (0, 2, _pop),
    "setdefault": (1, 2, _setdefault),
    "__setitem__": (2, 2, _setitem),
    "__setitem_in__": (3, 3, _setitem_in),
    "__comprehension_item__": (2, 2, _comprehension_item),
    "__comprehension_append__": (1, 1, _comprehension_append),
    "__updated_by__": (1, 1, _updated_by),
    "__written_back__": (3, 3, _written_back),
    "__viewed_again__": (3, 3, _viewed_again),
}
