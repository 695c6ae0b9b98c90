"""Scope analyses of a function's gast tree: what its statements assign and read.

Pure functions of the tree, used by `lower`: which names a block assigns (the
variables an `if` joins or a loop carries), which are *live* after a statement
(read on some path before being assigned again), which a nested function reads
from outside itself (what a closure captures; `function_reads`: what a call of a
function the scope names reads), what may be assigned after a point (late
binding, `assigned_later`), and where control may leave a block (`return`,
`break`, `continue`).

Python's scopes are followed exactly: a comprehension's variables and a lambda's
parameters belong to their own scope, so `[y * 2 for y in xs]` neither assigns nor
reads a `y` of the function.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable, Iterator

import gast

Function = gast.FunctionDef | gast.Lambda
Jumps = tuple[set[str], set[str], set[str]]  # what `break`, `continue` and `return` read where they lead
COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp)


# Methods that change their container in place (`updates.py` lowers them): a call rebinds its name.
UPDATING = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "setdefault",
        "__setitem__",
        "__setitem_in__",
        "__comprehension_item__",
        "__comprehension_append__",
        "__updated_by__",
        "__written_back__",
        "__viewed_again__",
    }
)


# Methods that change the list, dict or set they are called on (of outside data, a call runs as written).
MUTATING = UPDATING | {"update", "clear", "remove", "add", "discard", "sort", "reverse", "popitem"}


def updated(node: gast.AST) -> str | None:
    """`xs` if node is a call `xs.append(...)`, `xs.pop(...)`, ... (a method in `UPDATING`)."""
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr in UPDATING
        and isinstance(node.func.value, gast.Name)
    ):
        return node.func.value.id
    return None


def attribute_stored(node: gast.AST) -> str | None:
    """`obj` if node is the target `obj.x` of an assignment."""
    if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name):
        return node.value.id
    return None


# fields that never hold a node the front end looks for: a name's or attribute's string, and `ctx` (a
# Load/Store/Del node under every name, attribute and subscript: a third of a tree's nodes, never looked at
# as a node of its own; `node.ctx` is read directly)
_NOT_NODES = frozenset(
    {"ctx", "id", "attr", "arg", "type_comment", "kind", "conversion", "is_async", "level", "module"}
)


@functools.cache
def _node_fields(cls: type) -> tuple[str, ...]:
    return tuple(f for f in cls._fields if f not in _NOT_NODES)


def children(node: gast.AST) -> list[gast.AST]:
    """`gast.iter_child_nodes(node)` as a list, without its per-field generator and without the `ctx` nodes
    (the front end walks the whole tree a dozen times: this is most of what a walk costs)."""
    out = []
    for name in _node_fields(type(node)):
        value = getattr(node, name, None)  # a node made in code may lack a field
        if type(value) is list:
            out += [x for x in value if isinstance(x, gast.AST)]
        elif isinstance(value, gast.AST):
            out.append(value)
    return out


def walk(node: gast.AST) -> Iterator[gast.AST]:
    """`gast.walk(node)`: every node of the tree, breadth first, in the same order, twice as fast."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node


def all_names(tree: gast.AST) -> set[str]:
    """Every name the tree mentions (what a supply of fresh names must avoid)."""
    return {n.id for n in walk(tree) if isinstance(n, gast.Name)}


def scope_walk(nodes: list[gast.AST], comprehensions: bool = True) -> Iterator[gast.AST]:
    """The nodes of one function's scope: a nested `def` or `lambda` is yielded, with its
    defaults (evaluated here), but not its body (its own scope). Without `comprehensions`,
    a comprehension's own scope is left out too (its first iterable is evaluated here)."""
    todo = list(reversed(nodes))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo.extend(reversed(node.args.defaults))
        elif isinstance(node, COMPREHENSIONS) and not comprehensions:
            todo.append(node.generators[0].iter)
        else:
            todo.extend(reversed(children(node)))


def assigned(
    stmts: list[gast.stmt], comprehensions: bool = False, attributes: bool = True, updates: bool = True
) -> set[str]:
    """Names a statement list assigns (an `append` or `pop` updates its container unless not `updates`,
    `obj.x = v` its object unless not `attributes`, a `def` binds its name); with `comprehensions`, the
    variables of the comprehensions in it too."""
    return assigned_among(scope_walk(stmts, comprehensions), attributes, updates)


def assigned_among(nodes: Iterable[gast.AST], attributes: bool = True, updates: bool = True) -> set[str]:
    """`assigned` of the nodes of a walk already made."""
    out = set()
    for node in nodes:
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            out.add(node.id)
        elif attributes and (name := attribute_stored(node)):
            out.add(name)
        elif isinstance(node, gast.FunctionDef):
            out.add(node.name)
        elif updates and (name := updated(node)):
            out.add(name)
    return out


def name_read(node: gast.AST) -> str | None:
    """The name a node reads: a loaded name, or the target of `x += ...`."""
    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
        return node.id
    if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
        return node.target.id
    return None


def read(nodes: list[gast.AST]) -> set[str]:
    """Names read anywhere in the statements or expressions (by nested functions and comprehensions too)."""
    return {name for s in nodes for node in walk(s) if (name := name_read(node)) is not None}


def free_reads(nodes: list[gast.AST]) -> set[str]:
    """Names read in the statements or expressions from the scope they are in: a nested function's parameters
    and the names it assigns are its own (a method of a class defined here reads its own `self`)."""
    out: set[str] = set()

    def visit(node: gast.AST, bound: frozenset[str]) -> None:
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            args = node.args
            for outer in [*args.defaults, *(d for d in args.kw_defaults if d), *getattr(node, "decorator_list", ())]:
                visit(outer, bound)  # evaluated where the function is defined
            body = function_body(node)
            declared = {n for s in scope_walk(body) if isinstance(s, (gast.Global, gast.Nonlocal)) for n in s.names}
            own = (set(parameters(node)) | assigned(body, attributes=False)) - declared
            for stmt in body:
                visit(stmt, bound | own)
            return
        name = name_read(node)
        if name is not None and name not in bound:
            out.add(name)
        for child in children(node):
            visit(child, bound)

    for node in nodes:
        visit(node, frozenset())
    return out


def element_path(target: gast.Subscript) -> list[gast.Subscript]:
    """The subscripts of an element target, outermost first: `x[t]`, `x[t][k]` for `x[t][k]`; the first one's
    value (`x`) is what the assignment writes into."""
    path = [target]
    while isinstance(path[0].value, gast.Subscript):
        path.insert(0, path[0].value)
    return path


Context = tuple[gast.AST, "gast.AST | None", tuple[int, ...], bool]  # node, parent, loops around it, nested


def in_context(body: list[gast.stmt], scopes: tuple[type, ...] = (gast.FunctionDef, gast.Lambda)) -> Iterator[Context]:
    """Each node of a function's body in the order of the source, with its parent, the loops around it (their
    ids) and whether it is inside a nested scope (one of `scopes`: a nested function, by default)."""
    todo: list[Context] = [(node, None, (), False) for node in reversed(body)]
    while todo:
        node, parent, loops, nested = todo.pop()
        yield node, parent, loops, nested
        inner = (*loops, id(node)) if isinstance(node, (gast.For, gast.While)) else loops
        deeper = nested or isinstance(node, scopes)
        todo.extend((child, node, inner, deeper) for child in reversed(children(node)))


def outline(node: gast.AST) -> Iterator[gast.AST]:
    """The nodes of the tree that are not expressions nor in one (statements and what holds them),
    breadth first, in `walk`'s order: a statement is never inside an expression, so finding one
    needs no walk of the expressions, most of a tree's nodes."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(c for c in children(node) if not isinstance(c, gast.expr))
        yield node


def functions(tree: gast.AST) -> list[gast.FunctionDef]:
    """Every function definition in a tree (nested ones too), the outer first."""
    return [n for n in outline(tree) if isinstance(n, gast.FunctionDef)]


def returns(stmts: list[gast.stmt]) -> bool:
    return any(isinstance(n, gast.Return) for n in scope_walk(stmts))


def function_body(node: Function) -> list[gast.stmt]:
    return node.body if isinstance(node, gast.FunctionDef) else [gast.copy_location(gast.Return(node.body), node.body)]


def parameters(node: Function) -> list[str]:
    """A function's parameters in the order of its signature: `*args` after the positional ones,
    `**kwargs` last."""
    a = node.args
    star = [a.vararg] if a.vararg is not None else []
    return [p.id for p in [*a.posonlyargs, *a.args, *star, *a.kwonlyargs, *([a.kwarg] if a.kwarg else [])]]


def local_names(node: Function) -> set[str]:
    """A function's own names: its parameters and the names its body assigns."""
    return assigned(function_body(node), attributes=False) | set(parameters(node))


def free_names(node: Function) -> set[str]:
    """The names a nested function reads from outside itself (its own and inner functions' reads)."""
    body = function_body(node)
    return set().union(*map(uses, body)) - set(parameters(node)) - assigned(body, attributes=False)


def uses(node: gast.AST) -> set[str]:
    """The names code reads from its function's scope: a comprehension's variables and a nested
    function's parameters and locals are theirs (what a nested function reads from outside is read)."""
    out: set[str] = set()
    for n in scope_walk([node], comprehensions=False):
        if (name := name_read(n)) is not None:
            out.add(name)
        elif isinstance(n, (gast.FunctionDef, gast.Lambda)):
            out |= free_names(n)
        elif isinstance(n, COMPREHENSIONS):
            out |= _comprehension_uses(n)
    return out


def _comprehension_uses(node: gast.AST) -> set[str]:
    """What a comprehension reads from outside, apart from its first iterable (read by the caller)."""
    bound: set[str] = set()
    out: set[str] = set()
    for k, gen in enumerate(node.generators):
        if k:
            out |= uses(gen.iter) - bound
        bound |= {n.id for n in walk(gen.target) if isinstance(n, gast.Name)}
        for cond in gen.ifs:
            out |= uses(cond) - bound
    parts = [node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]
    for part in parts:
        out |= uses(part) - bound
    return out


def _own_exprs(stmt: gast.stmt) -> list[gast.AST]:
    """A compound statement's own expressions (its test, iterable): not its nested blocks."""
    return [v for f, v in gast.iter_fields(stmt) if f not in ("body", "orelse") and isinstance(v, gast.AST)]


def live_in(stmts: list[gast.stmt], live_out: set[str], jumps: Jumps | None = None) -> set[str]:
    """The names read on some path through `stmts` before being assigned, given the names
    `live_out` read after them. `jumps`: what `break`, `continue` and `return` read where
    they lead (None outside a loop: a `return` reads just its value)."""
    live = set(live_out)
    for s in reversed(stmts):
        live = _live_before(s, live, jumps)
    return live


def _live_before(s: gast.stmt, live: set[str], jumps: Jumps | None) -> set[str]:
    if isinstance(s, gast.Return):
        return (uses(s.value) if s.value is not None else set()) | (jumps[2] if jumps else set())
    if isinstance(s, (gast.Break, gast.Continue)):
        return set(jumps[0] if isinstance(s, gast.Break) else jumps[1]) if jumps else set()
    if isinstance(s, gast.If):
        return uses(s.test) | live_in(s.body, live, jumps) | live_in(s.orelse, live, jumps)
    if isinstance(s, (gast.For, gast.While)):
        test = uses(s.test) if isinstance(s, gast.While) else set()
        target = assigned([gast.Assign([s.target], s.iter, None)]) if isinstance(s, gast.For) else set()
        head = live | test  # live where the loop decides whether to run its body again: a fixpoint
        while True:
            inner = (live, head, jumps[2] if jumps else set())
            new = head | (live_in(s.body, head, inner) - target)
            if new == head:
                break
            head = new
        return head | (uses(s.iter) if isinstance(s, gast.For) else set())
    if isinstance(s, gast.FunctionDef):
        return (live - {s.name}) | free_names(s) | set().union(*(uses(d) for d in s.args.defaults))
    if isinstance(s, (gast.Assign, gast.AnnAssign)):
        targets = s.targets if isinstance(s, gast.Assign) else [s.target]
        stored = [n for t in targets for n in walk(t) if isinstance(n, gast.Name)]
        defined = {n.id for n in stored if isinstance(n.ctx, gast.Store)}
        value = uses(s.value) if s.value is not None else set()
        return (live - defined) | value | set().union(*(uses(t) for t in targets))
    read_target = {s.target.id} if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) else set()
    return live | read_target | set().union(*(uses(e) for e in _own_exprs(s)))  # `x += e`, a call, an assert


def own_parts(node: gast.stmt) -> list[gast.AST]:
    """A statement's own parts: all but its nested blocks (and a `def`'s body, its own scope)."""
    own = [v for f, v in gast.iter_fields(node) if f not in ("body", "orelse")]
    return [x for v in own for x in (v if isinstance(v, list) else [v]) if isinstance(x, gast.AST)]


def assigned_later(body: list[gast.stmt]) -> dict[int, set[str]]:
    """For each function made in this scope, and each node of its statements' own expressions
    (where a function value may be used): the names the scope may assign after it (the rest of
    its block and the blocks around it, a surrounding loop's body, which runs again, and the
    variables of a comprehension it is in). Asked only of a scope that makes a function."""
    out: dict[int, set[str]] = {}

    def visit(stmts: list[gast.stmt], after: set[str]) -> None:
        rests = [after]  # names assigned after each statement, built from the end (linear)
        for s in reversed(stmts[1:]):
            rests.append(rests[-1] | assigned([s], comprehensions=True))
        for s, rest in zip(stmts, reversed(rests)):
            around = rest | assigned([s], comprehensions=True)
            for node in scope_walk(own_parts(s)):
                out[id(node)] = around
            if isinstance(s, gast.FunctionDef):
                out[id(s)] = rest
            if isinstance(s, gast.If):
                visit(s.body, rest)
                visit(s.orelse, rest)
            elif isinstance(s, (gast.For, gast.While)):
                visit(s.body, rest | assigned([s], comprehensions=True))

    visit(body, set())
    return out


def makes_functions(body: list[gast.stmt]) -> bool:
    """Whether a `def` or a `lambda` is anywhere in the statements (most functions have none, and
    need neither `assigned_later` nor `function_reads`)."""
    return any(isinstance(n, (gast.FunctionDef, gast.Lambda)) for s in body for n in walk(s))


def function_reads(body: list[gast.stmt]) -> dict[str, set[str]]:
    """What a call of each function this scope names (`def g`, `g = lambda ...`) reads from the
    scope: its free names and, transitively, those of the named functions it uses."""
    reads: dict[str, set[str]] = {}
    for node in scope_walk(body):
        if isinstance(node, gast.FunctionDef):
            reads.setdefault(node.name, set()).update(free_names(node) - {node.name})
        elif isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    reads.setdefault(target.id, set()).update(free_names(node.value))
    changed = True
    while changed:
        changed = False
        for own in reads.values():
            more = set().union(*(reads[n] for n in own if n in reads)) - own
            own |= more
            changed = changed or bool(more)
    return reads


def breaks(stmts: list[gast.stmt], kinds: tuple = (gast.Break, gast.Continue)) -> bool:
    """Whether a statement of `kinds` in stmts leaves the loop they are in (not a nested loop)."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, gast.If) and (breaks(s.body, kinds) or breaks(s.orelse, kinds)):
            return True
    return False


def may_exit(stmts: list[gast.stmt]) -> bool:
    """Whether control may leave stmts other than by falling through the end."""
    return returns(stmts) or breaks(stmts)
