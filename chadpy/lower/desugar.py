"""Desugaring: the Python constructs that are loops in disguise, written as loops.

Each rule here turns one construct into the loop it means, in the user's own
language (gast), and has the lowerer lower that loop; so every one of them is the
paper's fold (Section 7) and none needs a CHAD rule of its own:

| construct | the loop it is |
| --- | --- |
| `[e for x in xs if c]` | `acc = []; for x in xs: if c: acc.append(e)` |
| `map(f, xs, ys)` | `[f(x, y) for x, y in zip(xs, ys)]` |
| `sorted(xs, key=f, reverse=r)` | keys `[f(x) for x in xs]`, a stable argsort, `[xs[i] for i in order]` |
| `max(xs, key=f)`, `min(a, b, key=f)` | keys as above, then the element at the best one |
| `functools.reduce(f, xs, init)` | `acc = init; for x in xs: acc = f(acc, x)` |

and `iteration` says what a `for` loop counts and how it binds its target from the
count k: `range` directly, `enumerate`/`zip` positions 0..n-1 of each sequence,
`d.items()`/`.keys()`/`.values()` the keys of a dict, anything else the positions of
the sequence and its element at k (a one-hot cotangent per element).

The rules run during lowering, not as a pass before it: a comprehension is an
expression, and may stand where a statement cannot (a lambda's body, one branch
of `a if c else b`), so its loop is lowered where it stands, in the lowerer's
let-context, which keeps Python's order and laziness of evaluation.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

import gast

from ..errors import UnsupportedSyntax
from ..ir import nodes as ir
from ..read import scope
from ..rewrite.blocks import gast_name
from ..rules.registry import OPERATORS, PRIMITIVES
from ..rules.scalar import JOINED_STR
from ..rules.sequences import ARGBEST, ARGSORT, DICT_KEYS, DICT_OF, POSITIONS, REDUCE, TRANSPOSED
from . import control
from .context import Lowering
from .control import Binder
from .resolve import prim_call, synthetic

RANGE = PRIMITIVES[builtins.range]
COMPARISONS = {
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Eq: "==",
    gast.NotEq: "!=",
    gast.Is: "is",
    gast.IsNot: "is not",
    gast.In: "in",
    gast.NotIn: "not in",
}


def loop_call(lw: Lowering, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr | None:
    """The loop a call of `fn` is, lowered; None if `fn` is not one of the constructs above."""
    if fn is REDUCE:
        return reduce(lw, node, env, lets)
    if fn is builtins.map:
        return map_(lw, node, env, lets)
    if fn is builtins.sorted:
        return sorted_(lw, node, env, lets)
    if fn in (builtins.max, builtins.min) and node.keywords:
        return best(lw, fn is builtins.max, path, node, env, lets)
    if fn in (builtins.enumerate, builtins.zip):
        return pairs(lw, fn, path, node, env, lets)
    if fn is builtins.filter:
        return filter_(lw, node, env, lets)
    if fn is builtins.reversed:
        return reversed_(lw, node, env, lets)
    if fn is builtins.dict:
        return dict_(lw, node, env, lets)
    return None


def comprehension(
    lw: Lowering, node: gast.ListComp | gast.GeneratorExp | gast.DictComp, env: dict, lets: list
) -> ir.Atom:
    """`[e for x in xs if c]` is the loop `acc = []; for x in xs: if c: acc.append(e)`, and
    `{k: v for ...}` the loop `acc = {}; for ...: acc[k] = v` (`acc.__comprehension_item__(k, v)`)."""
    acc = lw.names.fresh("dictcomp" if isinstance(node, gast.DictComp) else "listcomp")
    dictcomp = isinstance(node, gast.DictComp)
    add, added = (
        ("__comprehension_item__", [node.key, node.value]) if dictcomp else ("__comprehension_append__", [node.elt])
    )
    body: list[gast.stmt] = [gast.Expr(gast.Call(gast.Attribute(gast_name(acc), add, gast.Load()), added, []))]
    for gen in reversed(node.generators):
        for cond in reversed(gen.ifs):
            body = [gast.If(cond, body, [])]
        body = [gast.For(gen.target, gen.iter, body, [], None)]
    for n in scope.walk(body[0]):
        if isinstance(n, gast.stmt):
            gast.copy_location(n, node)
    targets = {n.id for gen in node.generators for n in scope.walk(gen.target) if isinstance(n, gast.Name)}
    saved = {t: env[t] for t in targets if t in env}
    start = lw.names.fresh("empty")
    lets.append(ir.Let(start, ir.MakeDict([], []) if isinstance(node, gast.DictComp) else ir.MakeList([]), lw.loc))
    env[acc] = ir.Var(start)
    loc, hidden = lw.loc, lw.hidden
    lw.hidden = {**{t: env.get(t) for t in targets}, **hidden}  # what a function named outside reads
    control.lower_loop(lw, body[0], env, lets, {acc}, iteration(lw, body[0], env, lets))
    lw.loc, lw.hidden = loc, hidden
    result = env.pop(acc)
    for t in targets:  # comprehension variables do not leak (Python 3)
        env.pop(t, None)
    env.update(saved)
    return result


def reduce(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Atom:
    """`functools.reduce(f, xs[, init])` is the loop `acc = init; for x in xs: acc = f(acc, x)`."""
    if node.keywords or len(node.args) not in (2, 3):
        raise lw.error(UnsupportedSyntax, "`functools.reduce(f, xs[, initial])` is supported", node)
    f = function_operand(lw, node.args[0], env, lets)
    xs = lw.atom(node.args[1], env, lets)
    acc, item = lw.names.fresh("reduced"), lw.names.fresh("item")
    if len(node.args) == 3:
        first, start = lw.atom(node.args[2], env, lets), ir.Const(0)
    else:
        first, start = lw.let(ir.Index(xs, ir.Const(0)), lets, "first"), ir.Const(1)
    n = lw.let(ir.Prim(PRIMITIVES[len], [xs]), lets, "n")
    seq = lw.let(ir.Prim(RANGE, [start, n]), lets, "indices")
    step = gast.Assign([gast_name(acc, gast.Store)], gast.Call(f, [gast_name(acc), gast_name(item)], []), None)
    loop = gast.For(gast_name(item, gast.Store), gast_name(item), [step], [], None)
    for n_ in (step, loop):
        gast.copy_location(n_, node)

    def bind_item(body_env: dict, prelude: list) -> str:
        k = lw.names.fresh("k")
        body_env[item] = lw.let(ir.Index(xs, ir.Var(k), natural=True), prelude, "x")
        return k

    env[acc] = first
    loc = lw.loc
    control.lower_loop(lw, loop, env, lets, {acc}, (seq, bind_item))
    lw.loc = loc
    env.pop(item, None)
    return env.pop(acc)


def function_operand(lw: Lowering, node: gast.expr, env: dict, lets: list) -> gast.expr:
    """The function a builtin such as `map` calls, as the callee of the loop it becomes: a
    module-level name stays as written (a primitive stays a primitive); anything else is
    evaluated once, here, into a fresh name."""
    if isinstance(node, (gast.Name, gast.Attribute)) and not lw.resolver.is_local(node, env):
        return node
    return gast.copy_location(synthetic(lw, lw.argument(node, env, lets), env, "fn"), node)


def list_of(
    lw: Lowering,
    elt: gast.expr,
    targets: list[str],
    iterable: gast.expr,
    env: dict,
    lets: list,
    ifs: list[gast.expr] | None = None,
) -> ir.Var:
    """`[elt for targets in iterable if ...]`, lowered as a comprehension."""
    target = (
        gast_name(targets[0], gast.Store)
        if len(targets) == 1
        else gast.Tuple([gast_name(t, gast.Store) for t in targets], gast.Store())
    )
    comp = gast.ListComp(elt, [gast.comprehension(target, iterable, ifs or [], 0)])
    for n in scope.walk(comp):
        if getattr(n, "lineno", None) is None and isinstance(n, (gast.expr, gast.stmt)):
            gast.copy_location(n, elt)
    return comprehension(lw, comp, env, lets)


def map_(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Atom:
    """`map(f, xs, ...)` is `[f(x, ...) for x, ... in zip(xs, ...)]`: a list, not an iterator
    (which `list(...)`, `sum(...)` and `for` all accept)."""
    if node.keywords or len(node.args) < 2:
        raise lw.error(UnsupportedSyntax, "`map(f, xs, ...)` is supported (no keyword arguments)", node)
    f = function_operand(lw, node.args[0], env, lets)
    seqs = [synthetic(lw, lw.atom(a, env, lets), env, "seq") for a in node.args[1:]]
    items = [lw.names.fresh("item") for _ in seqs]
    iterable = seqs[0] if len(seqs) == 1 else gast.Call(gast_name("zip"), seqs, [])
    elt = gast.copy_location(gast.Call(f, [gast_name(i) for i in items], []), node)
    return list_of(lw, elt, items, iterable, env, lets)


def pairs(lw: Lowering, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`zip(xs, ys)`, `enumerate(xs)` as values: the lists `[(x, y) for x, y in zip(xs, ys)]` (which
    `list(...)`, `dict(...)` and `for` all accept); `zip(*rows)` the rows' columns (a transpose)."""
    if any(isinstance(a, gast.Starred) for a in node.args):
        if fn is not builtins.zip or len(node.args) != 1 or node.keywords:
            raise lw.error(UnsupportedSyntax, f"a star-argument of `{path}` is supported as `zip(*rows)` alone", node)
        return ir.Prim(TRANSPOSED, [lw.atom(node.args[0].value, env, lets)])
    width = 2 if fn is builtins.enumerate else len(node.args)
    items = [lw.names.fresh("item") for _ in range(width)]
    elt = gast.copy_location(gast.Tuple([gast_name(i) for i in items], gast.Load()), node)
    return list_of(lw, elt, items, node, env, lets)


def filter_(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Atom:
    """`filter(f, xs)` is `[x for x in xs if f(x)]` (`filter(None, xs)`: `if x`)."""
    if node.keywords or len(node.args) != 2:
        raise lw.error(UnsupportedSyntax, "`filter(f, xs)` is supported (no keyword arguments)", node)
    item = lw.names.fresh("item")
    f = node.args[0]
    test: gast.expr = gast_name(item)
    if not (isinstance(f, gast.Constant) and f.value is None):
        test = gast.Call(function_operand(lw, f, env, lets), [test], [])
    xs = synthetic(lw, lw.atom(node.args[1], env, lets), env, "seq")
    return list_of(lw, gast.copy_location(gast_name(item), node), [item], xs, env, lets, [test])


def reversed_(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`reversed(xs)` is `xs[::-1]`: a list (a tuple for a tuple), not an iterator."""
    if node.keywords or len(node.args) != 1:
        raise lw.error(UnsupportedSyntax, "`reversed(xs)` takes one argument", node)
    backwards = slice(None, None, -1)
    step = lw.let(ir.Prim(PRIMITIVES[builtins.slice], [ir.Const(None), ir.Const(None), ir.Const(-1)]), lets, "s")
    return ir.Slice(lw.atom(node.args[0], env, lets), step, backwards)


def dict_(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`dict(k=v, ...)` is a dict literal; `dict(x)` copies a dict or makes one of (key, value) pairs
    (`dict(zip(ks, vs))` too: `zip` is a list of pairs)."""
    if node.keywords and not node.args:
        values = [lw.atom(k.value, env, lets) for k in node.keywords]
        return ir.MakeDict([ir.Const(k.arg) for k in node.keywords], values)
    if node.keywords or len(node.args) > 1 or any(isinstance(a, gast.Starred) for a in node.args):
        raise lw.error(UnsupportedSyntax, "`dict(x)` and `dict(k=v, ...)` are supported, not both at once", node)
    if not node.args:
        return ir.MakeDict([], [])
    return ir.Prim(DICT_OF, [lw.atom(node.args[0], env, lets)])


def key_list(lw: Lowering, seq: gast.Name, key: gast.expr | None, env: dict, lets: list) -> ir.Atom:
    """The list of `key(x)` for x in seq (seq itself without a key)."""
    if key is None or isinstance(key, gast.Constant) and key.value is None:
        return env[seq.id]
    f = function_operand(lw, key, env, lets)
    item = lw.names.fresh("item")
    elt = gast.copy_location(gast.Call(f, [gast_name(item)], []), key)
    return list_of(lw, elt, [item], seq, env, lets)


def elements(lw: Lowering, iterable: gast.expr, env: dict, lets: list) -> ir.Atom:
    """The list of what a `for` loop over `iterable` yields (a dict's keys, an array's rows)."""
    item = lw.names.fresh("item")
    elt = gast.copy_location(gast_name(item), iterable)  # its loop is on the iterable's line
    return list_of(lw, elt, [item], iterable, env, lets)


def sorted_(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Atom:
    """`sorted(xs, key=f, reverse=r)`: the keys (discrete: no derivative flows through
    them), a stable argsort, then the elements in that order (a one-hot each)."""
    options = {k.arg: k.value for k in node.keywords}
    if len(node.args) != 1 or set(options) - {"key", "reverse"}:
        raise lw.error(UnsupportedSyntax, "`sorted(xs, key=..., reverse=...)` is supported", node)
    seq = synthetic(lw, elements(lw, node.args[0], env, lets), env, "seq")
    keys = key_list(lw, seq, options.get("key"), env, lets)
    reverse = lw.atom(options["reverse"], env, lets) if "reverse" in options else ir.Const(False)
    order = synthetic(lw, lw.let(ir.Prim(ARGSORT, [keys, reverse]), lets, "order"), env, "order")
    i = lw.names.fresh("i")
    elt = gast.copy_location(gast.Subscript(seq, gast_name(i), gast.Load()), node)
    return list_of(lw, elt, [i], order, env, lets)


def best(lw: Lowering, largest: bool, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`max(xs, key=f)` / `min(a, b, key=f)`: the element whose key is largest (smallest)."""
    if not node.args or any(k.arg != "key" for k in node.keywords):
        raise lw.error(UnsupportedSyntax, f"`{path}(xs, key=...)` is supported (not `default=`)", node)
    if len(node.args) == 1:
        seq = synthetic(lw, elements(lw, node.args[0], env, lets), env, "seq")
    else:
        items = ir.MakeTuple([lw.atom(a, env, lets) for a in node.args])
        seq = synthetic(lw, lw.let(items, lets, "candidates"), env, "seq")
    keys = key_list(lw, seq, node.keywords[0].value, env, lets)
    position = lw.let(ir.Prim(ARGBEST, [keys, ir.Const(largest)]), lets, "best")
    return ir.Index(env[seq.id], position)


def iteration(lw: Lowering, stmt: gast.For, env: dict, lets: list) -> tuple[ir.Atom, Binder]:
    """What a `for` loop counts (a discrete sequence) and how it binds its target from the count: one case
    per kind of iterable."""
    it, target = stmt.iter, stmt.target
    called = isinstance(it, gast.Call) and not lw.resolver.is_local(it.func, env)
    fn = lw.resolver.callee(it.func, env)[1] if called else None
    if fn is builtins.range:
        return _over_range(lw, it, target, env, lets)
    if fn in (builtins.enumerate, builtins.zip) and not any(isinstance(a, gast.Starred) for a in it.args):
        return _over_positions(lw, fn, it, target, env, lets)
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and lw.resolver.is_local(it.func.value, env):
        if it.func.attr in ("items", "keys", "values") and not it.args:
            return _over_dict(lw, it, target, env, lets)
    xs = lw.atom(it, env, lets)
    seq = lw.let(ir.Prim(POSITIONS, [xs]), lets, "positions")
    return seq, binder(
        lw, target, lambda k, prelude: lw.let(ir.Index(xs, ir.Var(k), natural=True, of_loop=True), prelude, "x")
    )


def _over_range(lw: Lowering, it: gast.Call, target: gast.AST, env: dict, lets: list) -> tuple[ir.Atom, Binder]:
    """`for i in range(...)`: the range itself; a counter from 0 or above is never negative."""
    seq = lw.let(prim_call(lw, RANGE, "range", it, env, lets), lets, "indices")
    if isinstance(target, gast.Name):
        never_negative = _from_zero_up(it)

        def counter(body_env: dict, prelude: list) -> str:
            name = lw.bind(target.id, body_env)
            if never_negative:
                lw.counters.add(name)
            return name

        return seq, counter
    return seq, binder(lw, target, lambda k, prelude: ir.Var(k))


def _over_positions(
    lw: Lowering, fn: object, it: gast.Call, target: gast.AST, env: dict, lets: list
) -> tuple[ir.Atom, Binder]:
    """`for i, x in enumerate(xs[, start])`, `for a, b in zip(xs, ys)`: positions 0..n-1 of the shortest."""
    if it.keywords and fn is builtins.zip:
        raise lw.error(UnsupportedSyntax, "keyword arguments to `zip` are not supported", it)
    args = [lw.atom(a, env, lets) for a in it.args]
    start = args[1] if fn is builtins.enumerate and len(args) > 1 else None
    if it.keywords:
        start = lw.atom(it.keywords[0].value, env, lets)
    seqs = args[:1] if fn is builtins.enumerate else args
    lens = [lw.let(ir.Prim(PRIMITIVES[len], [a]), lets, "n") for a in seqs]
    n = lens[0]
    for m in lens[1:]:
        n = lw.let(ir.Prim(PRIMITIVES[min], [n, m]), lets, "n")
    seq = lw.let(ir.Prim(RANGE, [n]), lets, "indices")
    if not isinstance(target, gast.Tuple) or len(target.elts) != (2 if fn is builtins.enumerate else len(seqs)):
        raise lw.error(UnsupportedSyntax, "unpack each element of this loop into a tuple of names", target)

    # what `for` yields from each sequence, by position: the positions of a list or an array, a dict's keys
    keys = [lw.let(ir.Prim(POSITIONS, [a]), lets, "positions") for a in seqs]

    def parts(k: str, prelude: list) -> list[ir.Atom]:
        items = []
        for a, key in zip(seqs, keys):
            at = lw.let(ir.Index(key, ir.Var(k), natural=True), prelude, "at")
            items.append(lw.let(ir.Index(a, at, natural=True, of_loop=True), prelude, "item"))
        if fn is builtins.zip:
            return items
        i = ir.Var(k) if start is None else lw.let(ir.Prim(OPERATORS["+"], [ir.Var(k), start]), prelude, "i")
        return [i, items[0]]

    return seq, binder(lw, target, parts, unpack=False)


def _over_dict(lw: Lowering, it: gast.Call, target: gast.AST, env: dict, lets: list) -> tuple[ir.Atom, Binder]:
    """`for k in d.keys()`, `for v in d.values()`, `for k, v in d.items()`: the dict's keys."""
    method = it.func.attr
    d = lw.atom(it.func.value, env, lets)
    seq = lw.let(ir.Prim(DICT_KEYS, [d]), lets, "keys")
    if method == "keys":
        return seq, binder(lw, target, lambda k, prelude: ir.Var(k))
    if method == "values":
        return seq, binder(lw, target, lambda k, prelude: lw.let(ir.Index(d, ir.Var(k)), prelude, "v"))
    return seq, binder(lw, target, lambda k, prelude: [ir.Var(k), lw.let(ir.Index(d, ir.Var(k)), prelude, "v")], False)


def _from_zero_up(call: gast.Call) -> bool:
    """`range(n)`, or `range(a, n[, step])` with a literal a >= 0 and step > 0: it counts no negative number."""

    def literal(node: gast.AST, least: int) -> bool:
        return isinstance(node, gast.Constant) and type(node.value) is int and node.value >= least

    args = call.args
    if call.keywords or any(isinstance(a, gast.Starred) for a in args):
        return False
    return len(args) == 1 or len(args) in (2, 3) and literal(args[0], 0) and (len(args) == 2 or literal(args[2], 1))


def binder(lw: Lowering, target: gast.AST, element: Callable, unpack: bool = True) -> Binder:
    """Bind the loop target from a fresh counter k: `element(k, prelude)` gives the value(s)."""

    def bind(body_env: dict, prelude: list) -> str:
        k = lw.names.fresh("k")
        value = element(k, prelude)
        if unpack:
            lw.assign(target, value, body_env, prelude)
        else:
            for elt, atom in zip(target.elts, value):
                lw.assign(elt, atom, body_env, prelude)
        return k

    return bind


# ---------------------------------------------------------------- f-strings: calls of `format` in disguise

_CONVERSIONS = {ord("r"): builtins.repr, ord("s"): builtins.str, ord("a"): builtins.ascii}


def fstring(lw: Lowering, node: gast.JoinedStr, env: dict, lets: list) -> ir.Expr:
    """`f"{x:.2f} and {y!r}"` is `format(x, ".2f") + " and " + format(repr(y), "")`: the primal values
    formatted (a string carries no derivative)."""
    parts: list[ir.Atom] = []
    for part in node.values:
        if isinstance(part, gast.Constant):
            parts.append(ir.Const(part.value))
            continue
        value = lw.atom(part.value, env, lets)
        if part.conversion in _CONVERSIONS:
            value = lw.let(ir.Prim(PRIMITIVES[_CONVERSIONS[part.conversion]], [value]), lets, "text")
        spec = lw.atom(part.format_spec, env, lets) if part.format_spec is not None else ir.Const("")
        parts.append(lw.let(ir.Prim(PRIMITIVES[builtins.format], [value, spec]), lets, "text"))
    if all(isinstance(p, ir.Const) for p in parts):  # `f"text"`, a literal format spec
        return ir.Const("".join(p.value for p in parts))
    return ir.Prim(JOINED_STR, parts)


# ---------------------------------------------------------------- conditions: cases in disguise


def starred_display(lw: Lowering, node: gast.List | gast.Tuple, env: dict, lets: list) -> ir.Expr:
    """`(*xs, y)`, `[a, *xs]`: the displays between the star-expressions, and each starred sequence made
    a tuple (a list), joined by `+` left to right: `tuple(xs) + (y,)`."""
    make, convert = (
        (ir.MakeList, PRIMITIVES[list]) if isinstance(node, gast.List) else (ir.MakeTuple, PRIMITIVES[tuple])
    )
    if len(node.elts) == 1:  # `(*xs,)`: the conversion itself
        return ir.Prim(convert, [lw.atom(node.elts[0].value, env, lets)])
    pieces: list[ir.Atom] = []
    run: list[ir.Atom] = []
    for elt in node.elts:
        if not isinstance(elt, gast.Starred):
            run.append(lw.atom(elt, env, lets))
            continue
        if run:
            pieces.append(lw.let(make(run), lets, "part"))
            run = []
        pieces.append(lw.let(ir.Prim(convert, [lw.atom(elt.value, env, lets)]), lets, "part"))
    if run:
        pieces.append(lw.let(make(run), lets, "part"))
    joined = pieces[0]
    for piece in pieces[1:-1]:
        joined = lw.let(ir.Prim(OPERATORS["+"], [joined, piece]), lets, "joined")
    return ir.Prim(OPERATORS["+"], [joined, pieces[-1]])  # two pieces at least: a starred one and another


def sub_block(lw: Lowering, node: gast.expr, env: dict) -> ir.Block:
    """An expression evaluated only on one path (a branch of `a if c else b`, `and`, `or`)."""
    lets: list[ir.Let] = []
    return ir.Block(lets, lw.atom(node, env, lets))


def compare(lw: Lowering, a: ir.Atom, rest: list, env: dict, lets: list) -> ir.Expr:
    """`a < b < c` is `(a < b) and (b < c)`: b evaluated once, c only if needed."""
    op, right = rest[0]
    b = lw.atom(right, env, lets)
    first = ir.Prim(OPERATORS[COMPARISONS[type(op)]], [a, b])
    if len(rest) == 1:
        return first
    t = lw.let(first, lets, "cmp")
    then_lets: list[ir.Let] = []
    more = lw.let(compare(lw, b, rest[1:], env, then_lets), then_lets, "cmp")
    return ir.Case(t, ir.Block(then_lets, more), ir.Block([], t))


def boolop(lw: Lowering, op: gast.boolop, values: list[gast.expr], env: dict, lets: list) -> ir.Expr:
    """`a and b` is `b if a else a`; `a or b` is `a if a else b` (Python returns an operand)."""
    first = lw.atom(values[0], env, lets)
    rest_lets: list[ir.Let] = []
    if len(values) == 2:
        rest = lw.atom(values[1], env, rest_lets)
    else:
        rest_expr = boolop(lw, op, values[1:], env, rest_lets)
        rest = rest_expr if isinstance(rest_expr, (ir.Var, ir.Const, ir.Ref)) else lw.let(rest_expr, rest_lets, "bool")
    rest_block = ir.Block(rest_lets, rest)
    keep = ir.Block([], first)
    if isinstance(op, gast.And):
        return ir.Case(first, rest_block, keep)
    return ir.Case(first, keep, rest_block)
