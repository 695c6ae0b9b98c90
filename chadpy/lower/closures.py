"""Closure conversion (Section 9, Appendix C) and late binding.

A nested `def` or `lambda` becomes `MakeClosure(code, captured)`: `code` is a closed
`ir.Function` whose first parameter is the tuple of the values it captures (then
the values of its defaults), unpacked on entry; `captured` are those values where
the function value is made. Calling a function value is `Apply`. So no function of
the IR reads a variable of another, and CHAD never needs a cotangent for a function.

Python reads the variables a nested function uses from the enclosing function when
the function *runs*; a function value holds the values it captured when it was
*made*. The rule that makes the two agree:

- A function named in the enclosing scope (`def g`, `g = lambda ...`) is made where
  Python makes it when nothing it reads (the variables it uses, and those of the
  named functions it uses, transitively) can change afterwards: every later use sees
  the same values.
- Otherwise (it reads a variable assigned after the `def`, or not assigned yet, as
  ADBench's GMM objective does) it is *late*: its code is lifted at the `def` (its
  defaults evaluated there, as Python does), and its value is made again at each
  use, from the values current there. A call (`g(x)`, or `g` passed to a call) then
  sees exactly what Python's call sees. A use that keeps the value (stored, returned,
  aliased, carried by a loop or an `if`) is allowed only if none of the variables it
  reads can be assigned afterwards; otherwise it is rejected naming the variable.
- A variable the function reads that has no value where it is called is Python's
  NameError, reported as a `ChadError`.
- A late function value passed to a call, whose variables change after the call,
  is marked `transient`: type inference rejects it if the call returns it or
  returns a function it made (which Python would let read the later values), or a
  loop carries it.
- A named function used inside a comprehension reads the function's variables, not
  the comprehension's (`lw.hidden` holds the values a comprehension variable hides).
- Mutually recursive nested functions are rejected; a recursive one makes itself
  again from its own environment.

The lowerer's analyses count a use of a named function as a read of the variables it
reads (`expand`), so those are live, joined after an `if` and carried by loops.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from ..errors import ChadError, UnsupportedSyntax
from ..ir import nodes as ir
from ..read import scope
from .context import Lowering


@dataclass
class ClosureMade:
    """A function value the lowerer made: the values it captured, and every variable of the
    enclosing function it reads when it runs (through the function values it captured too)."""

    code: ir.Function
    captured: dict[str, ir.Atom]  # the enclosing function's variable -> its value when captured
    deps: dict[str, ir.Atom]  # what it reads, transitively -> the value it holds
    changing: list[str]  # a recursive function's own name, assigned again later

    @property
    def label(self) -> str:
        return self.code.name

    def check(self, lowerer: Lowering, env: dict, use: str, node: gast.AST | None) -> None:
        """A value made where Python makes it: what it reads cannot have changed since (else it
        would have been late); kept, it must not be a recursive function whose name changes."""
        for v, value in self.deps.items():
            if outer_value(lowerer, env, v) != value:  # a safety net: never reached
                raise lowerer.error(
                    UnsupportedSyntax,
                    f"`{self.label}` is used after `{v}`, which it reads, was assigned again: Python would "
                    f"use the new value, chadpy captured the old one; make `{self.label}` after the assignment "
                    f"or pass `{v}` as an argument",
                    node,
                )
        if use == "value" and self.changing:
            raise _kept_error(lowerer, self.label, self.changing[0], node)


@dataclass(eq=False)
class LateDef:
    """A nested function's code, lifted where Python makes it, with its defaults' values
    (evaluated there); `make` makes its value from the variables' current values."""

    code: ir.Function
    node: gast.FunctionDef | gast.Lambda
    defaults: list[ir.Atom]
    own_changing: bool  # recursive, and its own name is assigned again later
    named: bool  # named in the enclosing scope: it reads that scope's variables, never a comprehension's

    @property
    def label(self) -> str:
        return self.code.name

    def ready(self, lw: Lowering, env: dict) -> bool:
        """Whether its value can be made now, once: all it reads has a value that never changes."""
        deps: set[str] = set()
        for v in self.code.captured:
            atom = outer_value(lw, env, v)
            info = lw.closures.get(atom.name) if isinstance(atom, ir.Var) else None
            if atom is None or isinstance(info, LateDef):
                return False
            deps |= {v} | (set(info.deps) if info is not None else set())
        return not deps & lw.later.get(id(self.node), set())

    def make(
        self, lw: Lowering, env: dict, lets: list, node: gast.AST | None, use: str, making: tuple = ()
    ) -> tuple[ir.MakeClosure, ClosureMade]:
        """Its value, made from the values current here. `use`: "call" (called or passed to a call
        here), "value" (kept: nothing it reads may change after `node`), "def" (where Python makes it)."""
        captured: dict[str, ir.Atom] = {}
        deps: dict[str, ir.Atom] = {}
        for v in self.code.captured:
            atom = outer_value(lw, env, v) if self.named else env.get(v)
            if atom is None:
                raise _unassigned_error(lw, self.label, v, use, node)
            info = lw.closures.get(atom.name) if isinstance(atom, ir.Var) else None
            if isinstance(info, LateDef):  # a late function it calls: made here too
                if info in making or info is self:
                    raise lw.error(
                        UnsupportedSyntax,
                        f"`{self.label}` and `{info.label}` call each other before both are made: mutually "
                        "recursive nested functions are not supported (make them one function or module-level)",
                        node,
                    )
                made, info = info.make(lw, env, lets, node, use, (*making, self))
                atom = _let_made(lw, made, info, lets)
            elif isinstance(info, ClosureMade):
                info.check(lw, env, "call", node)
            captured[v] = deps[v] = atom
            deps.update(info.deps if isinstance(info, ClosureMade) else {})
        after = lw.later.get(id(node), lw.locals) if node is not None else lw.locals
        changing = sorted(set(deps) & after) + ([self.code.name] if self.own_changing else [])
        if changing and use == "value":
            raise _kept_error(lw, self.label, changing[0], node)
        if changing:
            self.code.transient = True  # passed to a call: it must not outlive it
        made = ir.MakeClosure(self.code, list(captured.values()) + self.defaults)
        return made, ClosureMade(self.code, captured, deps, [self.code.name] if self.own_changing else [])


def outer_value(lw: Lowering, env: dict, v: str) -> ir.Atom | None:
    """The value of the enclosing function's variable `v` here (not a comprehension's of that name)."""
    return lw.hidden[v] if v in lw.hidden else env.get(v)


def _kept_error(lw: Lowering, label: str, v: str, node: gast.AST | None) -> ChadError:
    if v == label:
        return lw.error(
            UnsupportedSyntax,
            f"`{label}` calls itself by its name, which is assigned again later, and is kept here: Python's "
            f"`{label}` would call the later function when it runs; give the two functions different names",
            node,
        )
    return lw.error(
        UnsupportedSyntax,
        f"`{label}` reads `{v}`, which is assigned again later (e.g. by a loop), and is kept "
        f"(stored, returned or carried past this point): Python would use the later value of `{v}` when "
        f"it runs, chadpy captures values when a function is kept. Bind the value now with a default "
        f"parameter, `lambda ..., {v}={v}: ...`, or call it right away",
        node,
    )


def _unassigned_error(lw: Lowering, label: str, v: str, use: str, node: gast.AST | None) -> ChadError:
    if use == "call":
        return lw.error(
            ChadError,
            f"`{label}` reads `{v}`, which has no value where `{label}` is called here: Python raises "
            f"NameError (cannot access free variable `{v}`); assign `{v}` before the call",
            node,
        )
    return lw.error(
        UnsupportedSyntax,
        f"`{label}` reads `{v}`, which has no value where `{label}` is made or kept here; chadpy captures "
        f"the values a kept function reads: assign `{v}` before this line",
        node,
    )


def define(
    lw: Lowering, node: gast.FunctionDef | gast.Lambda, env: dict, lets: list, label: str, named: bool
) -> LateDef:
    """A nested `def` or `lambda` (named `label` in generated code) where Python makes it: its
    closed code and its defaults' values."""
    label = node.name if isinstance(node, gast.FunctionDef) else label
    own_name = node.name if isinstance(node, gast.FunctionDef) else None
    free = scope.free_names(node)
    captured = sorted(v for v in free - {own_name} if v in env or v in lw.locals or v in lw.hidden)
    defaults = [lw.atom(d, env, lets) for d in node.args.defaults]
    params = scope.parameters(node)  # positional only: fence rejects keyword-only ones here
    code = ir.Function(
        label,
        [],
        ir.Block([], ir.Const(None)),
        lw.parsed.loc(node),
        None,
        tuple(captured),
        defaults=tuple(params[len(params) - len(defaults) :]),
    )
    recursive = own_name if own_name in free else None
    lift_nested(lw.nested(node), code, recursive)
    own_changing = recursive is not None and recursive in lw.later.get(id(node), set())
    code.transient = own_changing
    return LateDef(code, node, defaults, own_changing, named)


def make_closure(
    lw: Lowering, node: gast.Lambda, env: dict, lets: list, use: str = "value"
) -> tuple[ir.MakeClosure, ClosureMade]:
    """A lambda written where it is used (kept, or passed to a call), made there."""
    return define(lw, node, env, lets, "lambda", named=False).make(lw, env, lets, node, use)


def name_closure(lw: Lowering, user_name: str, node: gast.FunctionDef | gast.Lambda, env: dict, lets: list) -> None:
    """`def g(...)` or `g = lambda ...`: made here if nothing it reads can change later, else late
    (made at each use; `env` then holds a name no code binds, which `current` replaces)."""
    d = define(lw, node, env, lets, user_name, named=True)
    if d.ready(lw, env):
        made, info = d.make(lw, env, lets, node, "def")
        name = lw.bind(user_name, env)
        lets.append(ir.Let(name, made, lw.loc))
        lw.closures[name] = info
        return
    pending = lw.names.fresh(user_name + "_late")
    env[user_name] = ir.Var(pending)
    lw.closures[pending] = d


def current(lw: Lowering, env: dict, name: str, lets: list, node: gast.AST | None, use: str = "value") -> ir.Atom:
    """The value of the variable `name` here, for a use of kind `use` (see `Def.make`): a late
    function is made here; a function value made before is checked."""
    value = env[name]
    info = lw.closures.get(value.name) if isinstance(value, ir.Var) else None
    if isinstance(info, LateDef):
        made, closure = info.make(lw, env, lets, node, use)
        value = _let_made(lw, made, closure, lets)
    elif info is not None:
        info.check(lw, env, use, node)
    return value


def _let_made(lw: Lowering, made: ir.MakeClosure, info: ClosureMade, lets: list) -> ir.Var:
    """Bind a late function's value made here, under its own name where it is free."""
    name = lw.bind(info.label, {})
    lets.append(ir.Let(name, made, lw.loc))
    lw.closures[name] = info
    return ir.Var(name)


def expand(lw: Lowering, names: set[str]) -> set[str]:
    """`names`, with what the functions this scope names (among them) read when they run."""
    reads = lw.function_reads
    return names.union(*(reads[n] for n in names if n in reads))


def lift_nested(lw: Lowering, code: ir.Function, own_name: str | None) -> None:
    """Fill in `code`, the closed form of this nested function (Appendix C's closure
    conversion): its first parameter is the tuple of the values it captured (its
    `code.captured`, then the defaults of its `code.defaults`), unpacked on entry."""
    env_param = lw.names.fresh("env")
    env: dict[str, ir.Atom] = {}
    lets: list[ir.Let] = []
    captured = list(code.captured)
    lw.locals |= set(captured)
    targets = tuple(lw.bind(v, env) for v in captured)
    targets += tuple(lw.names.fresh("default_" + p) for p in code.defaults)  # read by the caller
    if len(targets) == 1:
        lets.append(ir.Let(targets[0], ir.Proj(ir.Var(env_param), ir.Const(0)), lw.loc))
    elif targets:
        lets.append(ir.Let(targets, ir.Var(env_param), lw.loc))
    own = scope.parameters(lw.node)
    for p in own:
        lw.bind(p, env)
    if own_name is not None:  # a recursive def: itself, made again from its own environment (defaults too)
        itself = ir.MakeClosure(code, [ir.Var(t) for t in targets])
        lets.append(ir.Let(lw.bind(own_name, env), itself, lw.loc))
    body = lw.body(env)
    body.lets[:0] = lets
    code.params = [env_param, *own]
    code.body = body


def keyword_arguments(lw: Lowering, fn: ir.Atom, args: list, node: gast.Call, env: dict, lets: list) -> list:
    """All arguments, by position, of a call with keywords of a nested function made here
    (whose parameters are known): a default not given is read from the function value."""
    info = lw.closures.get(fn.name) if isinstance(fn, ir.Var) else None
    if info is None:
        raise lw.error(
            UnsupportedSyntax,
            "keyword arguments are supported in calls of a nested function by the name it was made "
            "under, not of other function values",
            node,
        )
    code = info.code
    given = dict(zip(code.params[1:], args))
    for k in node.keywords:
        if k.arg not in code.params[1:] or k.arg in given:
            raise lw.error(ChadError, f"`{info.label}` got an unexpected or repeated argument `{k.arg}`", node)
        given[k.arg] = lw.argument(k.value, env, lets)
    out = []
    for p in code.params[1:]:
        if p in given:
            out.append(given[p])
        elif p in code.defaults:
            default = ir.EnvRead(fn, ir.Const(len(code.captured) + code.defaults.index(p)))
            out.append(lw.let(default, lets, "default_" + p))
        else:
            raise lw.error(ChadError, f"`{info.label}` is missing its argument `{p}`", node)
    return out
