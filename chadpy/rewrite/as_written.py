"""Statements that run as Python runs them: what chadpy does not differentiate, where no derivative flows.

`raise`, `global` and `nonlocal` state, `del`, a `class` statement, an `import` chadpy cannot
do ahead, and writes into objects the function was given (`self.calls += 1`, `a.b.c = v`,
`self.cache[k] = v`) are not part of the differentiated language. They are not rejected for their
syntax: each is compiled, as written, into a Python function of the variables it reads (`AsWritten`),
and the statement becomes a call of it in the tree, `(y,) = set_at_line_12(x, y)`; a `raise` is
`return raise_at_line_5(x)` (the call never returns, so the rest of its block is not on its path).

Whether a derivative flows there is decided later, by the types (`lower/as_written.py`): a statement
that reads no differentiated value, or reads one but assigns no variable and stores into no object,
runs in the forward pass exactly as in the plain call, side effects included, in the same order; one
through which a derivative would have to flow is a `ChadError` naming the line and the variable.

`import m` (or `from m import f`) is done now, when the function is read, and binds `m` for the
function like a module-level import (chadpy then reads `m.sin` as it reads any module's function).
"""

from __future__ import annotations

import ast
import importlib
import types
from dataclasses import dataclass, field

import gast

from ..errors import UnsupportedSyntax
from ..names import NameSupply
from ..read import scope
from ..read.source import ParsedFunction, Watch, same_data
from ..runtime import records
from .blocks import at, gast_name

# Statements that run as written wherever they are: the name their call takes, what they are.
_KINDS = {
    gast.Raise: ("raise", "`raise` statement"),
    gast.Delete: ("del", "`del` statement"),
    gast.ClassDef: ("class", "`class` statement"),
    gast.Import: ("import", "`import` statement"),
    gast.ImportFrom: ("import", "`import` statement"),
}
_STORE = ("store", "write into an object the function did not make")
_DECLARED = ("set", "assignment of a `global` or `nonlocal` variable")


class Unbound:
    """The value of a variable not yet assigned where a statement runs as written (the statement
    deletes its parameter again, so reading it fails as in Python)."""

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = Unbound()


@dataclass(eq=False)
class AsWritten:
    """A statement compiled as written: `fn(*inputs)` runs it and returns the values of `outputs`
    after it (a tuple), or the value read (`reads`: a `global` variable read in an expression)."""

    name: str  # the call's name in the tree, `set_at_line_12`
    what: str  # what the statement is, for messages: "`del` statement"
    fn: types.FunctionType
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    shown: dict[str, str] = field(default_factory=dict)  # an input hoisted from the statement: its source
    raises: bool = False  # a `raise`: the call never returns
    stores: bool = False  # it writes into an object: a derivative going in could come back as data
    reads: bool = False  # an expression: the call's value is the variable's
    read_back: bool = True  # what it stores may be read again in this call (by the function or a callee)
    root: str | None = None  # the variable whose object it stores into (`self`, `LOG`), if one

    def __repr__(self) -> str:
        return self.name


@dataclass
class _Scope:
    """One function of the tree as the pass sees it: its own names and those it declares."""

    node: gast.FunctionDef | gast.Lambda
    enclosing: frozenset[str]  # the locals of the functions around it in the tree
    declared: set[str] = field(default_factory=set)  # its `global` and `nonlocal` names
    introduced: set[str] = field(default_factory=set)  # variables this pass adds to it (a class's name too)
    stored_attributes: set[str] = field(default_factory=set)  # attribute names it writes into objects it was given
    shown: dict[str, str] = field(default_factory=dict)  # a value hoisted before a store: its source, for messages
    read_back: dict[int, bool] = field(default_factory=dict)  # id(a store) -> whether what it stores is read again
    given_back: set[str] = field(default_factory=set)  # the names `runtime.records.put_back` has here
    own: frozenset[str] = field(init=False)  # its parameters and the names it assigns, read once
    reassigned: frozenset[str] = field(init=False)  # the names it assigns (parameters among them are its own)
    nodes: list[gast.AST] = field(init=False)  # its scope's nodes, as the pass found them (one walk for all)

    def __post_init__(self) -> None:
        self.nodes = list(scope.scope_walk(scope.function_body(self.node), comprehensions=False))
        # a name it only updates (`LOG.append(v)`) is not its own
        self.own = frozenset(scope.assigned_among(self.nodes, attributes=False, updates=False)) | set(
            scope.parameters(self.node)
        )
        self.reassigned = frozenset(scope.assigned_among(self.nodes, attributes=False))

    @property
    def local(self) -> set[str]:
        return (self.own | self.enclosing | self.introduced) - self.declared


def as_written(parsed: ParsedFunction) -> None:
    """Replace each statement chadpy runs as written by the call of its compiled function, in place."""
    names = NameSupply(scope.all_names(parsed.tree))
    _function(parsed, _Scope(parsed.tree, frozenset()), names)


def _function(parsed: ParsedFunction, s: _Scope, names: NameSupply) -> None:
    body = scope.function_body(s.node)
    for node in s.nodes:
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            s.declared.update(node.names)
    for node in s.nodes:
        if isinstance(node, gast.Nonlocal) and set(node.names) & s.enclosing:
            raise UnsupportedSyntax(
                "`nonlocal` of a variable of the function being differentiated is not supported: return the new "
                "value instead",
                parsed.loc(node),
            )
    s.stored_attributes = {
        t.attr for n in s.nodes if _store_kind(n, s) is _STORE for t in _targets(n) if isinstance(t, gast.Attribute)
    }
    s.given_back = {name for name, value in parsed.outside.items() if value is records.put_back}
    stores = [
        (n, place)
        for n in s.nodes
        if isinstance(n, gast.stmt)
        and (_store_kind(n, s) is _STORE or s.declared and _declared_kind(n, s))
        and (place := _place(n)) is not None
    ]
    context = list(scope.in_context(body)) if stores else []  # as the user wrote it (before reads become calls)
    s.read_back = {
        id(n): _read_back(n, place, s, context, _holders(parsed, place[0], s, context)) for n, place in stores
    }
    if isinstance(s.node, gast.FunctionDef):
        s.node.body = _statements(parsed, s.node.body, s, names) or [gast.copy_location(gast.Pass(), s.node)]


def _statements(parsed: ParsedFunction, stmts: list[gast.stmt], s: _Scope, names: NameSupply) -> list[gast.stmt]:
    out: list[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, (gast.Global, gast.Nonlocal)):
            continue  # declared for the statements that use the names, below
        if isinstance(stmt, (gast.Import, gast.ImportFrom)) and _import_now(parsed, stmt, s):
            continue
        if isinstance(stmt, gast.Delete) and all(_popped(t, s) for t in stmt.targets):
            out += [_as_pop(t, stmt) for t in stmt.targets]  # an update chadpy follows (its writes are logged)
            continue
        kind = _KINDS.get(type(stmt)) or _store_kind(stmt, s) or (_declared_kind(stmt, s) if s.declared else None)
        if kind is _STORE and isinstance(stmt, (gast.Assign, gast.AnnAssign)):
            # the value is the function's own code; only the store runs as written
            stmt.value = _hoisted(parsed, stmt.value, stmt, s, names, out)
        elif kind is _STORE and isinstance(stmt, gast.Expr):  # `LOG.append(v)`: v is the function's own code
            call = stmt.value
            call.args = [_hoisted(parsed, a, stmt, s, names, out) for a in call.args]
            for k in call.keywords:
                k.value = _hoisted(parsed, k.value, stmt, s, names, out)
        if kind is not None:
            out.append(_call_statement(parsed, stmt, kind, s, names))
            continue
        if isinstance(stmt, gast.FunctionDef):  # its own scope
            _function(parsed, _Scope(stmt, frozenset(s.local)), names)
            out.append(stmt)
            continue
        for handler in getattr(stmt, "handlers", ()):
            _name_reraised(handler, s, names)
        for holder in (stmt, *getattr(stmt, "handlers", ())):  # a `try`'s handlers hold statements too
            for part in ("body", "orelse", "finalbody"):
                inner = getattr(holder, part, None)
                if isinstance(inner, list) and inner:
                    new = _statements(parsed, inner, s, names) or [gast.copy_location(gast.Pass(), stmt)]
                    setattr(holder, part, new)
        if s.declared or s.stored_attributes:
            _read_as_written(parsed, stmt, s, names)
        out.append(stmt)
    return out


def _popped(target: gast.expr, s: _Scope) -> bool:
    """`del x[k]` of the function's own list or dict x (k not a slice): `x.pop(k)`."""
    return (
        isinstance(target, gast.Subscript)
        and isinstance(target.value, gast.Name)
        and target.value.id in s.local
        and not isinstance(target.slice, gast.Slice)
    )


def _as_pop(target: gast.Subscript, stmt: gast.stmt) -> gast.stmt:
    pop = gast.Attribute(gast_name(target.value.id), "pop", gast.Load())
    return at(gast.Expr(gast.Call(pop, [target.slice], [])), stmt)


def _hoisted(
    parsed: ParsedFunction, value: gast.expr, stmt: gast.stmt, s: _Scope, names: NameSupply, out: list[gast.stmt]
) -> gast.expr:
    """`stored = value` before the statement (ordinary code), and the name in its place; a constant stays."""
    if isinstance(value, gast.Constant):
        return value
    name = names.fresh("stored")
    s.introduced.add(name)
    s.shown[name] = gast.unparse(value).strip()
    hoisted = gast.copy_location(gast.Assign([gast_name(name, gast.Store)], value, None), stmt)
    if s.declared or s.stored_attributes:
        _read_as_written(parsed, hoisted, s, names)
    out.append(hoisted)
    return gast.copy_location(gast_name(name), value)


def _name_reraised(handler: gast.ExceptHandler, s: _Scope, names: NameSupply) -> None:
    """A bare `raise` in a handler raises the exception it handles: `raise e` (the handler runs outside
    Python's `except` once `tries` has rewritten the statement)."""
    bare = [n for n in scope.scope_walk(handler.body) if isinstance(n, gast.Raise) and n.exc is None]
    if not bare:
        return
    if handler.name is None:
        handler.name = gast_name(names.fresh("handled"), gast.Store)
        s.introduced.add(handler.name.id)
    for n in bare:
        n.exc = gast.copy_location(gast_name(handler.name.id), n)


def _store_kind(stmt: gast.stmt, s: _Scope) -> tuple[str, str] | None:
    """A write into an object the function was given or reads from outside: `self.n = v` on a
    parameter never assigned, `a.b.c = v`, `self.cache[k] = v`, `obj.xs[i] = v`, `STATS[k] += 1`,
    `LOG.append(v)`, `self.history.append(v)`."""
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        method = stmt.value.func
        if isinstance(method, gast.Attribute) and method.attr in scope.MUTATING and not _owned(method.value, s):
            return _STORE
    if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        return None
    for t in _targets(stmt):
        if isinstance(t, gast.Attribute) and not _owned(t.value, s):
            return _STORE
        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Attribute) and not _owned(t.value.value, s):
            return _STORE
        written = scope.element_path(t)[0].value if isinstance(t, gast.Subscript) else None
        if isinstance(written, gast.Name) and written.id not in s.local:
            return _STORE  # an element of outside data: `STATS["calls"] += 1`, `CACHE[k][i] = v`
    return None


def _targets(stmt: gast.AST) -> list[gast.expr]:
    """An assignment's targets, a tuple's items one by one (none for any other statement)."""
    if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        return []
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
    return [t for target in targets for t in (target.elts if isinstance(target, gast.Tuple) else [target])]


def _owned(node: gast.expr, s: _Scope) -> bool:
    """Whether `node` is an object the function itself makes (not an argument, an attribute, outside data):
    a local variable that is not a parameter, or `self` in `__init__`, or a parameter it assigns again."""
    if not isinstance(node, gast.Name) or node.id not in s.local:
        return False
    params = scope.parameters(s.node)
    if node.id not in params:
        return True
    constructor = isinstance(s.node, gast.FunctionDef) and s.node.name == "__init__" and node.id == params[0]
    return constructor or node.id in s.reassigned


def _declared_kind(stmt: gast.stmt, s: _Scope) -> tuple[str, str] | None:
    """A simple statement that assigns a `global` or `nonlocal` variable (reading one in an expression is
    `_read_as_written`'s)."""
    if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Assert, gast.Delete)):
        if scope.assigned([stmt], attributes=False) & s.declared:
            return _DECLARED
    return None


def _read_as_written(parsed: ParsedFunction, stmt: gast.stmt, s: _Scope, names: NameSupply) -> None:
    """Each read of a `global` or `nonlocal` variable, or of an attribute the function writes as written
    (`self.W` after `self.W = ...` on an object it was given), in the statement's own expressions is a
    call that reads it when the statement runs (its value at that moment, as Python reads it)."""
    parents = [stmt, *(n for part in scope.own_parts(stmt) for n in scope.walk(part))]
    for node in parents:
        for field_name, child in gast.iter_fields(node):
            if field_name in ("body", "orelse") and isinstance(node, gast.stmt):
                continue
            values = child if isinstance(child, list) else [child]
            for k, value in enumerate(values):
                if not isinstance(getattr(value, "ctx", None), gast.Load):
                    continue
                if isinstance(value, gast.Name) and value.id in s.declared:
                    kind = ("read_" + value.id, f"read of the variable `{value.id}`")
                elif isinstance(value, gast.Attribute) and value.attr in s.stored_attributes:
                    kind = ("read_" + value.attr, f"read of the attribute `{value.attr}`")
                else:
                    continue
                read = gast.copy_location(gast.Expr(value), stmt)
                written = _call(parsed, read, kind, s, names, reads=True)
                args = [gast_name(n) for n in written.inputs]
                new = gast.copy_location(gast.Call(gast_name(written.name), args, []), value)
                for n in scope.walk(new):
                    if isinstance(n, gast.expr):
                        gast.copy_location(n, value)
                if isinstance(child, list):
                    child[k] = new
                else:
                    setattr(node, field_name, new)


def _import_now(parsed: ParsedFunction, stmt: gast.Import | gast.ImportFrom, s: _Scope) -> bool:
    """Do `import m` now and bind its names for the function (a module-level import does the same);
    False if it cannot be done now (then it runs as written, and fails where the plain call fails)."""
    package = parsed.pyfunc.__globals__.get("__package__")
    bound = {}
    try:
        for alias in stmt.names:
            if isinstance(stmt, gast.Import):
                module = importlib.import_module(alias.name)
                if alias.asname is None:
                    name = alias.name.split(".")[0]
                    bound[name] = importlib.import_module(name)
                else:
                    bound[alias.asname] = module
            else:
                if alias.name == "*":
                    return False
                module = importlib.import_module("." * stmt.level + (stmt.module or ""), package)
                bound[alias.asname or alias.name] = getattr(module, alias.name)
    except Exception:  # noqa: BLE001 (any failure: the statement runs as written and raises it there)
        return False
    if set(bound) & s.reassigned - _import_names(s.node):
        return False  # the name is also assigned: a variable, not a module
    parsed.outside.update(bound)
    return True


def _import_names(node: gast.FunctionDef | gast.Lambda) -> set[str]:
    return {
        (a.asname or a.name.split(".")[0])
        for n in scope.scope_walk(scope.function_body(node), comprehensions=False)
        if isinstance(n, (gast.Import, gast.ImportFrom))
        for a in n.names
    }


def _call_statement(
    parsed: ParsedFunction, stmt: gast.stmt, kind: tuple[str, str], s: _Scope, names: NameSupply
) -> gast.stmt:
    """The statement as a call of its compiled function: `(outputs...) = f(inputs...)`, `f(inputs...)`
    (nothing assigned), `return f(inputs...)` (a `raise`)."""
    if scope.returns([stmt]) or _jumps_out(stmt):
        raise UnsupportedSyntax(
            f"`return`, `break` or `continue` inside a {kind[1]} is not supported yet (chadpy runs the statement as "
            "written, and it would leave only the statement): set a variable and leave after it",
            parsed.loc(stmt),
        )
    written = _call(parsed, stmt, kind, s, names)
    if id(stmt) in s.read_back:
        written.root, written.read_back = _place(stmt)[0], s.read_back[id(stmt)]
    call = gast.Call(gast_name(written.name), [gast_name(n) for n in written.inputs], [])
    if written.raises:
        new: gast.stmt = gast.Return(call)
    elif written.outputs:
        target = gast.Tuple([gast_name(n, gast.Store) for n in written.outputs], gast.Store())
        new = gast.Assign([target], call, None)
    else:
        new = gast.Expr(call)
    return at(new, stmt)


def _place(stmt: gast.stmt) -> tuple[str, str | None, bool] | None:
    """Where a store writes: (its root variable, the attribute of it it writes into or None for the variable's
    own object, whether it assigns that attribute or variable anew rather than changing an object):
    `self.best = f` is ("self", "best", True), `self.history.append(f)` ("self", "history", False),
    `LOG.append(v)` ("LOG", None, False), `BEST = f` (a `global`) ("BEST", None, True); None for any other."""
    if isinstance(stmt, gast.Expr):
        rebinding, receiver = False, stmt.value.func.value
    else:
        targets = _targets(stmt)
        if len(targets) != 1:
            return None
        target = targets[0]
        rebinding = isinstance(target, (gast.Attribute, gast.Name))
        receiver = target
        while isinstance(receiver, gast.Subscript):
            receiver = receiver.value
    if isinstance(receiver, gast.Name):
        return receiver.id, None, rebinding
    if isinstance(receiver, gast.Attribute) and isinstance(receiver.value, gast.Name):
        return receiver.value.id, receiver.attr, rebinding
    return None


def _holders(parsed: ParsedFunction, root: str, s: _Scope, context: list[scope.Context]) -> set[str]:
    """`root` and the other outside names the function reads that hold its object, or an array sharing its
    memory: a store through one is read back through any (`a[0] = x; return b[0] * x` after `b = a`)."""
    if root in s.local:
        return {root}
    value = parsed.resolve(root, Watch())
    holders = {root}
    for node, *_ in context:
        if not isinstance(node, gast.Name) or node.id in holders or node.id in s.local:
            continue
        if same_data(value, parsed.resolve(node.id, Watch())):
            holders.add(node.id)
    return holders


def _read_back(
    stmt: gast.stmt, place: tuple[str, str | None, bool], s: _Scope, context: list[scope.Context], holders: set[str]
) -> bool:
    """Whether the function may read what `stmt` stores again: a read of the attribute (of the variable, if it
    stores into the variable's own object) after it, or in a loop around it, or in a nested function; `self`
    itself passed on or its method called (which may read it). A value assigned anew (`self.best = f`) is
    not read back by a read before it; an object changed (`self.history.append(f)`) is by any read (an
    earlier name of it sees the change). `context`: the function's nodes (`scope.in_context`); `holders`: the
    names of the root's object (`_holders`)."""
    _, attr, rebinding = place
    inside = {id(n) for n in scope.walk(stmt)}
    around = next((set(loops) for node, _, loops, _ in context if node is stmt), set())
    for node, parent, loops, nested in context:
        if _method_called(node, parent):  # `self.m(...)`: `self` passed on
            node, parent = node.value, None
        if id(node) in inside or not any(_reads_place(node, parent, root, attr) for root in holders):
            continue
        if isinstance(parent, gast.Call) and isinstance(parent.func, gast.Name) and parent.func.id in s.given_back:
            continue  # `put_back(self, "h", ...)` (`local_state.py`) writes another attribute, reads none
        if nested or not rebinding or set(loops) & around or node.lineno > stmt.lineno:
            return True
    return False


def _reads_place(node: gast.AST, parent: gast.AST | None, root: str, attr: str | None) -> bool:
    """Whether `node` reads the place a store writes (not as the receiver or target of another store)."""
    stored = (
        isinstance(parent, gast.Attribute)
        and parent.attr in scope.MUTATING
        or isinstance(getattr(parent, "ctx", None), gast.Store)
    )
    if attr is None:
        return isinstance(node, gast.Name) and node.id == root and isinstance(node.ctx, gast.Load) and not stored
    if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and node.value.id == root:
        return node.attr == attr and isinstance(node.ctx, gast.Load) and not stored
    whole = isinstance(node, gast.Name) and node.id == root and isinstance(node.ctx, gast.Load)
    return whole and not isinstance(parent, gast.Attribute)  # `self` passed on (`self.m(...)`: below)


def _method_called(node: gast.AST, parent: gast.AST | None) -> bool:
    """`node` is `obj.m` in `obj.m(...)`, a method that is not one of a container's updates."""
    return (
        isinstance(parent, gast.Call)
        and node is parent.func
        and isinstance(node, gast.Attribute)
        and node.attr not in scope.MUTATING
    )


def _jumps_out(node: gast.AST) -> bool:
    """Whether a `break` or `continue` in the statement leaves it (one not inside a loop of its own)."""
    if isinstance(node, (gast.Break, gast.Continue)):
        return True
    if isinstance(node, (gast.For, gast.While, gast.FunctionDef, gast.Lambda, gast.ClassDef, gast.expr)):
        return isinstance(node, (gast.For, gast.While)) and any(_jumps_out(n) for n in node.orelse)
    return any(_jumps_out(n) for n in scope.children(node))


def _call(
    parsed: ParsedFunction, stmt: gast.stmt, kind: tuple[str, str], s: _Scope, names: NameSupply, reads: bool = False
) -> AsWritten:
    """Compile `stmt` into the function that runs it, and register it under a fresh name."""
    hint, what = kind
    if isinstance(stmt, gast.ClassDef):
        stored = {stmt.name}
        s.introduced.add(stmt.name)
    else:
        stored = scope.assigned([stmt], attributes=False) if not reads else set()
    deleted = {n.id for n in scope.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del)}
    local = s.local
    outputs = tuple(sorted(stored & local))
    inputs = tuple(sorted((scope.free_reads([stmt]) | stored | deleted) & local))
    name = names.fresh(f"{hint}_at_line_{parsed.loc(stmt).lineno}")
    fn = _compile(parsed, stmt, inputs, outputs, s.declared, reads)
    stores = any(
        isinstance(n, (gast.Attribute, gast.Subscript)) and isinstance(n.ctx, gast.Store) for n in scope.walk(stmt)
    )
    stores |= kind in (_DECLARED, _STORE)  # what it stores (a `global` variable, `LOG.append(v)`) is data read back
    shown = {n: s.shown[n] for n in inputs if n in s.shown}
    written = AsWritten(name, what, fn, inputs, outputs, shown, isinstance(stmt, gast.Raise), stores, reads)
    parsed.outside[name] = written
    return written


def _compile(
    parsed: ParsedFunction,
    stmt: gast.stmt,
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    declared: set[str],
    reads: bool,
) -> types.FunctionType:
    """`def f(inputs): <declarations>; <unbound inputs deleted>; stmt; return outputs`, compiled in the
    function's module with its closure cells, at the statement's own lines (a traceback shows the user's)."""
    user = parsed.pyfunc
    freevars = user.__code__.co_freevars
    nonlocals = sorted(declared & set(freevars))
    globals_ = sorted(declared - set(freevars))
    body: list[ast.stmt] = []
    if globals_:
        body.append(ast.Global(globals_))
    if nonlocals:
        body.append(ast.Nonlocal(nonlocals))
    unbound = ast.Name("_chadpy_unbound", ast.Load())
    for n in inputs:  # a variable not assigned yet is not assigned in the statement either
        is_unbound = ast.Compare(ast.Name(n, ast.Load()), [ast.Is()], [unbound])
        body.append(ast.If(is_unbound, [ast.Delete([ast.Name(n, ast.Del())])], []))
    statement = gast.gast_to_ast(stmt)
    if reads:  # `name` as an expression: its value
        body.append(ast.Return(statement.value))
    else:
        body.append(statement)
    if outputs:  # what the statement left in each (a variable it deleted or never assigned: unbound)
        values = ast.Call(ast.Name("locals", ast.Load()), [], [])
        get = ast.Attribute(ast.Name("_values", ast.Load()), "get", ast.Load())
        got = [ast.Call(get, [ast.Constant(n), unbound], []) for n in outputs]
        body += [ast.Assign([ast.Name("_values", ast.Store())], values), ast.Return(ast.Tuple(got, ast.Load()))]
    line = parsed.first_lineno + getattr(stmt, "lineno", 1) - 1
    for node in ast.walk(statement):  # the user's lines, not the function's own
        if hasattr(node, "lineno"):
            end = getattr(node, "end_lineno", None) or node.lineno
            node.lineno += parsed.first_lineno - 1
            node.end_lineno = end + parsed.first_lineno - 1
    inner = ast.FunctionDef(
        user.__name__, ast.arguments([], [ast.arg(n) for n in inputs], None, [], [], None, []), body, [], None
    )
    cells = [ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None)) for v in ("_chadpy_unbound", *freevars)]
    outer = ast.FunctionDef("_outer", ast.arguments([], [], None, [], [], None, []), [*cells, inner], [], None)
    for node in (outer, inner):
        node.lineno = node.end_lineno = line
        node.col_offset = node.end_col_offset = 0
    module = ast.Module([outer], [])
    ast.fix_missing_locations(module)
    code = compile(module, parsed.filename, "exec")
    outer_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType))
    cells_by_name = dict(zip(freevars, user.__closure__ or ()))
    closure = tuple(
        types.CellType(UNBOUND) if v == "_chadpy_unbound" else cells_by_name[v] for v in inner_code.co_freevars
    )
    return types.FunctionType(inner_code, user.__globals__, user.__name__, None, closure)
