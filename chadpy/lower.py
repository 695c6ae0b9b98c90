"""Lowering: gast -> core IR (A-normal form, SSA names).

Statements are lowered left to right with an environment from the user's names
to their current SSA names. Control flow becomes `Case`:

- an `if` whose branches both fall through joins the variables they assign (and
  that are read later) into a tuple: `let <w, v> = case c of {...}`;
- an `if` with a `return` in a branch takes the rest of the block into both
  branches (a branch that always returns simply never reaches it), so early
  returns need no flags.

Loops become `Loop`s over the variables they carry (those assigned in the body
and read later); `break`, `continue` and `return` inside a loop end the body with
a status (0 go on, 1 break, 2 return) that is part of the state, so they need no
exceptions and no flags in the user's sense. `for x in xs` counts positions and
reads `xs[k]` (a one-hot cotangent per element, Section 7), comprehensions and
`functools.reduce` are loops that build or fold, and `xs.append(v)` is allowed on
a list the function itself created and nobody else holds.

Names of outside objects (module constants, `math.sin`, other user functions)
are resolved here: a call becomes a `Prim` if the primitive table knows the
callee, a `Call` if the callee is a Python function with readable source, and an
`UnknownFunction` error otherwise; never a silent zero.
"""

from __future__ import annotations

import builtins
import inspect
import types
from dataclasses import dataclass

import gast
import numpy as np

from . import ir, scope
from .errors import ChadError, Loc, UnknownFunction, UnsupportedSyntax
from .fence import fence
from .kinds import fixed
from .names import NameSupply
from .primitives import ATTRIBUTES, METHODS, OPERATORS, PRIMITIVES, Primitive, lookup
from .rules.scalar import BINARY_FOLDS
from .rules.sequences import ARGBEST, ARGSORT, DICT_KEYS, LIST_APPEND, OVER_SEQUENCE, POSITIONS, REDUCE
from .runtime import check
from .source import ParsedFunction, Watch, is_missing, parse_function
from .target import CallX, Obj
from .vtypes import OBJECT

_BINOPS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.Pow: "**",
    gast.Mod: "%",
    gast.FloorDiv: "//",
    gast.MatMult: "@",
}
_CMPOPS = {
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
_COMPARE_NAMES = {"lt", "le", "gt", "ge", "eq", "ne", "is", "is_not", "in", "not_in", "not"}
_UNOPS = {gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not"}
RANGE = PRIMITIVES[builtins.range]
# Builtins that read the calling frame: never run as data (they could see values a derivative flows through).
_FRAME_READERS = (eval, exec, compile, globals, locals, vars)


def lower_function(fn: types.FunctionType, watch: Watch) -> ir.Function:
    """Parse, fence and lower a Python function to the core IR."""
    parsed = parse_function(fn)
    fence(parsed)
    return _Lowerer(parsed, watch).function()


def lower_primitive(fn: object, arity: int) -> ir.Function:
    """A primitive used as a function value (`integrate(math.sin, 0.0, x)`): `def sin(x0): return sin(x0)`."""
    prim = lookup(fn)
    if prim is None:
        name = getattr(fn, "__name__", type(fn).__name__)
        raise UnknownFunction(f"no derivative rule for `{name}` and no Python source to differentiate")
    least, most = prim.nargs
    loc = Loc("<chadpy primitive>", 0, prim.name, "")
    if arity < least or most is not None and arity > most:
        raise ChadError(f"`{prim.name}` as a function value called with {arity} arguments", loc)
    params = [f"x{k}" for k in range(arity)]
    body = ir.Block([ir.Let("y", with_defaults(prim, [ir.Var(p) for p in params]), loc)], ir.Var("y"))
    return ir.Function(prim.name.split(".")[-1], params, body, loc, fn)


@dataclass
class _LoopExits:
    """How the body of the loop being lowered ends: each path yields the next state."""

    state: list[str]  # the user's names of the state variables
    status: str | None  # the state variable holding 0 (go on), 1 (break) or 2 (return)
    retval: str | None  # the state variable holding the returned value

    def finish(self, lowerer: _Lowerer, env: dict, lets: list, status: int, retval: ir.Atom | None = None):
        items = [env[v] for v in self.state]
        if self.status is not None:
            items.insert(0, ir.Const(status))
        if self.retval is not None:
            items.append(retval if retval is not None else ir.Var(self.retval))
        t = lowerer.names.fresh("state")
        lets.append(ir.Let(t, ir.MakeTuple(items), lowerer.loc))
        return ir.Block(lets, ir.Var(t))


@dataclass
class _Closure:
    """What the lowerer knows of a function value it made: the values it captured."""

    code: ir.Function
    captured: dict[str, ir.Atom]  # the enclosing function's variable -> its value when captured
    changing: list[str]  # captured variables the enclosing function assigns again later

    @property
    def label(self) -> str:
        return self.code.name

    def check(self, lowerer: _Lowerer, env: dict, use: str, node: gast.AST) -> None:
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


class _Lowerer:
    def __init__(self, parsed: ParsedFunction, watch: Watch, node: gast.FunctionDef | gast.Lambda | None = None):
        self.parsed = parsed
        self.watch = watch
        self.node = node if node is not None else parsed.tree
        all_names = {n.id for n in gast.walk(self.node) if isinstance(n, gast.Name)}
        self.names = NameSupply(all_names)
        body = scope.function_body(self.node)
        self.locals = scope.assigned(body) | set(scope.parameters(self.node))
        self.later = scope.assigned_later(body)  # per function made here: names assigned after it
        self.closures: dict[str, _Closure] = {}  # SSA name -> the function value it holds
        self.loc = parsed.loc(self.node)
        self.bound: set[str] = set()  # user names already used as an SSA name
        self.loops: list[_LoopExits] = []  # the loops being lowered, innermost last

    def error(self, cls: type[ChadError], message: str, node: gast.AST | None = None) -> ChadError:
        return cls(message, self.parsed.loc(node) if node is not None else self.loc)

    # ------------------------------------------------------------ statements

    def function(self) -> ir.Function:
        params = scope.parameters(self.node)
        env = {p: ir.Var(p) for p in params}
        self.bound.update(params)
        body = self.block(scope.function_body(self.node), env, _return_none, set())
        name = self.parsed.name.strip("<>")  # a lambda passed in is `lambda`
        return ir.Function(name, params, body, self.loc, self.parsed.pyfunc)

    def lifted(self, code: ir.Function, own_name: str | None) -> None:
        """Fill in `code`, the closed form of this nested function (Appendix C's closure
        conversion): its first parameter is the tuple of the values it captured (its
        `code.captured`, then the defaults of its `code.defaults`), unpacked on entry."""
        env_param = self.names.fresh("env")
        env: dict[str, ir.Atom] = {}
        lets: list[ir.Let] = []
        captured = list(code.captured)
        self.locals |= set(captured)
        targets = tuple(self.bind(v, env) for v in captured)
        targets += tuple(self.names.fresh("default_" + p) for p in code.defaults)  # read by the caller
        if len(targets) == 1:
            lets.append(ir.Let(targets[0], ir.GetItem(ir.Var(env_param), ir.Const(0)), self.loc))
        elif targets:
            lets.append(ir.Let(targets, ir.Var(env_param), self.loc))
        own = scope.parameters(self.node)
        for p in own:
            self.bind(p, env)
        if own_name is not None:  # a recursive def: itself, made again from its own environment (defaults too)
            itself = ir.MakeClosure(code, [ir.Var(t) for t in targets])
            lets.append(ir.Let(self.bind(own_name, env), itself, self.loc))
        body = self.block(scope.function_body(self.node), env, _return_none, set())
        body.lets[:0] = lets
        code.params = [env_param, *own]
        code.body = body

    def closure(
        self, node: gast.FunctionDef | gast.Lambda, env: dict, lets: list, label: str = "lambda"
    ) -> tuple[ir.MakeClosure, _Closure]:
        """A nested `def` or `lambda` (named `label` in generated code), closure-converted: its
        closed code and the values it captures now."""
        label = node.name if isinstance(node, gast.FunctionDef) else label
        own_name = node.name if isinstance(node, gast.FunctionDef) else None
        free = scope.free_names(node)
        captured = sorted(v for v in free - {own_name} if v in env or v in self.locals)
        for v in captured:
            if v not in env:
                raise self.error(
                    UnsupportedSyntax,
                    f"`{label}` reads `{v}`, which is not assigned where `{label}` is made; chadpy captures "
                    "values when a function is made (and nested functions calling each other are not supported)",
                    node,
                )
        defaults = [self.atom(d, env, lets) for d in node.args.defaults]
        params = scope.parameters(node)  # positional only: fence rejects keyword-only ones here
        code = ir.Function(
            label,
            [],
            ir.Block([], ir.Const(None)),
            self.parsed.loc(node),
            None,
            tuple(captured),
            defaults=tuple(params[len(params) - len(defaults) :]),
        )
        _Lowerer(self.parsed, self.watch, node).lifted(code, own_name if own_name in free else None)
        later = self.later.get(id(node), set())
        changing = [v for v in [*captured, own_name] if v in later]
        code.transient = bool(changing)
        made = ir.MakeClosure(code, [env[v] for v in captured] + defaults)
        return made, _Closure(code, {v: env[v] for v in captured}, changing)

    def block(self, stmts: list[gast.stmt], env: dict[str, ir.Atom], fall_through, live_out: set[str]) -> ir.Block:
        """Lower `stmts`; `fall_through(env, lets)` ends the block if control reaches its end.

        `live_out`: the names read after the block (by the statements that follow it).
        """
        lets: list[ir.Let] = []
        for i, stmt in enumerate(stmts):
            self.loc = self.parsed.loc(stmt)
            rest = stmts[i + 1 :]
            if isinstance(stmt, gast.Return):
                result = self.atom(stmt.value, env, lets) if stmt.value is not None else ir.Const(None)
                return self.exit_return(result, env, lets)
            if isinstance(stmt, (gast.Break, gast.Continue)):
                return self.loops[-1].finish(self, env, lets, 1 if isinstance(stmt, gast.Break) else 0)
            if isinstance(stmt, gast.If):
                cond = self.atom(stmt.test, env, lets)
                if scope.may_exit(stmt.body) or scope.may_exit(stmt.orelse):
                    # the rest of the block goes into both branches (early return, break, continue)
                    then = self.block(stmt.body + rest, dict(env), fall_through, live_out)
                    orelse = self.block(stmt.orelse + rest, dict(env), fall_through, live_out)
                    return self.case_result(cond, then, orelse, lets, stmt)
                self.join_if(stmt, cond, env, lets, live=self.live(rest, live_out))
                continue
            if isinstance(stmt, (gast.For, gast.While)):
                returned = self.loop(stmt, env, lets, live=self.live(rest, live_out))
                if returned is not None:  # a `return` inside the loop: leave here too if it ran
                    status, retval = returned
                    loc = self.parsed.loc(stmt)
                    cond = self._bind(ir.Prim(OPERATORS["=="], [ir.Var(status), ir.Const(2)]), lets, "returned")
                    then = self.exit_return(ir.Var(retval), dict(env), [])
                    self.loc = loc
                    orelse = self.block(rest, dict(env), fall_through, live_out)
                    return self.case_result(cond, then, orelse, lets, stmt)
                continue
            self.statement(stmt, env, lets)
        return fall_through(env, lets)

    def live(self, rest: list[gast.stmt], live_out: set[str]) -> set[str]:
        """The names read after a statement, `rest` being the statements after it in its block (inside
        a loop's body, leaving it by `break`, `continue` or `return` reads the loop's state)."""
        state = set(self.loops[-1].state) if self.loops else None
        return scope.live_in(rest, live_out, (state, state, state) if state is not None else None)

    def case_result(self, cond: ir.Atom, then: ir.Block, orelse: ir.Block, lets: list, stmt: gast.AST) -> ir.Block:
        result = self.names.fresh("result")
        lets.append(ir.Let(result, ir.Case(cond, then, orelse), self.parsed.loc(stmt)))
        return ir.Block(lets, ir.Var(result))

    def exit_return(self, result: ir.Atom, env: dict, lets: list) -> ir.Block:
        if self.loops:  # inside a loop: end the iteration with status 2
            return self.loops[-1].finish(self, env, lets, 2, result)
        return ir.Block(lets, result)

    # ------------------------------------------------------------ loops

    def loop(self, stmt: gast.For | gast.While, env: dict, lets: list, live: set[str]) -> tuple[str, str] | None:
        """Lower a loop into `let <state> = loop ...`; return (status, retval) if it may `return`."""
        loc = self.parsed.loc(stmt)
        assigned = scope.assigned(stmt.body)
        if isinstance(stmt, gast.For):
            assigned |= {n.id for n in gast.walk(stmt.target) if isinstance(n, gast.Name)}
        reads = scope.read(stmt.body) | (scope.read([gast.Expr(stmt.test)]) if isinstance(stmt, gast.While) else set())
        state = sorted(v for v in assigned if (v in live or v in reads) and (v in env or v in live))
        returns = scope.returns(stmt.body)
        stops = returns or scope.breaks(stmt.body, (gast.Break,))

        seq = binder = None
        if isinstance(stmt, gast.For):
            seq, binder = self.iteration(stmt, env, lets)
        init = [env.get(v, ir.Const(None)) for v in state]
        body_env = dict(env)
        params = [self.bind(v, body_env) for v in state]
        status = self.names.fresh("status") if stops else None
        retval = self.names.fresh("retval") if returns else None
        exits = _LoopExits(state, status, retval)

        prelude: list[ir.Let] = []
        index = None
        if binder is not None:
            self.loc = loc
            index = binder(body_env, prelude)
        test = None
        if isinstance(stmt, gast.While):
            self.loc = loc
            test_lets: list[ir.Let] = []
            test = ir.Block(test_lets, self.atom(stmt.test, body_env, test_lets))
        self.loops.append(exits)
        body = self.block(stmt.body, body_env, lambda e, lt: exits.finish(self, e, lt, 0), set(state))
        self.loops.pop()
        self.loc = loc
        body.lets[:0] = prelude

        all_params = ([status] if status else []) + params + ([retval] if retval else [])
        all_init = ([ir.Const(0)] if status else []) + init + ([ir.Const(None)] if retval else [])
        last = body.lets[-1] if body.lets else None
        if (
            last is not None
            and isinstance(body.result, ir.Var)
            and last.target == body.result.name
            and isinstance(last.expr, ir.MakeTuple)
        ):
            body.lets.pop()
            nxt = list(last.expr.items)
        else:
            names = tuple(self.names.fresh("next") for _ in all_params)
            if len(names) == 1:  # a one-tuple: take its element
                body.lets.append(ir.Let(names[0], ir.GetItem(body.result, ir.Const(0)), loc))
            elif names:
                body.lets.append(ir.Let(names, body.result, loc))
            nxt = [ir.Var(n) for n in names]
        body.result = ir.Const(None)

        outputs = ([self.names.fresh("status")] if status else []) + [self.bind(v, env) for v in state]
        outputs += [self.names.fresh("retval")] if retval else []
        expr = ir.Loop(all_params, all_init, index, seq, test, body, nxt, nxt[0] if status else None)
        target = outputs[0] if len(outputs) == 1 else tuple(outputs) if outputs else self.names.fresh("_")
        lets.append(ir.Let(target, expr, loc))
        return (outputs[0], outputs[-1]) if returns else None

    def iteration(self, stmt: gast.For, env: dict, lets: list):
        """What a `for` loop counts (a discrete sequence) and how it binds its target from the count."""
        if hasattr(stmt, "chad_iteration"):  # synthesised by a comprehension or reduce
            return stmt.chad_iteration
        it, target = stmt.iter, stmt.target
        named = self.callee(it.func, env) if isinstance(it, gast.Call) else None
        fn = named[1] if named else None
        if fn is builtins.range:
            seq = self._bind(self.prim_call(RANGE, "range", it, env, lets), lets, "indices")
            if isinstance(target, gast.Name):
                return seq, lambda body_env, prelude: self.bind(target.id, body_env)
            return seq, self._binder(target, lambda k, prelude: ir.Var(k))
        if fn in (builtins.enumerate, builtins.zip):
            if it.keywords and fn is builtins.zip:
                raise self.error(UnsupportedSyntax, "keyword arguments to `zip` are not supported", it)
            args = [self.atom(a, env, lets) for a in it.args]
            start = args[1] if fn is builtins.enumerate and len(args) > 1 else None
            if it.keywords:
                start = self.atom(it.keywords[0].value, env, lets)
            seqs = args[:1] if fn is builtins.enumerate else args
            lens = [self._bind(ir.Prim(PRIMITIVES[len], [a]), lets, "n") for a in seqs]
            n = lens[0]
            for m in lens[1:]:
                n = self._bind(ir.Prim(PRIMITIVES[min], [n, m]), lets, "n")
            seq = self._bind(ir.Prim(RANGE, [n]), lets, "indices")
            if not isinstance(target, gast.Tuple) or len(target.elts) != (2 if fn is builtins.enumerate else len(seqs)):
                raise self.error(UnsupportedSyntax, "unpack each element of this loop into a tuple of names", target)

            def parts(k: str, prelude: list) -> list[ir.Atom]:
                # positions 0..n-1 of each sequence (a dict here fails loudly: it has no position k)
                items = [self._bind(ir.GetItem(a, ir.Var(k), natural=True), prelude, "item") for a in seqs]
                if fn is builtins.zip:
                    return items
                i = (
                    ir.Var(k)
                    if start is None
                    else self._bind(ir.Prim(OPERATORS["+"], [ir.Var(k), start]), prelude, "i")
                )
                return [i, items[0]]

            return seq, self._binder(target, parts, unpack=False)
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and self.is_local(it.func.value, env):
            method = it.func.attr
            if method in ("items", "keys", "values") and not it.args:
                d = self.atom(it.func.value, env, lets)
                seq = self._bind(ir.Prim(DICT_KEYS, [d]), lets, "keys")
                if method == "keys":
                    return seq, self._binder(target, lambda k, prelude: ir.Var(k))
                if method == "values":
                    return seq, self._binder(
                        target, lambda k, prelude: self._bind(ir.GetItem(d, ir.Var(k)), prelude, "v")
                    )
                return seq, self._binder(
                    target, lambda k, prelude: [ir.Var(k), self._bind(ir.GetItem(d, ir.Var(k)), prelude, "v")], False
                )
        xs = self.atom(it, env, lets)
        seq = self._bind(ir.Prim(POSITIONS, [xs]), lets, "positions")
        return seq, self._binder(
            target, lambda k, prelude: self._bind(ir.GetItem(xs, ir.Var(k), natural=True, of_loop=True), prelude, "x")
        )

    def _binder(self, target: gast.AST, element, unpack: bool = True):
        """Bind the loop target from a fresh counter k: `element(k, prelude)` gives the value(s)."""

        def bind(body_env: dict, prelude: list) -> str:
            k = self.names.fresh("k")
            value = element(k, prelude)
            if unpack:
                self.assign(target, value, body_env, prelude)
            else:
                for elt, atom in zip(target.elts, value):
                    self.assign(elt, atom, body_env, prelude)
            return k

        return bind

    def join_if(self, stmt: gast.If, cond: ir.Atom, env: dict, lets: list, live: set[str]) -> None:
        """An `if` whose branches both fall through: join the live variables they assign."""
        joined = sorted((scope.assigned(stmt.body) | scope.assigned(stmt.orelse)) & live)
        loc = self.parsed.loc(stmt)

        def finish(branch_env: dict, branch_lets: list) -> ir.Block:
            for v in joined:
                if v not in branch_env:
                    raise self.error(
                        UnsupportedSyntax, f"variable `{v}` is not assigned on every path through this `if`", stmt
                    )
            if len(joined) == 1:
                return ir.Block(branch_lets, branch_env[joined[0]])
            if not joined:
                return ir.Block(branch_lets, ir.Const(None))
            t = self.names.fresh("joined")
            branch_lets.append(ir.Let(t, ir.MakeTuple([branch_env[v] for v in joined]), loc))
            return ir.Block(branch_lets, ir.Var(t))

        then = self.block(stmt.body, dict(env), finish, live)
        orelse = self.block(stmt.orelse, dict(env), finish, live)
        case = ir.Case(cond, then, orelse)
        if len(joined) == 1:
            lets.append(ir.Let(self.bind(joined[0], env), case, loc))
        elif joined:
            lets.append(ir.Let(tuple(self.bind(v, env) for v in joined), case, loc))
        else:
            lets.append(ir.Let(self.names.fresh("_"), case, loc))

    def statement(self, stmt: gast.stmt, env: dict, lets: list) -> None:
        loc = self.loc
        if isinstance(stmt, gast.FunctionDef):
            self.name_closure(stmt.name, stmt, env, lets)
            return
        if isinstance(stmt, (gast.Assign, gast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], gast.Name) and isinstance(stmt.value, gast.Lambda):
                self.name_closure(targets[0].id, stmt.value, env, lets)
                return
            if len(targets) == 1 and isinstance(targets[0], gast.Name):
                value = self.expr(stmt.value, env, lets)
                lets.append(ir.Let(self.bind(targets[0].id, env), value, loc))
                return
            value = self.atom(stmt.value, env, lets)
            for target in targets:  # a = b = e binds both to the same value
                self.assign(target, value, env, lets)
        elif isinstance(stmt, gast.AugAssign):
            name = stmt.target.id
            current = self.read(name, env, stmt.target)
            op = OPERATORS[_BINOPS[type(stmt.op)]] if type(stmt.op) in _BINOPS else None
            if op is None:
                raise self.error(UnsupportedSyntax, f"augmented `{type(stmt.op).__name__}` is not supported", stmt)
            value = ir.Prim(op, [current, self.atom(stmt.value, env, lets)], inplace=True)
            lets.append(ir.Let(self.bind(name, env), value, loc))
        elif isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return  # a docstring
            if scope.appended(stmt.value):
                self.append(stmt.value, env, lets)
                return
            lets.append(ir.Let(self.names.fresh("_"), self.expr(stmt.value, env, lets), loc))
        elif isinstance(stmt, gast.Assert):
            args = [self.atom(stmt.test, env, lets)]
            if stmt.msg is not None:
                args.append(self.atom(stmt.msg, env, lets))
            lets.append(ir.Let(self.names.fresh("_"), ir.Prim(PRIMITIVES[check], args), loc))
        elif isinstance(stmt, gast.Pass):
            return
        else:  # fence rejected everything else
            raise self.error(UnsupportedSyntax, f"`{type(stmt).__name__}` is not supported", stmt)

    def name_closure(self, user_name: str, node: gast.FunctionDef | gast.Lambda, env: dict, lets: list) -> None:
        """`def g(...)` or `g = lambda ...`: g holds the function value; its uses are checked."""
        made, info = self.closure(node, env, lets, user_name)
        name = self.bind(user_name, env)
        lets.append(ir.Let(name, made, self.loc))
        self.closures[name] = info

    def append(self, node: gast.Call, env: dict, lets: list) -> None:
        """`xs.append(v)`: xs becomes a new SSA name for the same (mutated) list."""
        name = node.func.value.id
        xs = self.read(name, env, node.func.value)
        if len(node.args) != 1 or node.keywords:
            raise self.error(UnsupportedSyntax, "`append` takes one argument", node)
        v = self.atom(node.args[0], env, lets)
        lets.append(ir.Let(self.bind(name, env), ir.Prim(LIST_APPEND, [xs, v], inplace=True), self.loc))

    def assign(self, target: gast.AST, value: ir.Atom, env: dict, lets: list) -> None:
        if isinstance(target, gast.Name):
            lets.append(ir.Let(self.bind(target.id, env), value, self.loc))
            return
        # tuple unpacking: one destructuring let, then nested targets
        names = []
        nested = []
        for elt in target.elts:
            if isinstance(elt, gast.Name):
                names.append(self.bind(elt.id, env))
            else:
                tmp = self.names.fresh("unpacked")
                names.append(tmp)
                nested.append((elt, ir.Var(tmp)))
        lets.append(ir.Let(tuple(names), value, self.loc))
        for elt, atom in nested:
            self.assign(elt, atom, env, lets)

    def bind(self, user_name: str, env: dict) -> str:
        """A fresh SSA name for an assignment to `user_name`."""
        name = self.names.fresh(user_name) if user_name in self.bound else user_name
        self.bound.add(name)
        env[user_name] = ir.Var(name)
        return name

    def read(self, name: str, env: dict, node: gast.AST, use: str = "value") -> ir.Expr:
        """The value of a name. `use`: "call" where a function value is called or passed to a
        call (used right away), "value" anywhere else (it may be kept)."""
        if name in env:
            value = env[name]
            if isinstance(value, ir.Var) and value.name in self.closures:
                self.closures[value.name].check(self, env, use, node)
            return value
        if name in self.locals:
            raise self.error(UnsupportedSyntax, f"local variable `{name}` may be used before it is assigned", node)
        value = self.parsed.resolve(name, self.watch)
        if is_missing(value):
            raise self.error(ChadError, f"name `{name}` is not defined", node)
        return self.outside(name, value, node)

    def outside(self, path: str, value: object, node: gast.AST) -> ir.Expr:
        """An outside object used as a value: plain data, read as a constant, or a function
        (a function value with nothing captured: its code is read where it is called)."""
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return ir.Ref(path, value)
        if isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) for v in value):
            return ir.Ref(path, value)
        value = getattr(value, "__chad_wrapped__", value)
        if isinstance(value, type):
            return ir.Ref(path, value)  # a class: data (`isinstance(v, float)`)
        if isinstance(value, types.FunctionType) or lookup(value) is not None:
            return ir.MakeClosure(value, [])
        kind = "a function chadpy has no rule for" if callable(value) else f"a {type(value).__name__}"
        raise self.error(UnsupportedSyntax, f"`{path}` is {kind}; using it as a value is not supported", node)

    # ------------------------------------------------------------ expressions

    def atom(self, node: gast.expr, env: dict, lets: list, hint: str = "t") -> ir.Atom:
        e = self.expr(node, env, lets)
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return e
        if isinstance(e, ir.Prim):
            hint = "cond" if e.op.discrete and e.op.name in _COMPARE_NAMES else e.op.name.split(".")[-1]
        elif isinstance(e, ir.Call):
            hint = e.fn.__name__
        elif isinstance(e, ir.MakeClosure):
            hint = ir.code_name(e.code).strip("<>")
        elif isinstance(e, ir.Apply):
            hint = e.fn.name if isinstance(e.fn, ir.Var) else "applied"
        elif isinstance(e, ir.Case):
            hint = "case"
        elif isinstance(e, ir.MakeTuple):
            hint = "tup"
        elif isinstance(e, ir.GetItem):
            hint = "item"
        name = self.names.fresh(hint)
        lets.append(ir.Let(name, e, self.loc))
        return ir.Var(name)

    def expr(self, node: gast.expr, env: dict, lets: list) -> ir.Expr:
        if isinstance(node, gast.Constant):
            return ir.Const(node.value)
        if isinstance(node, gast.Name):
            return self.read(node.id, env, node)
        if isinstance(node, gast.Attribute):
            if self.is_local(node.value, env):
                if node.attr not in ATTRIBUTES:
                    raise self.error(UnsupportedSyntax, f"the attribute `.{node.attr}` is not supported", node)
                base = self.atom(node.value, env, lets)
                return with_defaults(PRIMITIVES[ATTRIBUTES[node.attr]], [base])
            path, value = self.static_path(node, env)
            return self.outside(path, value, node)
        if isinstance(node, gast.List):
            return ir.MakeTuple([self.atom(e, env, lets) for e in node.elts], kind="list")
        if isinstance(node, gast.Dict):
            keys = [self.atom(k, env, lets) for k in node.keys]
            return ir.MakeDict(keys, [self.atom(v, env, lets) for v in node.values])
        if isinstance(node, (gast.ListComp, gast.GeneratorExp)):
            return self.comprehension(node, env, lets)
        if isinstance(node, gast.BinOp):
            if type(node.op) not in _BINOPS:
                raise self.error(UnsupportedSyntax, f"the operator `{type(node.op).__name__}` is not supported", node)
            a = self.atom(node.left, env, lets)
            b = self.atom(node.right, env, lets)
            return ir.Prim(OPERATORS[_BINOPS[type(node.op)]], [a, b])
        if isinstance(node, gast.UnaryOp):
            if (
                isinstance(node.op, gast.USub)
                and isinstance(node.operand, gast.Constant)
                and isinstance(node.operand.value, (int, float))
                and not isinstance(node.operand.value, bool)
            ):
                return ir.Const(-node.operand.value)
            return ir.Prim(OPERATORS[_UNOPS[type(node.op)]], [self.atom(node.operand, env, lets)])
        if isinstance(node, gast.Compare):
            return self.compare(self.atom(node.left, env, lets), list(zip(node.ops, node.comparators)), env, lets)
        if isinstance(node, gast.BoolOp):
            return self.boolop(node.op, node.values, env, lets)
        if isinstance(node, gast.IfExp):
            cond = self.atom(node.test, env, lets)
            return ir.Case(cond, self.sub_block(node.body, env), self.sub_block(node.orelse, env))
        if isinstance(node, gast.Tuple):
            return ir.MakeTuple([self.atom(e, env, lets) for e in node.elts])
        if isinstance(node, gast.Subscript):
            base = self.atom(node.value, env, lets)
            index = node.slice
            parts = index.elts if isinstance(index, gast.Tuple) else [index]
            if not any(isinstance(p, gast.Slice) for p in parts):
                return ir.GetItem(base, self.atom(index, env, lets))
            atoms = [
                self.slice_atom(p, env, lets) if isinstance(p, gast.Slice) else self.atom(p, env, lets) for p in parts
            ]
            if isinstance(index, gast.Slice):
                return ir.GetItem(base, atoms[0], slice=self.static_slice(index) or True)
            atom = self._bind(ir.MakeTuple(atoms), lets, "index")
            return ir.GetItem(base, atom, slice=True)
        if isinstance(node, gast.Call):
            return self.call(node, env, lets)
        if isinstance(node, gast.Lambda):  # kept (stored, returned): it must not depend on a changing variable
            made, info = self.closure(node, env, lets)
            info.check(self, env, "value", node)
            return made
        raise self.error(UnsupportedSyntax, f"`{type(node).__name__}` is not supported", node)

    def slice_atom(self, node: gast.Slice, env: dict, lets: list) -> ir.Atom:
        bounds = [
            self.atom(b, env, lets) if b is not None else ir.Const(None) for b in (node.lower, node.upper, node.step)
        ]
        return self._bind(ir.Prim(PRIMITIVES[builtins.slice], bounds), lets, "s")

    def static_slice(self, node: gast.Slice) -> slice | None:
        """The slice, if its bounds are literal numbers (then a tuple's slice has a static type)."""
        values = []
        for b in (node.lower, node.upper, node.step):
            e = self.expr(b, {}, []) if isinstance(b, (gast.Constant, gast.UnaryOp)) else None
            if b is not None and not isinstance(e, ir.Const):
                return None
            values.append(e.value if b is not None else None)
        return slice(*values)

    def is_local(self, node: gast.expr, env: dict) -> bool:
        """Whether node is a value of the function (not a module, a global function...)."""
        while isinstance(node, gast.Attribute):
            node = node.value
        return not isinstance(node, gast.Name) or node.id in env or node.id in self.locals

    def comprehension(self, node: gast.ListComp | gast.GeneratorExp, env: dict, lets: list) -> ir.Atom:
        """`[e for x in xs if c]` is the loop `acc = []; for x in xs: if c: acc.append(e)`."""
        acc = self.names.fresh("listcomp")
        body: list[gast.stmt] = [
            gast.Expr(gast.Call(gast.Attribute(_gast_name(acc), "append", gast.Load()), [node.elt], []))
        ]
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                body = [gast.If(cond, body, [])]
            body = [gast.For(gen.target, gen.iter, body, [], None)]
        for n in gast.walk(body[0]):
            if isinstance(n, gast.stmt):
                gast.copy_location(n, node)
        targets = {n.id for gen in node.generators for n in gast.walk(gen.target) if isinstance(n, gast.Name)}
        saved = {t: env[t] for t in targets if t in env}
        start = self.names.fresh("empty")
        lets.append(ir.Let(start, ir.MakeTuple([], kind="list"), self.loc))
        env[acc] = ir.Var(start)
        loc = self.loc
        self.loop(body[0], env, lets, live={acc})
        self.loc = loc
        result = env.pop(acc)
        for t in targets:  # comprehension variables do not leak (Python 3)
            env.pop(t, None)
        env.update(saved)
        return result

    def reduce(self, node: gast.Call, env: dict, lets: list) -> ir.Atom:
        """`functools.reduce(f, xs[, init])` is the loop `acc = init; for x in xs: acc = f(acc, x)`."""
        if node.keywords or len(node.args) not in (2, 3):
            raise self.error(UnsupportedSyntax, "`functools.reduce(f, xs[, initial])` is supported", node)
        f = self.function_operand(node.args[0], env, lets)
        xs = self.atom(node.args[1], env, lets)
        acc, item = self.names.fresh("reduced"), self.names.fresh("item")
        if len(node.args) == 3:
            first, start = self.atom(node.args[2], env, lets), ir.Const(0)
        else:
            first, start = self._bind(ir.GetItem(xs, ir.Const(0)), lets, "first"), ir.Const(1)
        n = self._bind(ir.Prim(PRIMITIVES[len], [xs]), lets, "n")
        seq = self._bind(ir.Prim(RANGE, [start, n]), lets, "indices")
        step = gast.Assign([_gast_name(acc, gast.Store)], gast.Call(f, [_gast_name(acc), _gast_name(item)], []), None)
        loop = gast.For(_gast_name(item, gast.Store), _gast_name(item), [step], [], None)
        for n_ in (step, loop):
            gast.copy_location(n_, node)

        def bind_item(body_env: dict, prelude: list) -> str:
            k = self.names.fresh("k")
            body_env[item] = self._bind(ir.GetItem(xs, ir.Var(k), natural=True), prelude, "x")
            return k

        loop.chad_iteration = (seq, bind_item)
        env[acc] = first
        loc = self.loc
        self.loop(loop, env, lets, live={acc})
        self.loc = loc
        env.pop(item, None)
        return env.pop(acc)

    def sub_block(self, node: gast.expr, env: dict) -> ir.Block:
        """An expression evaluated only on one path (a branch of `a if c else b`, `and`, `or`)."""
        lets: list[ir.Let] = []
        return ir.Block(lets, self.atom(node, env, lets))

    def compare(self, a: ir.Atom, rest: list, env: dict, lets: list) -> ir.Expr:
        """`a < b < c` is `(a < b) and (b < c)`: b evaluated once, c only if needed."""
        op, right = rest[0]
        b = self.atom(right, env, lets)
        first = ir.Prim(OPERATORS[_CMPOPS[type(op)]], [a, b])
        if len(rest) == 1:
            return first
        t = self._bind(first, lets, "cmp")
        then_lets: list[ir.Let] = []
        more = self._bind(self.compare(b, rest[1:], env, then_lets), then_lets, "cmp")
        return ir.Case(t, ir.Block(then_lets, more), ir.Block([], t))

    def boolop(self, op: gast.boolop, values: list[gast.expr], env: dict, lets: list) -> ir.Expr:
        """`a and b` is `b if a else a`; `a or b` is `a if a else b` (Python returns an operand)."""
        first = self.atom(values[0], env, lets)
        rest_lets: list[ir.Let] = []
        if len(values) == 2:
            rest = self.atom(values[1], env, rest_lets)
        else:
            rest_expr = self.boolop(op, values[1:], env, rest_lets)
            rest = (
                rest_expr
                if isinstance(rest_expr, (ir.Var, ir.Const, ir.Ref))
                else self._bind(rest_expr, rest_lets, "bool")
            )
        rest_block = ir.Block(rest_lets, rest)
        keep = ir.Block([], first)
        if isinstance(op, gast.And):
            return ir.Case(first, rest_block, keep)
        return ir.Case(first, keep, rest_block)

    def _bind(self, e: ir.Expr, lets: list, hint: str) -> ir.Var:
        name = self.names.fresh(hint)
        lets.append(ir.Let(name, e, self.loc))
        return ir.Var(name)

    def static_path(self, node: gast.expr, env: dict) -> tuple[str, object]:
        """Resolve `m.sin`, `math.pi`, `mod.sub.f` to the object it names (no locals)."""
        if isinstance(node, gast.Name):
            if node.id in env or node.id in self.locals:
                raise self.error(
                    UnsupportedSyntax, f"attributes and methods of the local value `{node.id}` are not supported", node
                )
            value = self.parsed.resolve(node.id, self.watch)
            if is_missing(value):
                raise self.error(ChadError, f"name `{node.id}` is not defined", node)
            return node.id, value
        if isinstance(node, gast.Attribute):
            path, value = self.static_path(node.value, env)
            if not isinstance(value, types.ModuleType):
                raise self.error(UnsupportedSyntax, f"attribute `.{node.attr}` of `{path}` is not supported", node)
            try:
                return f"{path}.{node.attr}", getattr(value, node.attr)
            except AttributeError:
                raise self.error(ChadError, f"module `{path}` has no attribute `{node.attr}`", node) from None
        raise self.error(UnsupportedSyntax, "calling the result of an expression is not supported", node)

    def callee(self, func: gast.expr, env: dict) -> tuple[str, object] | None:
        """The path and outside object a call's function names; None for a method of a local value."""
        if self.is_local(func, env):
            return None
        path, fn = self.static_path(func, env)
        return path, getattr(fn, "__chad_wrapped__", fn)  # a function decorated with @chad.reverse

    def call(self, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        func = node.func
        if isinstance(func, gast.Attribute) and self.is_local(func.value, env):
            return self.method_call(node, env, lets)
        if self.is_local(func, env):  # a function value: a local name, `fs[i]`, `make(a)`, a lambda
            return self.apply(self.argument(func, env, lets), node, env, lets)
        path, fn = self.callee(func, env)
        if fn is REDUCE:
            return self.reduce(node, env, lets)
        if fn is builtins.map:
            return self.map(node, env, lets)
        if fn is builtins.sorted:
            return self.sorted(node, env, lets)
        if fn in (builtins.max, builtins.min) and node.keywords:
            return self.best(fn is builtins.max, path, node, env, lets)
        if fn in (builtins.enumerate, builtins.zip):
            raise self.error(UnsupportedSyntax, f"`{path}` is supported only as what a `for` loop iterates", node)
        if fn in (builtins.max, builtins.min) and len(node.args) == 1 and not node.keywords:
            return ir.Prim(OVER_SEQUENCE[fn], [self.atom(node.args[0], env, lets)])
        prim = lookup(fn)
        if prim is not None:
            return self.prim_call(prim, path, node, env, lets)
        if isinstance(fn, types.FunctionType):
            return self.user_call(fn, path, node, env, lets)
        if any(fn is reader for reader in _FRAME_READERS):
            raise self.error(UnknownFunction, f"`{path}` reads the function's own variables; not supported", node)
        return self.data_call(fn, path, node, env, lets)

    def data_call(self, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Prim:
        """A call of something with neither a rule nor source (`np.random.rand`, a class): run as it is,
        its result is data. An error if a derivative flows into it (never a silent zero)."""
        args = [self.atom(a, env, lets) for a in node.args]
        names = [k.arg for k in node.keywords]
        args += [self.atom(k.value, env, lets) for k in node.keywords]
        n = len(node.args)
        prim = Primitive(
            path,
            lambda *a: CallX(Obj(fn, path), list(a[:n]), dict(zip(names, a[n:]))),
            nargs=(0, None),
            kind=fixed(OBJECT),
            data_only=True,
            aliases="unknown",
            fn=fn,
        )
        return ir.Prim(prim, args)

    def argument(self, node: gast.expr, env: dict, lets: list) -> ir.Atom:
        """An argument of a call (or the function called): a function value here is used
        right away, so it may capture a variable that changes later."""
        if isinstance(node, gast.Name) and (node.id in env or node.id in self.locals):
            return self.read(node.id, env, node, use="call")
        if isinstance(node, gast.Lambda):
            made, _ = self.closure(node, env, lets)
            return self._bind(made, lets, "lambda")
        return self.atom(node, env, lets)

    def apply(self, fn: ir.Atom, node: gast.Call, env: dict, lets: list) -> ir.Apply:
        """A call of a function value: its code on its captured values and the arguments.
        Missing trailing arguments take their defaults from the function value (`Apply`)."""
        args = [self.argument(a, env, lets) for a in node.args]
        if node.keywords:
            args = self.keyword_arguments(fn, args, node, env, lets)
        return ir.Apply(fn, args)

    def keyword_arguments(self, fn: ir.Atom, args: list, node: gast.Call, env: dict, lets: list) -> list:
        """All arguments, by position, of a call with keywords of a nested function made here
        (whose parameters are known): a default not given is read from the function value."""
        info = self.closures.get(fn.name) if isinstance(fn, ir.Var) else None
        if info is None:
            raise self.error(
                UnsupportedSyntax,
                "keyword arguments are supported in calls of a nested function by the name it was made "
                "under, not of other function values",
                node,
            )
        code = info.code
        given = dict(zip(code.params[1:], args))
        for k in node.keywords:
            if k.arg not in code.params[1:] or k.arg in given:
                raise self.error(ChadError, f"`{info.label}` got an unexpected or repeated argument `{k.arg}`", node)
            given[k.arg] = self.argument(k.value, env, lets)
        out = []
        for p in code.params[1:]:
            if p in given:
                out.append(given[p])
            elif p in code.defaults:
                default = ir.GetItem(fn, ir.Const(len(code.captured) + code.defaults.index(p)))
                out.append(self._bind(default, lets, "default_" + p))
            else:
                raise self.error(ChadError, f"`{info.label}` is missing its argument `{p}`", node)
        return out

    # ------------------------------------------------------------ builtins that take functions
    # Each is a loop (a comprehension), as `functools.reduce` is: the paper's fold.

    def function_operand(self, node: gast.expr, env: dict, lets: list) -> gast.expr:
        """The function a builtin such as `map` calls, as the callee of the loop it becomes: a
        module-level name stays as written (a primitive stays a primitive); anything else is
        evaluated once, here, into a fresh name."""
        if isinstance(node, (gast.Name, gast.Attribute)) and not self.is_local(node, env):
            return node
        return gast.copy_location(self.synthetic(self.argument(node, env, lets), env, "fn"), node)

    def synthetic(self, value: ir.Atom, env: dict, hint: str) -> gast.Name:
        """An evaluated value under a fresh name, for code the lowerer writes."""
        name = self.names.fresh(hint)
        env[name] = value
        return _gast_name(name)

    def list_of(self, elt: gast.expr, targets: list[str], iterable: gast.expr, env: dict, lets: list) -> ir.Var:
        """`[elt for targets in iterable]`, lowered as a comprehension."""
        target = (
            _gast_name(targets[0], gast.Store)
            if len(targets) == 1
            else gast.Tuple([_gast_name(t, gast.Store) for t in targets], gast.Store())
        )
        comp = gast.ListComp(elt, [gast.comprehension(target, iterable, [], 0)])
        for n in gast.walk(comp):
            if getattr(n, "lineno", None) is None and isinstance(n, (gast.expr, gast.stmt)):
                gast.copy_location(n, elt)
        return self.comprehension(comp, env, lets)

    def map(self, node: gast.Call, env: dict, lets: list) -> ir.Atom:
        """`map(f, xs, ...)` is `[f(x, ...) for x, ... in zip(xs, ...)]`: a list, not an iterator
        (which `list(...)`, `sum(...)` and `for` all accept)."""
        if node.keywords or len(node.args) < 2:
            raise self.error(UnsupportedSyntax, "`map(f, xs, ...)` is supported (no keyword arguments)", node)
        f = self.function_operand(node.args[0], env, lets)
        seqs = [self.synthetic(self.atom(a, env, lets), env, "seq") for a in node.args[1:]]
        items = [self.names.fresh("item") for _ in seqs]
        iterable = seqs[0] if len(seqs) == 1 else gast.Call(_gast_name("zip"), seqs, [])
        elt = gast.copy_location(gast.Call(f, [_gast_name(i) for i in items], []), node)
        return self.list_of(elt, items, iterable, env, lets)

    def keys(self, seq: gast.Name, key: gast.expr | None, env: dict, lets: list) -> ir.Atom:
        """The list of `key(x)` for x in seq (seq itself without a key)."""
        if key is None or isinstance(key, gast.Constant) and key.value is None:
            return env[seq.id]
        f = self.function_operand(key, env, lets)
        item = self.names.fresh("item")
        elt = gast.copy_location(gast.Call(f, [_gast_name(item)], []), key)
        return self.list_of(elt, [item], seq, env, lets)

    def elements(self, iterable: gast.expr, env: dict, lets: list) -> ir.Atom:
        """The list of what a `for` loop over `iterable` yields (a dict's keys, an array's rows)."""
        item = self.names.fresh("item")
        return self.list_of(_gast_name(item), [item], iterable, env, lets)

    def sorted(self, node: gast.Call, env: dict, lets: list) -> ir.Atom:
        """`sorted(xs, key=f, reverse=r)`: the keys (discrete: no derivative flows through
        them), a stable argsort, then the elements in that order (a one-hot each)."""
        options = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 1 or set(options) - {"key", "reverse"}:
            raise self.error(UnsupportedSyntax, "`sorted(xs, key=..., reverse=...)` is supported", node)
        seq = self.synthetic(self.elements(node.args[0], env, lets), env, "seq")
        keys = self.keys(seq, options.get("key"), env, lets)
        reverse = self.atom(options["reverse"], env, lets) if "reverse" in options else ir.Const(False)
        order = self.synthetic(self._bind(ir.Prim(ARGSORT, [keys, reverse]), lets, "order"), env, "order")
        i = self.names.fresh("i")
        elt = gast.copy_location(gast.Subscript(seq, _gast_name(i), gast.Load()), node)
        return self.list_of(elt, [i], order, env, lets)

    def best(self, largest: bool, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        """`max(xs, key=f)` / `min(a, b, key=f)`: the element whose key is largest (smallest)."""
        if not node.args or any(k.arg != "key" for k in node.keywords):
            raise self.error(UnsupportedSyntax, f"`{path}(xs, key=...)` is supported (not `default=`)", node)
        if len(node.args) == 1:
            seq = self.synthetic(self.elements(node.args[0], env, lets), env, "seq")
        else:
            items = ir.MakeTuple([self.atom(a, env, lets) for a in node.args])
            seq = self.synthetic(self._bind(items, lets, "candidates"), env, "seq")
        keys = self.keys(seq, node.keywords[0].value, env, lets)
        position = self._bind(ir.Prim(ARGBEST, [keys, ir.Const(largest)]), lets, "best")
        return ir.GetItem(env[seq.id], position)

    def method_call(self, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        """`x.sum(axis=0)`, `x.reshape(2, 3)`, `d.values()`: the function the method is."""
        method = node.func.attr
        if method == "append":
            raise self.error(UnsupportedSyntax, "`append` is supported as a statement (it returns None)", node)
        if method not in METHODS:
            raise self.error(UnsupportedSyntax, f"the method `.{method}()` is not supported", node)
        fn = METHODS[method]
        prim = PRIMITIVES[fn]
        args = list(node.args)
        if fn in (np.reshape, np.transpose) and len(args) > 1:  # x.reshape(2, 3) is np.reshape(x, (2, 3))
            args = [gast.copy_location(gast.Tuple(args, gast.Load()), node)]
        call = gast.copy_location(gast.Call(node.func, [node.func.value, *args], node.keywords), node)
        return self.prim_call(prim, f".{method}", call, env, lets)

    def prim_call(self, prim: Primitive, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        args = [self.atom(a, env, lets) for a in node.args]
        if prim.params is not None:
            kwargs = {k.arg: self.atom(k.value, env, lets) for k in node.keywords}
            return ir.Prim(prim, self.bind_arguments(prim, path, args, kwargs, node))
        least, most = prim.nargs
        if node.keywords:
            raise self.error(UnsupportedSyntax, f"keyword arguments to `{path}` are not supported", node)
        if prim in BINARY_FOLDS and len(args) > 2:
            acc = args[0]
            for a in args[1:-1]:
                acc = self._bind(ir.Prim(prim, [acc, a]), lets, path)
            return ir.Prim(prim, [acc, args[-1]])
        if len(args) < least or (most is not None and len(args) > most):
            raise self.error(UnsupportedSyntax, f"`{path}` with {len(args)} arguments is not supported", node)
        return ir.Prim(prim, args)

    def bind_arguments(self, prim: Primitive, path: str, args: list, kwargs: dict, node: gast.AST) -> list[ir.Atom]:
        """A call's arguments in the order of the primitive's `params`, bound by the real function's
        signature (defaults filled in); every other parameter must be left at its default."""
        signature = prim.signature()
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(ChadError, f"`{path}`: {e}", node) from None
        for name, value in bound.arguments.items():
            param = signature.parameters[name]
            if name in prim.params or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) and not value:
                continue
            if not (isinstance(value, (ir.Const, ir.Ref)) and _same_value(value.value, param.default)):
                taken = ", ".join(f"`{p}`" for p in prim.params)
                raise self.error(
                    UnsupportedSyntax,
                    f"the argument `{name}` of `{path}` is not supported (only its default; chadpy handles {taken})",
                    node,
                )
        try:
            return [bound.arguments[p] if p in bound.arguments else ir.Const(prim.default(p)) for p in prim.params]
        except TypeError as e:
            raise self.error(ChadError, f"`{path}`: {e}", node) from None

    def user_call(self, fn: types.FunctionType, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        args = [self.argument(a, env, lets) for a in node.args]
        kwargs = {k.arg: self.argument(k.value, env, lets) for k in node.keywords}
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(ChadError, f"call of `{path}`: {e}", node) from None
        bound.apply_defaults()
        atoms = []
        for name, value in bound.arguments.items():
            param = bound.signature.parameters[name]
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise self.error(UnsupportedSyntax, f"`{path}` takes star-parameters; not supported", node)
            atoms.append(value if isinstance(value, (ir.Var, ir.Const, ir.Ref)) else ir.Const(value))
        return ir.Call(fn, atoms)


def _gast_name(name: str, ctx: type = gast.Load) -> gast.Name:
    """A name in code the lowerer writes (comprehensions, reduce, map, sorted)."""
    return gast.Name(name, ctx(), None, None)


def _return_none(env: dict, lets: list) -> ir.Block:
    return ir.Block(lets, ir.Const(None))


def _same_value(value: object, default: object) -> bool:
    """Whether a constant argument is the parameter's default (`ord=None`, `keepdims=np._NoValue`)."""
    return value is default or type(value) is type(default) and value == default


def with_defaults(prim: Primitive, args: list[ir.Atom]) -> ir.Prim:
    """`prim` applied to its leading arguments, the others at their defaults."""
    rest = prim.params[len(args) :] if prim.params is not None else ()
    return ir.Prim(prim, [*args, *(ir.Const(prim.default(p)) for p in rest)])
