"""Views (`row = A[i]`, `A[:, j]`, `A.T`, `A.reshape(...)`): one array's data under two objects,
followed as NumPy shares it.

`copies.py` makes the IR's versions Python's where two names hold the same object. A view is
another object over the same data, so a write through either must reach the other's version
too. On the tree before lowering (after `copies.py`), this pass inserts, just before a name
that missed a write is read:

| code | becomes |
| --- | --- |
| `row = A[i]; row[0] = v; f(A)` | `...; row[0] = v; A.__written_back__(row, "index", i); f(A)` |
| `row = A[i]; A[i, 0] = v; f(row)` | `...; A[i, 0] = v; row.__viewed_again__(A, "index", i); f(row)` |
| `At = A.T; At[0, 1] = v; f(A)` | `...; A.__written_back__(At, "T", None); f(A)` |

Each returns its first argument (NumPy shared the write already); only its derivative is new:
that of `A[i] = row` and of `row = A[i]` (rules/sequences.py), where `row` is a view of `A` at
run time (`runtime.writes.is_view`), so an index or a reshape that made a copy stays exact too. A
write-back costs O(|view|) in the backward pass; repeated writes through one view (a fill loop
over a row) share one.

What holds at a point (`Views`): `of`, each view's base and how it was made (an index of names
and constants, `.T`, `.reshape(...)`); `dirty`, the views written since their base had them
back (a write marks the view and the views it was made from); `stale`, the views whose own
version misses a write to their base or to another view of it. A relation ends before a name
in it is assigned again (the view made current and given back first). Writes the pass does not
follow (through `np.transpose(A)`, `A[::2].T`, in a nested function) are rejected by
`ownership`, as before.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import gast

from ..read.scope import functions, local_names, outline, read, scope_walk, updated, walk
from ..read.source import ParsedFunction
from .assignments import key_expression
from .blocks import gast_name

_KEY_PARTS = (gast.Name, gast.Constant, gast.Slice, gast.Tuple, gast.BinOp, gast.UnaryOp)


@dataclass(frozen=True, eq=False)
class View:
    """A name that is a view of another's data: `base[key]`, `base.T` or `base.reshape(key)`."""

    base: str
    how: str  # "index", "T" or "reshape"
    key: gast.expr  # the index, the new shape, or None
    names: frozenset[str]  # the names the key reads


class Views:
    """The views that hold at a point, and which of them missed writes (see the module's doc)."""

    def __init__(self, local: set[str], of: dict | None = None, dirty: set | None = None, stale: set | None = None):
        self.local = local
        self.of: dict[str, View] = dict(of or {})
        self.dirty: set[str] = set(dirty or ())
        self.stale: set[str] = set(stale or ())
        self.head: Views | None = None  # what holds at the start of the innermost loop's iterations

    def copy(self) -> Views:
        out = Views(self.local, self.of, self.dirty, self.stale)
        out.head = self.head
        return out

    def bases(self, v: str) -> list[str]:
        """The views `v` is made from, nearest first (and their root, last)."""
        out = []
        while v in self.of:
            v = self.of[v].base
            out.append(v)
        return out

    def family(self, name: str) -> set[str]:
        """The views sharing the data `name` has, by relations that hold here."""
        root = ([name, *self.bases(name)])[-1]
        return {v for v in self.of if self.bases(v)[-1] == root}

    def current(self, n: str, out: list, where: gast.AST) -> None:
        """Make n's version hold every write to its data: its written views given back to it,
        and, if it missed a write elsewhere, n made again from its (current) base."""
        for c in sorted(v for v, view in self.of.items() if view.base == n and v in self.dirty):
            self.current(c, out, where)
            out.append(_written_back(n, c, self.of[c], where))
            self.dirty.discard(c)
        if n in self.stale:
            self.current(self.of[n].base, out, where)
            out.append(_viewed_again(n, self.of[n], where))
            self.stale.discard(n)

    def give_back(self, v: str, out: list, where: gast.AST) -> None:
        """v current, and its writes given to its base."""
        self.current(v, out, where)
        if v in self.dirty:
            out.append(_written_back(self.of[v].base, v, self.of[v], where))
            self.dirty.discard(v)

    def release(self, v: str, out: list, where: gast.AST) -> None:
        """End v's relation to its base (a name in it is assigned next)."""
        self.give_back(v, out, where)
        del self.of[v]

    def jump(self, out: list, where: gast.AST) -> None:
        """Before `break` or `continue`: what the loop's head expects (what is written or misses a
        write here and not there given back or made current; the body's own views released)."""
        head = self.head
        for v in self.deepest_first(self.of):
            if v not in head.of:
                self.release(v, out, where)
            elif v in self.dirty - head.dirty or v in self.stale - head.stale:
                self.give_back(v, out, where)

    def settle(self, out: list, where: gast.AST, among: set[str] | None = None) -> None:
        """Make current the views (`among` them) that missed a write where that costs no write-back
        (nothing in their family is written): at the end of a branch or an iteration, so that no
        out-of-date version is handed on to the join (where `ownership` would count it as read)."""
        for v in sorted(self.stale, key=lambda v: (len(self.bases(v)), v)):
            if v in self.stale and (among is None or v in among) and not self.family(v) & self.dirty:
                self.current(v, out, where)

    def written(self, n: str) -> None:
        """After a write through n: n and the views it is made from miss it in their bases, the
        other views of the data in their own versions."""
        chain = {n, *self.bases(n)}
        self.dirty |= chain & set(self.of)
        self.stale |= self.family(n) - chain

    def deepest_first(self, views: object) -> list[str]:
        return sorted(views, key=lambda v: (-len(self.bases(v)), v))


def follow_views(parsed: ParsedFunction) -> None:
    """Insert the write-backs and re-derivations views need, in every function of the tree, in place."""
    for node in functions(parsed.tree):
        if any(_view_of(s) is not None for s in outline(node)):  # no view made: nothing to insert
            node.body = _block(node.body, Views(local_names(node)))


def _block(stmts: list[gast.stmt], views: Views) -> list[gast.stmt]:
    """The statements with what views need inserted; `views` is updated to what holds after them."""
    out: list[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            # what either branch reads is made current before it (on one path only, the join would hand on the
            # version that missed the write on the other, which `ownership` counts as a read of it)
            _current(views, read([stmt]), out, stmt)
            branches = []
            for body in (stmt.body, stmt.orelse):
                state = views.copy()
                branches.append((_block(body, state), state))
            _join(views, branches, stmt)
            stmt.body, stmt.orelse = branches[0][0], branches[1][0]
            out.append(stmt)
        elif isinstance(stmt, (gast.For, gast.While)):
            out += _loop(stmt, views)
        elif isinstance(stmt, (gast.Break, gast.Continue)):
            views.jump(out, stmt)
            out.append(stmt)
        else:
            out += _simple(stmt, views)
    return out


def _simple(stmt: gast.stmt, views: Views) -> list[gast.stmt]:
    out: list[gast.stmt] = []
    if views.of:  # (with no views here, nothing is given back, made current or written: a fast path)
        rebound, written = _effects([stmt])
        for v in _ending(views, rebound, written):
            views.release(v, out, stmt)
        _current(views, read([stmt]), out, stmt)
        out.append(stmt)
        for n in sorted(written):
            views.written(n)
    else:
        out.append(stmt)
    made = _view_made(stmt, views.local)
    if made is not None:
        views.of[stmt.targets[0].id] = made
    return out


def _loop(stmt: gast.For | gast.While, views: Views) -> list[gast.stmt]:
    """Before the loop and at the end of its body, the same views are made current (`edges`), so
    that every iteration starts from one state: found by running the body on copies until the
    state at its end adds nothing to the one at its start."""
    out: list[gast.stmt] = []
    tested = read([stmt.test]) if isinstance(stmt, gast.While) else set()
    if isinstance(stmt, gast.For):
        _current(views, read([stmt.iter]), out, stmt)
    # what the loop reads is made current once before it (not in every iteration, where the old version
    # would be read by the loop's entry after the write it missed: `ownership` refuses that write)
    _current(views, read(stmt.body) | tested, out, stmt)
    rebound, written = _effects([stmt.target, *stmt.body] if isinstance(stmt, gast.For) else stmt.body)
    for v in _ending(views, rebound, written):
        views.release(v, out, stmt)
    outer = set(views.of)
    edges: set[str] = set()
    missed: tuple[set[str], set[str]] = (set(), set())

    def edge(state: Views, into: list) -> None:
        for v in state.deepest_first(edges & set(state.of)):
            state.give_back(v, into, stmt)
        state.settle(into, stmt)
        _current(state, tested, into, stmt)

    def head(state: Views, into: list) -> Views:
        """The state at the start of every iteration: the one before the loop past its edge, plus what
        an iteration may leave (a view both written and missing a write becomes an edge)."""
        while True:
            start = state.copy()
            edge(start, into[:])
            start.dirty |= missed[0] - edges
            start.stale |= missed[1] - edges
            if not start.dirty & start.stale:
                edge(state, into)
                state.dirty, state.stale = start.dirty, start.stale
                return state
            edges.update(start.dirty & start.stale)

    def iteration(state: Views, body: list[gast.stmt]) -> list[gast.stmt]:
        state.head = state.copy()
        body = _block(body, state)
        if not _exits(body):
            for v in state.deepest_first(set(state.of) - outer):
                state.release(v, body, _end(body, stmt))
            edge(state, body)
        return body

    while outer:
        start = head(views.copy(), [])
        end = start.copy()
        iteration(end, copy.deepcopy(stmt.body))
        clash = (start.dirty | end.dirty) & (start.stale | end.stale)
        if clash - edges:
            edges |= clash
        elif end.dirty <= start.dirty and end.stale <= start.stale:
            break
        else:
            missed[0].update(end.dirty)
            missed[1].update(end.stale)
    head(views, out)
    stmt.body = iteration(views.copy(), stmt.body)
    out.append(stmt)
    return out


def _join(views: Views, branches: list[tuple[list[gast.stmt], Views]], where: gast.If) -> None:
    """After an `if`: the relations both paths keep; a view one path leaves written and another
    leaves missing a write is given back at the end of the first (so it is only the latter)."""
    live = [(body, state) for body, state in branches if not _exits(body)]
    if not live:
        return
    kept = {v: view for v, view in live[0][1].of.items() if all(s.of.get(v) is view for _, s in live)}
    for body, state in live:
        for v in state.deepest_first(set(state.of) - set(kept)):
            state.release(v, body, _end(body, where))
    while True:
        stale = set().union(*(s.stale for _, s in live))
        clashes = [(body, state, v) for body, state in live for v in state.dirty & stale]
        if not clashes:
            break
        for body, state, v in clashes:
            if v in state.dirty:
                state.give_back(v, body, _end(body, where))
    assigned = set().union(*(set().union(*_effects(body)) for body, _ in live))  # joined: a new version
    for body, state in live:
        state.settle(body, _end(body, where), assigned)
    views.of = kept
    views.dirty = set().union(*(s.dirty for _, s in live))
    views.stale = set().union(*(s.stale for _, s in live))


def _current(views: Views, names: set[str], out: list, where: gast.AST) -> None:
    for n in sorted(names):
        views.current(n, out, where)


def _ending(views: Views, rebound: set[str], written: set[str]) -> list[str]:
    """The relations that statements assigning `rebound` and writing into `written` end, deepest first."""
    ending = [
        v for v, view in views.of.items() if v in rebound or view.base in rebound or view.names & (rebound | written)
    ]
    return views.deepest_first(ending)


def _effects(nodes: list[gast.AST]) -> tuple[set[str], set[str]]:
    """The names these statements assign, and those they write into (`x[k] = v`, `x += v`: in place
    on an array, so a view made from x still is one)."""
    walked = list(scope_walk(nodes, comprehensions=False))
    augmented = {id(n.target) for n in walked if isinstance(n, gast.AugAssign)}
    rebound, written = set(), set()
    for node in walked:
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            (written if id(node) in augmented else rebound).add(node.id)
        elif isinstance(node, gast.FunctionDef):
            rebound.add(node.name)
        elif name := updated(node):
            written.add(name)
    return rebound, written


def _view_made(stmt: gast.stmt, local: set[str]) -> View | None:
    """The view `v = b[key]`, `v = b.T` or `v = b.reshape(...)` makes of a local name b, if any."""
    view = _view_of(stmt)
    return view if view is not None and view.base in local else None


def _view_of(stmt: gast.AST) -> View | None:
    """The view `v = b[key]`, `v = b.T` or `v = b.reshape(...)` makes of a name b, if any."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    e = stmt.value
    if isinstance(e, gast.Subscript) and _is_key(e.slice):
        base, how, key = e.value, "index", key_expression(e.slice)
    elif isinstance(e, gast.Attribute) and e.attr == "T":
        base, how, key = e.value, "T", gast.Constant(None, None)
    elif isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and e.func.attr == "reshape":
        if not e.args or e.keywords or not all(map(_is_key, e.args)):
            return None
        base, how = e.func.value, "reshape"
        key = e.args[0] if len(e.args) == 1 else gast.Tuple(list(e.args), gast.Load())
    else:
        return None
    names = frozenset(read([key]))
    v = stmt.targets[0].id
    if not isinstance(base, gast.Name) or base.id == v or v in names:
        return None
    return View(base.id, how, key, names)


def _is_key(node: gast.expr) -> bool:
    """An index made of names and constants: evaluated again later, while none of its names is
    assigned, it is the same."""
    return all(isinstance(n, (*_KEY_PARTS, gast.operator, gast.unaryop, gast.expr_context)) for n in walk(node))


def _end(body: list[gast.stmt], where: gast.AST) -> gast.AST:
    """Where statements added at the end of a block are located: its last statement, else `where`."""
    return body[-1] if body else where


def _exits(body: list[gast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (gast.Return, gast.Break, gast.Continue, gast.Raise))


def _written_back(base: str, v: str, view: View, where: gast.AST) -> gast.stmt:
    return _method(base, "__written_back__", [gast_name(v), gast.Constant(view.how, None), view.key], where)


def _viewed_again(v: str, view: View, where: gast.AST) -> gast.stmt:
    return _method(v, "__viewed_again__", [gast_name(view.base), gast.Constant(view.how, None), view.key], where)


def _method(receiver: str, method: str, args: list[gast.expr], where: gast.AST) -> gast.stmt:
    call = gast.Call(gast.Attribute(gast_name(receiver), method, gast.Load()), copy.deepcopy(args), [])
    stmt = gast.Expr(call)
    for n in walk(stmt):
        if isinstance(n, (gast.expr, gast.stmt)):
            gast.copy_location(n, where)
    return stmt
