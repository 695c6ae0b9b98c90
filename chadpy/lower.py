"""Lowering: gast -> core IR (A-normal form, SSA names).

Statements are lowered left to right with an environment from the user's names
to their current SSA names. Control flow becomes `Case`:

- an `if` whose branches both fall through joins the variables they assign (and
  that are read later) into a tuple: `let <w, v> = case c of {...}`;
- an `if` with a `return` in a branch takes the rest of the block into both
  branches (a branch that always returns simply never reaches it), so early
  returns need no flags.

Names of outside objects (module constants, `math.sin`, other user functions)
are resolved here: a call becomes a `Prim` if the primitive table knows the
callee, a `Call` if the callee is a Python function with readable source, and an
`UnknownFunction` error otherwise; never a silent zero.
"""

from __future__ import annotations

import inspect
import types

import gast

from . import ir
from .errors import ChadError, UnknownFunction, UnsupportedSyntax
from .fence import fence
from .primitives import BINARY_FOLDS, OPERATORS, PRIMITIVES, Primitive
from .runtime import check
from .source import ParsedFunction, Watch, is_missing, parse_function

_BINOPS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.Pow: "**",
    gast.Mod: "%",
    gast.FloorDiv: "//",
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


def lower_function(fn: types.FunctionType, watch: Watch) -> ir.Function:
    """Parse, fence and lower a Python function to the core IR."""
    parsed = parse_function(fn)
    fence(parsed)
    return _Lowerer(parsed, watch).function()


class NameSupply:
    """Fresh names, never equal to a name the user's code mentions."""

    def __init__(self, taken: set[str]):
        self.taken = set(taken)

    def fresh(self, hint: str) -> str:
        name, k = hint, 0
        while name in self.taken:
            k += 1
            name = f"{hint}_{k}"
        self.taken.add(name)
        return name


def _assigned(stmts: list[gast.stmt]) -> set[str]:
    out = set()
    for s in stmts:
        for node in gast.walk(s):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                out.add(node.id)
    return out


def _read(stmts: list[gast.stmt]) -> set[str]:
    out = set()
    for s in stmts:
        for node in gast.walk(s):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                out.add(node.id)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                out.add(node.target.id)
    return out


def _may_return(stmts: list[gast.stmt]) -> bool:
    return any(isinstance(n, gast.Return) for s in stmts for n in gast.walk(s))


class _Lowerer:
    def __init__(self, parsed: ParsedFunction, watch: Watch):
        self.parsed = parsed
        self.watch = watch
        tree = parsed.tree
        all_names = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
        self.names = NameSupply(all_names)
        self.locals = _assigned(tree.body) | {a.id for a in tree.args.args + tree.args.kwonlyargs}
        self.loc = parsed.loc(tree)
        self.bound: set[str] = set()  # user names already used as an SSA name

    def error(self, cls: type[ChadError], message: str, node: gast.AST | None = None) -> ChadError:
        return cls(message, self.parsed.loc(node) if node is not None else self.loc)

    # ------------------------------------------------------------ statements

    def function(self) -> ir.Function:
        tree = self.parsed.tree
        params = [a.id for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs]
        env = {p: ir.Var(p) for p in params}
        self.bound.update(params)
        body = self.block(tree.body, env, lambda env, lets: ir.Block(lets, ir.Const(None)), set())
        return ir.Function(self.parsed.name, params, body, self.loc, self.parsed.pyfunc)

    def block(self, stmts: list[gast.stmt], env: dict[str, ir.Atom], fall_through, live_out: set[str]) -> ir.Block:
        """Lower `stmts`; `fall_through(env, lets)` ends the block if control reaches its end.

        `live_out`: the names read after the block (by the statements that follow it).
        """
        lets: list[ir.Let] = []
        for i, stmt in enumerate(stmts):
            self.loc = self.parsed.loc(stmt)
            if isinstance(stmt, gast.Return):
                result = self.atom(stmt.value, env, lets) if stmt.value is not None else ir.Const(None)
                return ir.Block(lets, result)
            if isinstance(stmt, gast.If):
                rest = stmts[i + 1 :]
                cond = self.atom(stmt.test, env, lets)
                if _may_return(stmt.body) or _may_return(stmt.orelse):
                    # the rest of the block goes into both branches (early return)
                    then = self.block(stmt.body + rest, dict(env), fall_through, live_out)
                    orelse = self.block(stmt.orelse + rest, dict(env), fall_through, live_out)
                    result = self.names.fresh("result")
                    lets.append(ir.Let(result, ir.Case(cond, then, orelse), self.parsed.loc(stmt)))
                    return ir.Block(lets, ir.Var(result))
                self.join_if(stmt, cond, env, lets, live=_read(rest) | live_out)
                continue
            self.statement(stmt, env, lets)
        return fall_through(env, lets)

    def join_if(self, stmt: gast.If, cond: ir.Atom, env: dict, lets: list, live: set[str]) -> None:
        """An `if` whose branches both fall through: join the live variables they assign."""
        joined = sorted((_assigned(stmt.body) | _assigned(stmt.orelse)) & live)
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
        if isinstance(stmt, (gast.Assign, gast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
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
            value = ir.Prim(op, [current, self.atom(stmt.value, env, lets)])
            lets.append(ir.Let(self.bind(name, env), value, loc))
        elif isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return  # a docstring
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

    def read(self, name: str, env: dict, node: gast.AST) -> ir.Atom:
        if name in env:
            return env[name]
        if name in self.locals:
            raise self.error(UnsupportedSyntax, f"local variable `{name}` may be used before it is assigned", node)
        value = self.parsed.resolve(name, self.watch)
        if is_missing(value):
            raise self.error(ChadError, f"name `{name}` is not defined", node)
        return self.outside(name, value, node)

    def outside(self, path: str, value: object, node: gast.AST) -> ir.Atom:
        """An outside object used as a value: only plain data, read as a constant."""
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return ir.Ref(path, value)
        if isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) for v in value):
            return ir.Ref(path, value)
        kind = "a function" if callable(value) else f"a {type(value).__name__}"
        raise self.error(UnsupportedSyntax, f"`{path}` is {kind}; using it as a value is not supported yet", node)

    # ------------------------------------------------------------ expressions

    def atom(self, node: gast.expr, env: dict, lets: list, hint: str = "t") -> ir.Atom:
        e = self.expr(node, env, lets)
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return e
        if isinstance(e, ir.Prim):
            hint = "cond" if e.op.discrete and e.op.name in _COMPARE_NAMES else e.op.name.split(".")[-1]
        elif isinstance(e, ir.Call):
            hint = e.fn.__name__
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
            path, value = self.static_path(node, env)
            return self.outside(path, value, node)
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
            return ir.GetItem(base, self.atom(node.slice, env, lets))
        if isinstance(node, gast.Call):
            return self.call(node, env, lets)
        raise self.error(UnsupportedSyntax, f"`{type(node).__name__}` is not supported", node)

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

    def call(self, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        path, fn = self.static_path(node.func, env)
        fn = getattr(fn, "__chad_wrapped__", fn)  # a function decorated with @chad.reverse
        prim = PRIMITIVES.get(fn) if _hashable(fn) else None
        if prim is not None:
            return self.prim_call(prim, fn, path, node, env, lets)
        if isinstance(fn, types.FunctionType):
            return self.user_call(fn, path, node, env, lets)
        raise self.error(
            UnknownFunction,
            f"no derivative rule for `{path}` ({type(fn).__name__}) and no Python source to differentiate; "
            "register one with chadpy.defvjp",
            node,
        )

    def prim_call(self, prim: Primitive, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        if node.keywords:
            raise self.error(UnsupportedSyntax, f"keyword arguments to `{path}` are not supported", node)
        args = [self.atom(a, env, lets) for a in node.args]
        least, most = prim.nargs
        if fn in BINARY_FOLDS and len(args) > 2:
            acc = args[0]
            for a in args[1:-1]:
                acc = self._bind(ir.Prim(prim, [acc, a]), lets, path)
            return ir.Prim(prim, [acc, args[-1]])
        if len(args) < least or (most is not None and len(args) > most):
            raise self.error(UnsupportedSyntax, f"`{path}` with {len(args)} arguments is not supported", node)
        return ir.Prim(prim, args)

    def user_call(self, fn: types.FunctionType, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
        args = [self.atom(a, env, lets) for a in node.args]
        kwargs = {k.arg: self.atom(k.value, env, lets) for k in node.keywords}
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


def _hashable(x: object) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True
