"""Lowering: gast -> core IR (A-normal form, SSA names).

Statements are lowered left to right with an environment from the user's names
to their current SSA names. An `if` with a `return` in a branch takes the rest of
the block into both branches (a branch that always returns simply never reaches
it), so early returns need no flags; loops and the `if`s whose branches both fall
through are `control`'s. `for x in xs` counts positions and reads `xs[k]` (a
one-hot cotangent per element, Section 7).

This module does ANF, SSA and the dispatch of statements and expressions; the
other concerns of the front end are passes and rule sets of their own, called from
here: `scope` (analyses of the gast tree: what is assigned, read, live), `control`
(loops, joins), `desugar` (constructs that are loops in disguise), `resolve` (what
an outside name or a call is), `objects` (attributes, methods, classes),
`updates` (in-place updates of containers), `closures` (closure conversion), and,
on the IR afterwards, `ownership` (the in-place update check).
"""

from __future__ import annotations

import builtins

import gast

from ..errors import ChadError, UnsupportedSyntax
from ..ir import nodes as ir
from ..names import NameSupply
from ..read import scope
from ..read.source import ParsedFunction, Watch
from ..rules.registry import ATTRIBUTES, OPERATORS, PRIMITIVES
from ..rules.scalar import READ_UNASSIGNED
from ..runtime.scalar import check
from . import calls, closures, control, desugar, objects, unpacking, updates
from .outside import Resolver

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
_COMPARE_NAMES = {"lt", "le", "gt", "ge", "eq", "ne", "is", "is_not", "in", "not_in", "not"}
_UNOPS = {gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not", gast.Invert: "invert"}


class Lowerer:
    """Lowers one function (or a nested one: `nested`) statement by statement, with an environment
    from the user's names to their SSA values; the rule modules call back through `context.Lowering`."""

    def __init__(
        self,
        parsed: ParsedFunction,
        watch: Watch,
        node: gast.FunctionDef | gast.Lambda | None = None,
        constructing: type | None = None,
    ):
        self.parsed = parsed
        self.constructing = constructing  # lowering `cls.__init__` as the constructor of this class
        self.watch = watch
        self.node = node if node is not None else parsed.tree
        self.names = NameSupply(scope.all_names(self.node))
        body = scope.function_body(self.node)
        self.locals = scope.local_names(self.node)
        makes_functions = scope.makes_functions(body)
        # per function made, or node using one: names assigned after it
        self.later = scope.assigned_later(body) if makes_functions else {}
        # what calling each function named here reads
        self.function_reads = scope.function_reads(body) if makes_functions else {}
        self.hidden: dict[str, ir.Atom | None] = {}  # the variables comprehension variables hide, while lowered
        self.resolver = Resolver(parsed, watch, self.locals)
        self.closures: dict[
            str, closures.ClosureMade | closures.LateDef
        ] = {}  # SSA name -> the function (value) it holds
        self.loc = parsed.loc(self.node)
        self.bound: set[str] = set()  # user names already used as an SSA name
        self.counters: set[str] = set()  # SSA names of `for` counters over a range that starts at 0 or above
        self.loops: list[control.LoopExits] = []  # the loops being lowered, innermost last

    def error(self, cls: type[ChadError], message: str, node: gast.AST | None = None) -> ChadError:
        return cls(message, self.parsed.loc(node) if node is not None else self.loc)

    def nested(self, node: gast.FunctionDef | gast.Lambda) -> Lowerer:
        return Lowerer(self.parsed, self.watch, node)

    # ------------------------------------------------------------ statements

    def function(self) -> ir.Function:
        params = scope.parameters(self.node)
        env = {p: ir.Var(p) for p in params}
        self.bound.update(params)
        name = self.parsed.name.strip("<>")  # a lambda passed in is `lambda`
        if self.constructing is None:
            return ir.Function(name, params, self.body(env), self.loc, self.parsed.pyfunc)
        # a constructor: `self` is a new empty record, and every way out returns it
        made = ir.Let(params[0], ir.MakeRecord(self.constructing, [], []), self.loc)
        body = self.body(env)
        body.lets.insert(0, made)
        return ir.Function(self.constructing.__name__, params[1:], body, self.loc, self.parsed.pyfunc)

    def body(self, env: dict[str, ir.Atom]) -> ir.Block:
        """The function's body; falling off its end returns None (a constructor: the object)."""
        made = {scope.parameters(self.node)[0]} if self.constructing is not None else set()  # returned at the end
        return self.block(scope.function_body(self.node), env, self.return_nothing, made)

    def return_nothing(self, env: dict, lets: list) -> ir.Block:
        return ir.Block(lets, self.nothing(env))

    def nothing(self, env: dict) -> ir.Atom:
        """What `return` without a value returns: None (a constructor: the object it made)."""
        return env[scope.parameters(self.node)[0]] if self.constructing is not None else ir.Const(None)

    def block(self, stmts: list[gast.stmt], env: dict[str, ir.Atom], fall_through, live_out: set[str]) -> ir.Block:
        """Lower `stmts`; `fall_through(env, lets)` ends the block if control reaches its end.

        `live_out`: the names read after the block (by the statements that follow it).
        """
        lets: list[ir.Let] = []
        for i, stmt in enumerate(stmts):
            self.loc = self.parsed.loc(stmt)
            rest = stmts[i + 1 :]
            if isinstance(stmt, gast.Return):
                result = self.atom(stmt.value, env, lets) if stmt.value is not None else self.nothing(env)
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
                control.join_if(self, stmt, cond, env, lets, live=self.live(rest, live_out))
                continue
            if isinstance(stmt, (gast.For, gast.While)):
                iteration = desugar.iteration(self, stmt, env, lets) if isinstance(stmt, gast.For) else None
                returned = control.lower_loop(self, stmt, env, lets, self.live(rest, live_out), iteration)
                if returned is not None:  # a `return` inside the loop: leave here too if it ran
                    status, retval = returned
                    loc = self.parsed.loc(stmt)
                    cond = self.let(ir.Prim(OPERATORS["=="], [ir.Var(status), ir.Const(2)]), lets, "returned")
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
        return closures.expand(self, scope.live_in(rest, live_out, (state, state, state) if state else None))

    def case_result(self, cond: ir.Atom, then: ir.Block, orelse: ir.Block, lets: list, stmt: gast.AST) -> ir.Block:
        result = self.names.fresh("result")
        lets.append(ir.Let(result, ir.Case(cond, then, orelse), self.parsed.loc(stmt)))
        return ir.Block(lets, ir.Var(result))

    def exit_return(self, result: ir.Atom, env: dict, lets: list) -> ir.Block:
        if self.loops:  # inside a loop: end the iteration with status 2
            return self.loops[-1].finish(self, env, lets, 2, result)
        return ir.Block(lets, result)

    def statement(self, stmt: gast.stmt, env: dict, lets: list) -> None:
        loc = self.loc
        if isinstance(stmt, gast.FunctionDef):
            closures.name_closure(self, stmt.name, stmt, env, lets)
            return
        if isinstance(stmt, (gast.Assign, gast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], gast.Name) and isinstance(stmt.value, gast.Lambda):
                closures.name_closure(self, targets[0].id, stmt.value, env, lets)
                return
            if len(targets) == 1 and isinstance(targets[0], gast.Name):
                value = self.expr(stmt.value, env, lets)
                lets.append(ir.Let(self.bind(targets[0].id, env), value, loc))
                return
            value = self.atom(stmt.value, env, lets)
            for target in targets:  # a = b = e binds both to the same value
                self.assign(target, value, env, lets)
        elif isinstance(stmt, gast.AugAssign):
            op = OPERATORS[_BINOPS[type(stmt.op)]] if type(stmt.op) in _BINOPS else None
            if op is None:
                raise self.error(UnsupportedSyntax, f"augmented `{type(stmt.op).__name__}` is not supported", stmt)
            if isinstance(stmt.target, gast.Attribute):  # `obj.x += v` is `obj.x = obj.x + v`
                current = self.atom(gast.Attribute(stmt.target.value, stmt.target.attr, gast.Load()), env, lets)
                value = self.let(ir.Prim(op, [current, self.atom(stmt.value, env, lets)]), lets, stmt.target.attr)
                objects.set_attribute(self, stmt.target, value, env, lets)
                return
            name = stmt.target.id
            current = self.read(name, env, stmt.target, lets)
            value = ir.Prim(op, [current, self.atom(stmt.value, env, lets)], inplace=True)
            lets.append(ir.Let(self.bind(name, env), value, loc))
        elif isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return  # a docstring
            if scope.updated(stmt.value):  # `xs.append(v)`: what it returns is not used
                updates.update(self, stmt.value, env, lets)
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

    def assign(self, target: gast.AST, value: ir.Atom, env: dict, lets: list) -> None:
        if isinstance(target, gast.Name):
            lets.append(ir.Let(self.bind(target.id, env), value, self.loc))
            return
        if isinstance(target, gast.Attribute):
            objects.set_attribute(self, target, value, env, lets)
            return
        if any(isinstance(t, gast.Starred) for t in target.elts):  # `a, *b = t`
            unpacking.starred(self, target, value, env, lets)
            return
        if len(target.elts) == 1:  # `a, = t`: its one element
            self.assign(target.elts[0], self.let(ir.Index(value, ir.Const(0)), lets, "item"), env, lets)
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
        self.names.taken.add(name)  # a `def`'s name is not a gast.Name: the supply may not know it
        env[user_name] = ir.Var(name)
        return name

    def read(self, name: str, env: dict, node: gast.AST, lets: list, use: str = "value") -> ir.Expr:
        """The value of a name. `use`: "call" where a function value is called or passed to a
        call (used right away), "value" anywhere else (it may be kept)."""
        if name in env:
            return closures.current(self, env, name, lets, node, use)
        if name in self.locals:  # not assigned on the path that got here: Python raises reading it
            return self.let(ir.Prim(READ_UNASSIGNED, [ir.Const(name)]), lets, "unassigned")
        return self.resolver.outside(name, self.resolver.global_value(name, node), node)

    # ------------------------------------------------------------ expressions

    def atom(self, node: gast.expr, env: dict, lets: list, hint: str = "t") -> ir.Atom:
        e = self.expr(node, env, lets)
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return e
        return self.let(e, lets, _hint(e, hint))

    def expr(self, node: gast.expr, env: dict, lets: list) -> ir.Expr:
        if isinstance(node, gast.Constant):
            return ir.Const(node.value)
        if isinstance(node, gast.Name):
            return self.read(node.id, env, node, lets)
        if isinstance(node, gast.Attribute):
            if self.resolver.is_local(node.value, env) or self.resolver.data(node.value, env) is not None:
                return objects.attribute(self, node, env, lets)
            path, value = self.resolver.static_path(node, env)
            return self.resolver.outside(path, value, node)
        if isinstance(node, (gast.List, gast.Tuple)) and any(isinstance(e, gast.Starred) for e in node.elts):
            return desugar.starred_display(self, node, env, lets)
        if isinstance(node, gast.List):
            return ir.MakeList([self.atom(e, env, lets) for e in node.elts])
        if isinstance(node, gast.Dict):
            keys = [self.atom(k, env, lets) for k in node.keys]
            return ir.MakeDict(keys, [self.atom(v, env, lets) for v in node.values])
        if isinstance(node, (gast.ListComp, gast.GeneratorExp, gast.DictComp)):
            return desugar.comprehension(self, node, env, lets)
        if isinstance(node, gast.JoinedStr):
            return desugar.fstring(self, node, env, lets)
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
            return desugar.compare(
                self, self.atom(node.left, env, lets), list(zip(node.ops, node.comparators)), env, lets
            )
        if isinstance(node, gast.BoolOp):
            return desugar.boolop(self, node.op, node.values, env, lets)
        if isinstance(node, gast.IfExp):
            cond = self.atom(node.test, env, lets)
            return ir.Case(cond, desugar.sub_block(self, node.body, env), desugar.sub_block(self, node.orelse, env))
        if isinstance(node, gast.Tuple):
            return ir.MakeTuple([self.atom(e, env, lets) for e in node.elts])
        if isinstance(node, gast.Subscript):
            return self.subscript(node, env, lets)
        if isinstance(node, gast.Call):
            return calls.lower_call(self, node, env, lets)
        if isinstance(node, gast.Lambda):  # kept (stored, returned): it must not depend on a changing variable
            return closures.make_closure(self, node, env, lets)[0]
        raise self.error(UnsupportedSyntax, f"`{type(node).__name__}` is not supported", node)

    def subscript(self, node: gast.Subscript, env: dict, lets: list) -> ir.Expr:
        """`x[i]` (an element: `Index`), `x[a:b]`, `x[i, a:b]` (a slice: `Slice`)."""
        base = self.atom(node.value, env, lets)
        index = node.slice
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        if not any(isinstance(p, gast.Slice) for p in parts):
            at = self.atom(index, env, lets)
            # a counter never negative: where the read succeeds, it is the element's position as it is
            return ir.Index(base, at, natural=isinstance(at, ir.Var) and at.name in self.counters)
        atoms = [self.slice_atom(p, env, lets) if isinstance(p, gast.Slice) else self.atom(p, env, lets) for p in parts]
        if isinstance(index, gast.Slice):
            return ir.Slice(base, atoms[0], _static_slice(index))
        atom = self.let(ir.MakeTuple(atoms), lets, "index")
        return ir.Slice(base, atom)

    def slice_atom(self, node: gast.Slice, env: dict, lets: list) -> ir.Atom:
        bounds = [
            self.atom(b, env, lets) if b is not None else ir.Const(None) for b in (node.lower, node.upper, node.step)
        ]
        return self.let(ir.Prim(PRIMITIVES[builtins.slice], bounds), lets, "s")

    def let(self, e: ir.Expr, lets: list, hint: str) -> ir.Var:
        name = self.names.fresh(hint)
        lets.append(ir.Let(name, e, self.loc))
        return ir.Var(name)

    def argument(self, node: gast.expr, env: dict, lets: list) -> ir.Atom:
        """An argument of a call (or the function called): a function value here is used
        right away, so it may capture a variable that changes later."""
        if isinstance(node, gast.Name) and (node.id in env or node.id in self.locals):
            return self.read(node.id, env, node, lets, use="call")
        if isinstance(node, gast.Lambda):
            return self.let(closures.make_closure(self, node, env, lets, use="call")[0], lets, "lambda")
        return self.atom(node, env, lets)


def _hint(e: ir.Expr, default: str) -> str:
    """A readable name for the value of e: after its operation, its callee, what it builds."""
    if isinstance(e, ir.Prim):
        return "cond" if e.op.discrete and e.op.name in _COMPARE_NAMES else e.op.name.split(".")[-1]
    if isinstance(e, (ir.Call, ir.MakeClosure)):  # `<lambda>` names none: `lambda`
        return ir.code_name(e.fn if isinstance(e, ir.Call) else e.code).strip("<>")
    if isinstance(e, ir.Apply):
        return e.fn.name if isinstance(e.fn, ir.Var) else "applied"
    if isinstance(e, ir.Case):
        return "case"
    if isinstance(e, (ir.MakeTuple, ir.MakeList)):
        return "tup"
    if isinstance(e, ir.Field):  # an array's attribute after the function it is (`a.T`: transpose)
        attribute = ATTRIBUTES.get(e.index.value)
        return attribute.__name__ if attribute is not None else e.index.value
    if isinstance(e, ir.MethodCall):
        return e.name
    if isinstance(e, ir.Read):
        return "item"
    return default


def _literal_number(node: gast.expr) -> int | float | None:
    """The value of `3`, `-1`, `2.5` written in the source; None for anything else."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        value = _literal_number(node.operand)
        return -value if value is not None else None
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    return None


def _static_slice(node: gast.Slice) -> slice | None:
    """The slice, if its bounds are literal numbers (then a tuple's slice has a static type)."""
    bounds = (node.lower, node.upper, node.step)
    values = [_literal_number(b) if b is not None else None for b in bounds]
    if any(b is not None and v is None for b, v in zip(bounds, values)):
        return None
    return slice(*values)
