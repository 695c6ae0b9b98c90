"""The CHAD transformation: core IR -> target program (Fig. 7 of the paper).

Every let-bound expression `x = e` becomes its primal statement followed by its
backpropagator `x_bp(d, acc)`, which adds the cotangents of e's free variables
into the environment accumulator `acc` (state passing, Section 4.2). A block's
backpropagator opens a scope for each let-bound variable (`push0`), feeds the
result's cotangent in, and then closes the scopes newest first, handing each
variable's total cotangent to its own backpropagator (`pop`, then `x_bp`).

`Chad.let` dispatches with one `match` case per rule of Fig. 7, in the figure's
order, each rule a method whose docstring is its equation: variable and literal,
let (`block`), tuple (unit/pair), projection, case, discrete operation (sign) and
primitive operation; then the extensions, each in its own module: loops (`loops.py`,
the fold of Section 7) and calls of user functions and of function values
(`calls.py`, compositional CHAD and Appendix C). Making a function value is making
the tuple of its captured values (the pair rule): a function value's own cotangent
is that of its captured values, the code has none.

A function `f` becomes `f_chad(params) -> (result, f_bp)`, where `f_bp(d)`
runs the accumulator (`run` of Table 2) and returns one cotangent per parameter;
`backend/lift.py` then makes `f_bp` a module-level function of the values it reads.
"""

from __future__ import annotations

from ..errors import ChadError, Loc
from ..infer.inference import Spec
from ..ir import nodes as ir
from ..ir.types import Float, Tup, VType, is_active
from ..names import NameSupply
from ..rules.registry import ZERO
from ..runtime import writes as writes
from ..runtime.cotangents import Zero
from ..runtime.environments import dense_zero
from ..runtime.scalar import read_unassigned
from ..target.expressions import Attr, CallX, DictX, Expr, Lit, Name, Obj, TupleX, call
from ..target.statements import AccNew, AccOne, AccPop, AccPush, Assign, Def, Do, If, Return, Stmt, bodies
from . import calls, loops, terms
from .stages import Stage
from .writes import Rewinds


def chad_spec(spec: Spec, stage: Stage) -> Def:
    """The CHAD form of one specialised function (Fig. 7; `returned_vectors.py` derives Fig. 2 from it)."""
    return Chad(spec, stage).function()


class Chad:
    """The CHAD transformation of one specialisation (Fig. 7): its slots, cotangent names and accumulator, and the
    structural rules (function, block, let, case); `terms`, `loops` and `calls` hold the others."""

    def __init__(self, spec: Spec, stage: Stage):
        self.spec = spec
        self.stage = stage
        self.layout: list[str] = []  # the variable in each slot, at the current point
        names = set(spec.types) | set(spec.fn.params)
        for s in [spec, *spec.callees.values()]:  # module-level functions it calls: never hidden
            names |= {s.name, s.backward}
        self.names = NameSupply(names)  # never a builtin's or runtime helper's name either
        self.d = self.names.fresh("d")
        self.acc = self.names.fresh("acc")
        self.slot: dict[str, int] = {}  # variable -> its slot (De Bruijn level)
        self.ct: dict[str, str] = {}  # variable -> the name of its cotangent
        self.max_depth = 0
        self.layouts: dict[int, tuple[Obj, VType]] = {}  # the naive stage's `dense_layout`s, by type object
        # the log of the function's in-place writes (`runtime.writes.Writes`), where a rule must rewind it
        self.rewinds = Rewinds(spec.fn, spec.methods, self.type_of, self.active, self.names)

    # ------------------------------------------------------------ helpers

    def type_of(self, atom: ir.Atom) -> VType:
        return self.spec.type_of(atom)

    def active(self, atom: ir.Atom | str) -> bool:
        if isinstance(atom, str):
            return is_active(self.spec.types[atom])
        return self.spec.active(atom)

    def open_slot(self, var: str, depth: int) -> int:
        self.slot[var] = depth
        self.layout[depth:] = [var]
        self.ct[var] = self.names.fresh("d" + var)
        self.max_depth = max(self.max_depth, depth + 1)
        return depth

    def cotangent_name(self, atom: ir.Atom | tuple) -> str:
        """A fresh name for the part of an argument's cotangent one rule computes, after the
        variable it belongs to (`dscale_part`; an (f, k) pair: a part of function value f's)."""
        return self.names.fresh(f"d{ir.name_hint(atom[0] if isinstance(atom, tuple) else atom)}_part")

    def zero(self, t: VType) -> Expr:
        """The zero cotangent of type t (the naive stage builds a tuple's in full, Fig. 4)."""
        if self.stage.dense_tuples and isinstance(t, Tup):
            return call(dense_zero, self.dense_layout(t))
        return zero_of(t)

    def dense_layout(self, t: VType) -> Obj:
        """The naive stage's layout of a tuple type's zero (`dense_zero`'s argument), one object per type
        object, so the generated code names each once (`tuple_type`)."""
        if id(t) not in self.layouts:
            self.layouts[id(t)] = Obj(dense_layout(t), "tuple_type"), t  # t kept: its id stays its own
        return self.layouts[id(t)][0]

    def primal(self, atom: ir.Atom) -> Expr:
        if isinstance(atom, ir.Var):
            return Name(atom.name)
        if isinstance(atom, ir.Ref):
            return Obj(atom.value, atom.path)
        if not _literal(atom.value):  # a default value that is an object: passed as one
            return Obj(atom.value, "default")
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
        for p in reversed(spec.copied):  # the function updates it in place: its own copy
            comment = "the function updates it in place: a copy (the caller's stays as it is)"
            fwd.insert(0, Assign([p], call(writes.copied_on_entry, Name(p)), comment=comment))
        if self.rewinds.log:
            fwd.insert(0, Assign([self.rewinds.log], call(writes.Writes), comment="the log of its in-place writes"))
        run: list[Stmt] = [
            AccNew(self.acc, max(self.max_depth, n_active), self.stage.environment, comment="one accumulator per call")
        ]
        for p in params:
            if self.active(p):
                run.append(
                    AccPush(self.acc, self.slot[p], self.ct[p], self.zero(spec.types[p]), comment=f"parameter {p}")
                )
        if body_bp is not None:
            run.append(self.bp_call(body_bp, Name(self.d)))
        for p in reversed(params):  # newest slot first, as a stack
            if self.active(p):
                run.append(AccPop(self.acc, self.slot[p], self.ct[p]))
        if self.rewinds.log and body_bp is not None:
            run.append(Do(CallX(Attr(Name(self.rewinds.log), "redo"), []), comment="the writes undone, made again"))
        run.append(Return(TupleX([Name(self.ct[p]) if self.active(p) else Lit(None) for p in params])))
        f_bp = self.names.fresh(spec.fn.name + "_bp")
        comment = f"run: the backpropagator of {spec.fn.name}, cotangents of its parameters"
        if n_active:
            comment += " (slots " + ", ".join(f"{p}={k}" for k, p in enumerate(self.layout[:n_active])) + ")"
        fwd.append(Def(f_bp, [self.d], run, comment=comment))
        fwd.append(Return(TupleX([self.primal(result), Name(f_bp)])))
        head = f"D[{spec.fn.name}]: the primal result and what its backpropagator reads"
        return Def(spec.name, list(params), fwd, comment=head)

    def block(
        self,
        block: ir.Block,
        depth: int,
        hint: str,
        wanted: bool = True,
        bp_name: str | None = None,
        results: list[ir.Atom] | None = None,
    ) -> tuple[list[Stmt], str | None]:
        """Forward code of a block and the name of its backpropagator (None if inactive).

        The backpropagator takes one cotangent per active result (a loop body has
        one result per state variable; other blocks one).
        """
        results = [block.result] if results is None else results
        # a backpropagator only where a cotangent can arrive: the caller wants one and
        # the result carries one (a branch returning a constant needs none)
        needs_bp = wanted and any(self.active(r) for r in results)
        fwd: list[Stmt] = []
        scoped: list[tuple[ir.Let, str | None]] = []  # let, its backpropagator
        d = depth
        for let in block.lets:
            bp = None
            targets = ir.bound_names(let)
            if needs_bp and any(self.active(t) for t in targets):
                bp = self.names.fresh("_".join(targets)[:40] + "_bp")
            fwd.extend(_located(self.let(let, d, bp), let.loc))
            for t in targets:
                if needs_bp and self.active(t):
                    self.open_slot(t, d)
                    d += 1
            scoped.append((let, bp))
        if not needs_bp:
            return fwd, None
        name = bp_name or self.names.fresh(hint + "_bp")
        fwd.append(self.block_backpropagator(name, scoped, results, depth))
        return fwd, name

    def block_backpropagator(
        self, name: str, scoped: list[tuple[ir.Let, str | None]], results: list[ir.Atom], depth: int
    ) -> Def:
        """A block's backpropagator: open a scope per let-bound variable (`push0`), feed each result's
        cotangent in, then close the scopes newest first, each variable's total to its let's backpropagator."""
        body: list[Stmt] = []
        for let, bp in scoped:
            for t in ir.bound_names(let):
                if bp is not None and self.active(t):
                    body.append(
                        AccPush(self.acc, self.slot[t], self.ct[t], self.zero(self.spec.types[t]), comment=f"scope {t}")
                    )
        params = [self.d] if len(results) == 1 else [self.names.fresh("d" + ir.name_hint(r)) for r in results]
        for r, dr in zip(results, params):
            body.extend(self.var(r, Name(dr)))
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
        params = [p for p, r in zip(params, results) if self.active(r)]
        scoped_names = [t for let, bp in scoped if bp is not None for t in ir.bound_names(let) if self.active(t)]
        result = ", ".join(ir.format_atom(r) for r in results)
        comment = f"D[let {', '.join(scoped_names)} in {result}]: " + (
            f"scopes {', '.join(f'{t}={self.slot[t]}' for t in scoped_names)}; d in, backpropagators newest first"
            if scoped_names
            else "d in"
        )
        return Def(name, [*params, self.acc], body, comment=comment, slots=depth)

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
                isinstance(self.spec.types[atom.name], Float),
                comment=f"D[{atom.name}]",
            )
        ]

    def let(self, let: ir.Let, depth: int, bp: str | None) -> list[Stmt]:
        """D[let x = e in s]: e's primal, then (if x carries a cotangent) e's backpropagator `bp`;
        `block` scopes x around the rest. One case per rule of Fig. 7, in the figure's order,
        then the extensions: arrays and loops (Section 7), calls, function values (Section 9)."""
        # a method call, a property, an object's call: the call it makes here; an array's attribute the
        # primitive it is (inference resolved them by type)
        e, target = self.spec.methods.get(id(let.expr), let.expr), let.target
        match e:
            case ir.Var() | ir.Const() | ir.Ref():
                rule = terms.variable
            case ir.MakeTuple() | ir.MakeRecord() | ir.MakeList() | ir.MakeDict() | ir.MakeClosure():
                rule = terms.pair
            case ir.Proj() | ir.Index() | ir.Slice() | ir.Field() | ir.EnvRead():
                rule = terms.projection
            case ir.Case():
                return [self.case(e, target, depth, bp)]
            case ir.Prim():
                rule = terms.operation
            case ir.ForLoop() | ir.WhileLoop():
                return loops.transform_loop(self, e, target, depth, bp)
            case ir.Call():
                return calls.user_call(self, e, let, depth, bp)
            case ir.Apply():
                return calls.apply(self, e, let, depth, bp)
            case ir.MethodCall():  # unresolved: its receiver is a variable not assigned here, whose read raised
                unreachable = call(read_unassigned, Lit(ir.format_atom(e.receiver)))
                return [Assign(ir.target_names(target), unreachable, comment="never reached: the read above raises")]
            case _:
                raise AssertionError(f"not an IR expression: {e!r}")
        primal = Assign(ir.target_names(target), terms.primal_expr(self, e))
        if bp is None:
            return [primal]
        try:
            name, body, saves = rule(self, e, target)
        except ChadError as err:
            raise err.located(let.loc) from None
        if self.rewinds.needed(let):
            self.rewinds.add(body, saves)
        text = f"let {', '.join(ir.target_names(target))} = {ir.format_expr(e, '')}"
        return [
            primal,
            *saves,
            Def(bp, [self.d, self.acc], body or [], comment=f"D[{text}]: {name}", slots=depth),
        ]

    # Each rule below gives the backpropagator's body of the expression it transforms, the rule's
    # name (for the comment) and any forward statements it needs (values a later `append` changes).

    def case(self, e: ir.Case, target: str | tuple[str, ...], depth: int, bp: str | None) -> If:
        """D[case z of {inl x -> s | inr y -> r}] := case z of {inl x -> <D[s]_1, λd. scope (D[s]_2 d)> | ...}:
        the condition is discrete (z' takes nothing), so each branch defines the same backpropagator."""
        branches = []
        for block, label in ((e.then, "then"), (e.orelse, "else")):
            fwd, _ = self.block(block, depth, label, wanted=bp is not None, bp_name=bp)
            if bp is not None and not self.active(block.result):  # a branch with an inactive result
                fwd.append(
                    Def(
                        bp,
                        [self.d, self.acc],
                        [],
                        comment="this branch's result carries no cotangent",
                        slots=depth,
                    )
                )
            fwd.append(Assign(ir.target_names(target), self.primal(block.result)))
            branches.append(fwd)
        return If(self.primal(e.cond), branches[0], branches[1], comment="D[case]" if bp else "")


def _located(stmts: list[Stmt], loc: Loc | None) -> list[Stmt]:
    """The statements (and those nested in them) with `loc` where they have no place yet:
    a let's primal and backpropagator come from its source line."""
    for s in stmts:
        if s.loc is None:
            s.loc = loc
        for body in bodies(s):
            _located(body, loc)
    return stmts


def _literal(value: object) -> bool:
    """A value Python source writes as a literal."""
    if isinstance(value, tuple):
        return all(map(_literal, value))
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes))


def zero_of(t: VType) -> Expr:
    """The zero cotangent of type t, as generated code."""
    return Lit(0.0) if isinstance(t, Float) else ZERO


def dense_layout(t: VType) -> object:
    """What the naive stage's `dense_zero` builds a cotangent of type t from: a tuple's, the tuple of its
    components' layouts; a float's, 0.0; any other, `Zero`."""
    if isinstance(t, Tup):
        return tuple(dense_layout(item) for item in t.items)
    return 0.0 if isinstance(t, Float) else Zero
