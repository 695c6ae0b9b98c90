"""Closure conversion (Section 9, Appendix C) and the late-binding check.

A nested `def` or `lambda` becomes `MakeClosure(code, captured)`: `code` is a closed
`ir.Function` whose first parameter is the tuple of the values it captures (then
the values of its defaults), unpacked on entry; `captured` are those values where
the function is made. Calling a function value is `Apply`. So no function of the
IR reads a variable of another, and CHAD never needs a cotangent for a function.

Python reads a captured variable when the function *runs*; chadpy captures its
value when the function is *made*. The two agree unless the variable is assigned
again in between; `Closure.check` allows exactly the uses where they agree and
rejects the rest with a message saying how to bind the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import gast

from . import ir, scope
from .errors import ChadError, UnsupportedSyntax

if TYPE_CHECKING:
    from .lower import Lowerer


@dataclass
class Closure:
    """What the lowerer knows of a function value it made: the values it captured."""

    code: ir.Function
    captured: dict[str, ir.Atom]  # the enclosing function's variable -> its value when captured
    changing: list[str]  # captured variables the enclosing function assigns again later

    @property
    def label(self) -> str:
        return self.code.name

    def check(self, lowerer: Lowerer, env: dict, use: str, node: gast.AST) -> None:
        """Python reads a captured variable when the function runs; chadpy captured it when the
        function was made. Both agree where the variable has not changed since: allow only that."""
        if not self.changing:
            return  # nothing it captures is ever assigned again
        for v, value in self.captured.items():
            if env.get(v) != value:
                raise lowerer.error(
                    UnsupportedSyntax,
                    f"`{self.label}` is used after `{v}`, which it reads, was assigned again: Python would "
                    f"use the new value, chadpy captured the old one; make `{self.label}` after the assignment "
                    f"or pass `{v}` as an argument",
                    node,
                )
        if use == "value":
            v = self.changing[0]
            raise lowerer.error(
                UnsupportedSyntax,
                f"`{self.label}` reads `{v}`, which is assigned again later (e.g. by a loop), and is kept "
                f"(stored or returned): Python would use the later value of `{v}` when it runs, chadpy "
                f"captures values when a function is made. Bind the value now with a default parameter, "
                f"`lambda ..., {v}={v}: ...`, or call it right away",
                node,
            )


def make_closure(
    lw: Lowerer, node: gast.FunctionDef | gast.Lambda, env: dict, lets: list, label: str = "lambda"
) -> tuple[ir.MakeClosure, Closure]:
    """A nested `def` or `lambda` (named `label` in generated code), closure-converted: its
    closed code and the values it captures now."""
    label = node.name if isinstance(node, gast.FunctionDef) else label
    own_name = node.name if isinstance(node, gast.FunctionDef) else None
    free = scope.free_names(node)
    captured = sorted(v for v in free - {own_name} if v in env or v in lw.locals)
    for v in captured:
        if v not in env:
            raise lw.error(
                UnsupportedSyntax,
                f"`{label}` reads `{v}`, which is not assigned where `{label}` is made; chadpy captures "
                "values when a function is made (and nested functions calling each other are not supported)",
                node,
            )
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
    lift(type(lw)(lw.parsed, lw.watch, node), code, own_name if own_name in free else None)
    later = lw.later.get(id(node), set())
    changing = [v for v in [*captured, own_name] if v in later]
    code.transient = bool(changing)
    made = ir.MakeClosure(code, [env[v] for v in captured] + defaults)
    return made, Closure(code, {v: env[v] for v in captured}, changing)


def lift(lw: Lowerer, code: ir.Function, own_name: str | None) -> None:
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


def keyword_arguments(lw: Lowerer, fn: ir.Atom, args: list, node: gast.Call, env: dict, lets: list) -> list:
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


# ------------------------------------------------------------ builtins that take functions
# Each is a loop (a comprehension), as `functools.reduce` is: the paper's fold.


def name_closure(lw: Lowerer, user_name: str, node: gast.FunctionDef | gast.Lambda, env: dict, lets: list) -> None:
    """`def g(...)` or `g = lambda ...`: g holds the function value; its uses are checked."""
    made, info = make_closure(lw, node, env, lets, user_name)
    name = lw.bind(user_name, env)
    lets.append(ir.Let(name, made, lw.loc))
    lw.closures[name] = info
