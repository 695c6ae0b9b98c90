"""The CHAD transformation: core IR -> target program (Fig. 7 of the paper).

Every let-bound expression `x = e` becomes its primal statement followed by its
backpropagator `x_bp(d, acc)`, which adds the cotangents of e's free variables
into the environment accumulator `acc` (state passing, Section 4.2). A block's
backpropagator opens a scope for each let-bound variable (`push0`), feeds the
result's cotangent in, and then closes the scopes newest first, handing each
variable's total cotangent to its own backpropagator (`pop`, then `x_bp`).

The rules below are one method per construct, in the order of Fig. 7:
variable, let, tuple (unit/pair), projection, case, literal, discrete
operation (sign), primitive operation; then function calls (compositional CHAD).

A function `f` becomes `f_chad(params) -> (result, f_bp)`, where `f_bp(d)`
runs the accumulator (`run` of Table 2) and returns one cotangent per parameter.
"""

from __future__ import annotations

import inspect

from . import ir
from .infer import Spec
from .lower import NameSupply
from .runtime import tuple_part
from .target import (
    AccNew,
    AccOne,
    AccPop,
    AccPush,
    Assign,
    CallX,
    Def,
    DictX,
    Do,
    Expr,
    If,
    Item,
    Lit,
    Name,
    Obj,
    Return,
    Stmt,
    TupleX,
    call,
)
from .vtypes import REAL, Tup, VType, is_active, zero_of


def chad_spec(spec: Spec) -> Def:
    """The CHAD form of one specialised function."""
    return _Chad(spec).function()


class _Chad:
    def __init__(self, spec: Spec):
        self.spec = spec
        names = set(spec.types) | set(spec.fn.params)
        self.names = NameSupply(names | {"Zero", "EArr", "add", "tuple_part"})
        self.d = self.names.fresh("d")
        self.acc = self.names.fresh("acc")
        self.slot: dict[str, int] = {}  # variable -> its slot (De Bruijn level)
        self.ct: dict[str, str] = {}  # variable -> the name of its cotangent
        self.max_depth = 0

    # ------------------------------------------------------------ helpers

    def type_of(self, atom: ir.Atom) -> VType:
        return self.spec.type_of(atom)

    def active(self, atom: ir.Atom | str) -> bool:
        if isinstance(atom, str):
            return is_active(self.spec.types[atom])
        return self.spec.active(atom)

    def open_slot(self, var: str, depth: int) -> int:
        self.slot[var] = depth
        self.ct[var] = self.names.fresh("d" + var)
        self.max_depth = max(self.max_depth, depth + 1)
        return depth

    def primal(self, atom: ir.Atom) -> Expr:
        if isinstance(atom, ir.Var):
            return Name(atom.name)
        if isinstance(atom, ir.Ref):
            return Obj(atom.value, atom.path)
        return Lit(atom.value)

    def bp_call(self, bp: str, d: Expr) -> Stmt:
        return Do(CallX(Name(bp), [d, Name(self.acc)]))

    # ------------------------------------------------------------ functions and blocks

    def function(self) -> Def:
        spec = self.spec
        params = spec.fn.params
        for p in params:
            if self.active(p):
                self.open_slot(p, len(self.slot))
        n_active = len(self.slot)
        result = spec.fn.body.result
        fwd, body_bp = self.block(spec.fn.body, n_active, "body")
        run: list[Stmt] = [
            AccNew(self.acc, max(self.max_depth, n_active), comment="run: one accumulator for this call")
        ]
        for p in params:
            if self.active(p):
                run.append(
                    AccPush(self.acc, self.slot[p], self.ct[p], zero_of(spec.types[p]), comment=f"parameter {p}")
                )
        if body_bp is not None:
            run.append(self.bp_call(body_bp, Name(self.d)))
        for p in params:
            if self.active(p):
                run.append(AccPop(self.acc, self.slot[p], self.ct[p]))
        run.append(Return(TupleX([Name(self.ct[p]) if self.active(p) else Lit(None) for p in params])))
        f_bp = self.names.fresh(spec.fn.name + "_bp")
        fwd.append(
            Def(f_bp, [self.d], run, comment=f"the backpropagator of {spec.fn.name}: cotangents of its parameters")
        )
        fwd.append(Return(TupleX([self.primal(result), Name(f_bp)])))
        return Def(spec.name, list(params), fwd, comment=f"D[{spec.fn.name}]: the primal result and its backpropagator")

    def block(
        self, block: ir.Block, depth: int, hint: str, wanted: bool = True, bp_name: str | None = None
    ) -> tuple[list[Stmt], str | None]:
        """Forward code of a block and the name of its backpropagator (None if inactive)."""
        # a backpropagator only where a cotangent can arrive: the caller wants one and
        # the result carries one (a branch returning a constant needs none)
        needs_bp = wanted and self.active(block.result)
        fwd: list[Stmt] = []
        scoped: list[tuple[ir.Let, str | None]] = []  # let, its backpropagator
        d = depth
        for let in block.lets:
            bp = None
            targets = ir.bound_names(let)
            if needs_bp and any(self.active(t) for t in targets):
                bp = self.names.fresh("_".join(targets) + "_bp")
            fwd.extend(self.let(let, d, bp))
            for t in targets:
                if needs_bp and self.active(t):
                    self.open_slot(t, d)
                    d += 1
            scoped.append((let, bp))
        if not needs_bp:
            return fwd, None
        name = bp_name or self.names.fresh(hint + "_bp")
        body: list[Stmt] = []
        for let, bp in scoped:
            for t in ir.bound_names(let):
                if bp is not None and self.active(t):
                    body.append(
                        AccPush(self.acc, self.slot[t], self.ct[t], zero_of(self.spec.types[t]), comment=f"scope {t}")
                    )
        body.extend(self.var(block.result, Name(self.d)))
        for let, bp in reversed(scoped):
            if bp is None:
                continue
            targets = ir.bound_names(let)
            live = [t for t in targets if self.active(t)]
            for t in reversed(live):
                body.append(
                    AccPop(self.acc, self.slot[t], self.ct[t], comment=f"end of scope {t}: its total cotangent")
                )
            if isinstance(let.target, str):
                ct: Expr = Name(self.ct[let.target])
            else:
                ct = DictX([Lit(k) for k, t in enumerate(targets) if self.active(t)], [Name(self.ct[t]) for t in live])
            body.append(self.bp_call(bp, ct))
        fwd.append(
            Def(name, [self.d, self.acc], body or [], comment="D[let ... in ...]: scope each variable, newest first")
        )
        return fwd, name

    # ------------------------------------------------------------ the rules

    def var(self, atom: ir.Atom, d: Expr) -> list[Stmt]:
        """D[x] = <x, one_x>: add d into x's slot. Literals and inactive values take nothing."""
        if not isinstance(atom, ir.Var) or not self.active(atom):
            return []
        return [
            AccOne(
                self.acc,
                self.slot[atom.name],
                self.ct[atom.name],
                d,
                self.spec.types[atom.name] is REAL,
                comment=f"D[{atom.name}]",
            )
        ]

    def let(self, let: ir.Let, depth: int, bp: str | None) -> list[Stmt]:
        """D[let x = e in ...]: e's primal, then (if x carries a cotangent) e's backpropagator."""
        e = let.expr
        target = let.target
        loc = f"line {let.loc.lineno}: {let.loc.line.strip()}" if let.loc else ""
        if isinstance(e, ir.Case):
            return [self.case(e, target, depth, bp, loc)]
        if isinstance(e, ir.Call):
            return self.call(e, target, bp, loc)
        primal = Assign(_targets(target), self.primal_expr(e), comment=loc)
        if bp is None:
            return [primal]
        rule, body = self.rule(e, target)
        return [primal, Def(bp, [self.d, self.acc], body or [], comment=rule)]

    def primal_expr(self, e: ir.Expr) -> Expr:
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return self.primal(e)
        if isinstance(e, ir.MakeTuple):
            return TupleX([self.primal(a) for a in e.items])
        if isinstance(e, ir.GetItem):
            return Item(self.primal(e.base), self.primal(e.index))
        if isinstance(e, ir.Prim):
            return e.op.emit(*[self.primal(a) for a in e.args])
        raise AssertionError(e)

    def rule(self, e: ir.Expr, target: str | tuple[str, ...]) -> tuple[str, list[Stmt]]:
        """The backpropagator body of a non-binding expression, with the rule's name."""
        d = Name(self.d)
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return f"D[{ir.format_atom(e)}]", self.var(e, d)
        if isinstance(e, ir.MakeTuple):
            out = []
            for k, a in enumerate(e.items):
                if self.active(a):
                    out += self.var(a, call(tuple_part, d, k, zero_of(self.type_of(a))))
            return "D[<t1, ..., tn>]: each component's part of d (lfst, lsnd)", out
        if isinstance(e, ir.GetItem):
            base_t = self.type_of(e.base)
            assert isinstance(base_t, Tup)
            n = len(base_t.items)
            if isinstance(e.index, ir.Var):
                index: Expr = Name(e.index.name) % n  # a negative index names the same component
            else:
                index = Lit(e.index.value % n)
            return "D[t[k]]: a one-hot tuple cotangent {k: d}", self.var(e.base, DictX([index], [d]))
        if isinstance(e, ir.Prim):
            return self.prim(e, target)
        raise AssertionError(e)

    def case(self, e: ir.Case, target: str | tuple[str, ...], depth: int, bp: str | None, loc: str) -> If:
        """D[case c of {True -> s | False -> r}]: each branch defines the same backpropagator."""
        branches = []
        for block, label in ((e.then, "then"), (e.orelse, "else")):
            fwd, _ = self.block(block, depth, label, wanted=bp is not None, bp_name=bp)
            if bp is not None and not self.active(block.result):  # a branch with an inactive result
                fwd.append(Def(bp, [self.d, self.acc], [], comment="this branch's result carries no cotangent"))
            fwd.append(Assign(_targets(target), self.primal(block.result)))
            branches.append(fwd)
        return If(self.primal(e.cond), branches[0], branches[1], comment=f"D[case]: {loc}" if bp else loc)

    def prim(self, e: ir.Prim, target: str | tuple[str, ...]) -> tuple[str, list[Stmt]]:
        """D[op(x1..xn)]: Dop^t(x1..xn; d), each part added into its argument's slot."""
        d, y = Name(self.d), Name(target if isinstance(target, str) else "")
        args = [self.primal(a) for a in e.args]
        rule = f"D[{e.op.name}]: Dop^t"
        if e.op.runtime_vjp is not None:  # a user rule: call it, then add each part
            parts = [self.names.fresh("ct") for _ in e.args]
            cts = CallX(Obj(e.op.runtime_vjp, "vjp_" + e.op.name.split(".")[-1]), [d, y, *args])
            out: list[Stmt] = [_unpack(parts, cts)]
            for a, p in zip(e.args, parts):
                out += self.var(a, Name(p))
            return rule + " (user rule)", out
        cts = e.op.vjp(d, y, *args)
        out = []
        for a, ct in zip(e.args, cts):
            if isinstance(a, ir.Var) and self.active(a):
                out += self.var(a, ct)
        return rule, out

    def call(self, e: ir.Call, target: str | tuple[str, ...], bp: str | None, loc: str) -> list[Stmt]:
        """D[g(a1..an)]: g's own CHAD form; its backpropagator returns the arguments' cotangents."""
        args = [self.primal(a) for a in e.args]
        callee = self.spec.callees.get(id(e))
        if callee is None or bp is None:  # no derivative flows: run the original function
            fn = e.fn
            params = list(inspect.signature(fn).parameters.values())
            positional = [a for p, a in zip(params, args) if p.kind != p.KEYWORD_ONLY]
            keywords = {p.name: a for p, a in zip(params, args) if p.kind == p.KEYWORD_ONLY}
            return [Assign(_targets(target), CallX(Obj(fn, fn.__name__), positional, keywords), comment=loc)]
        pullback = self.names.fresh("_".join(_targets(target)) + "_pullback")
        result = self.names.fresh("result") if isinstance(target, tuple) else target
        out: list[Stmt] = [Assign([result, pullback], CallX(Name(callee.name), args), comment=loc)]
        if isinstance(target, tuple):
            out.append(Assign(list(target), Name(result)))
        parts = [self.names.fresh("ct") if is_active(t) else "_" for t in callee.sig]
        body: list[Stmt] = [_unpack(parts, CallX(Name(pullback), [Name(self.d)]))]
        for a, p in zip(e.args, parts):
            if p != "_":
                body += self.var(a, Name(p))
        out.append(Def(bp, [self.d, self.acc], body, comment=f"D[{e.fn.__name__}(...)]: the callee's backpropagator"))
        return out


def _unpack(names: list[str], value: Expr) -> Assign:
    """`a, b = value`; a single name takes the only element (`a = value[0]`)."""
    return Assign(names, Item(value, Lit(0))) if len(names) == 1 else Assign(names, value)


def _targets(target: str | tuple[str, ...]) -> list[str]:
    return [target] if isinstance(target, str) else list(target)
