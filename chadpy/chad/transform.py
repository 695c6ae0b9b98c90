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
primitive operation; then the extensions, each in its own module: loops (`fold.py`,
the fold of Section 7) and calls of user functions and of function values
(`calls.py`, compositional CHAD and Appendix C). Making a function value is making
the tuple of its captured values (the pair rule): a function value's own cotangent
is that of its captured values, the code has none.

A function `f` becomes `f_chad(params) -> (result, f_bp)`, where `f_bp(d)`
runs the accumulator (`run` of Table 2) and returns one cotangent per parameter;
`pullbacks.py` then makes `f_bp` a module-level function of the values it reads.
"""

from __future__ import annotations

from ..errors import ChadError, ChadTypeError, Loc
from ..infer.inference import Spec
from ..ir import nodes as ir
from ..ir.records import is_namedtuple, new_record
from ..ir.types import SLICE, Arr, Dct, Float, Fn, Lst, Rec, Tup, VType, is_active, is_number
from ..names import NameSupply
from ..rules.registry import ZERO, resolve
from ..runtime import writes as buffers
from ..runtime.arrays import index_ct
from ..runtime.closures import Closure
from ..runtime.cotangents import Zero, tuple_part
from ..runtime.environments import dense_one_hot, dense_zero
from ..runtime.sequences import element, slice_ct, updated
from ..target.expressions import Attr, CallX, DictX, Expr, Item, ListX, Lit, Name, Obj, TupleX, call, spelling
from ..target.statements import AccNew, AccOne, AccPop, AccPush, Assign, Def, Do, If, Return, Stmt, bodies, unpack
from . import calls, loops
from .stages import Stage
from .writes import Rewinds

# A rule's backpropagator: its name (for the comment), its body, and the forward statements it needs.
Rule = tuple[str, list[Stmt], list[Stmt]]


def chad_spec(spec: Spec, stage: Stage) -> Def:
    """The CHAD form of one specialised function (Fig. 7; `fig2.py` derives Fig. 2 from it)."""
    return Chad(spec, stage).function()


class Chad:
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
        # the log of the function's in-place writes (`buffers.Writes`), where a rule must rewind it
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
        return self.names.fresh(f"d{_plain(atom[0] if isinstance(atom, tuple) else atom)}_part")

    def env(self, depth: int) -> tuple[str, ...]:
        """Γ at a point of depth `depth`: the variable in each slot."""
        return tuple(self.layout[:depth])

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
        if self.rewinds.log:
            fwd.insert(0, Assign([self.rewinds.log], call(buffers.Writes), comment="the log of its in-place writes"))
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
            comment += " (slots " + ", ".join(f"{p}={k}" for k, p in enumerate(self.env(n_active))) + ")"
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
        body: list[Stmt] = []
        for let, bp in scoped:
            for t in ir.bound_names(let):
                if bp is not None and self.active(t):
                    body.append(
                        AccPush(self.acc, self.slot[t], self.ct[t], self.zero(self.spec.types[t]), comment=f"scope {t}")
                    )
        params = [self.d] if len(results) == 1 else [self.names.fresh("d" + _plain(r)) for r in results]
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
        fwd.append(Def(name, [*params, self.acc], body, comment=comment, env=self.env(depth)))
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
                isinstance(self.spec.types[atom.name], Float),
                comment=f"D[{atom.name}]",
            )
        ]

    def let(self, let: ir.Let, depth: int, bp: str | None) -> list[Stmt]:
        """D[let x = e in s]: e's primal, then (if x carries a cotangent) e's backpropagator `bp`;
        `block` scopes x around the rest. One case per rule of Fig. 7, in the figure's order,
        then the extensions: arrays and loops (Section 7), calls, function values (Section 9)."""
        e, target = let.expr, let.target
        match e:
            case ir.Var() | ir.Const() | ir.Ref():
                rule = self.variable
            case ir.MakeTuple() | ir.MakeRecord() | ir.MakeList() | ir.MakeDict() | ir.MakeClosure():
                rule = self.pair
            case ir.MethodCall() | ir.Field() | ir.Apply() if id(e) in self.spec.methods:
                return calls.user_call(self, self.spec.methods[id(e)], let, depth, bp)  # the call it makes here
            case ir.Proj() | ir.Index() | ir.Slice() | ir.Field() | ir.EnvRead():
                rule = self.projection
            case ir.Case():
                return [self.case(e, target, depth, bp)]
            case ir.Prim():
                rule = self.operation
            case ir.ForLoop() | ir.WhileLoop():
                return loops.transform_loop(self, e, target, depth, bp)
            case ir.Call():
                return calls.user_call(self, e, let, depth, bp)
            case ir.Apply():
                return calls.apply(self, e, let, depth, bp)
            case _:
                raise AssertionError(f"not an IR expression: {e!r}")
        primal = Assign(ir.target_names(target), self.primal_expr(e))
        if bp is None:
            return [primal]
        try:
            name, body, saves = rule(e, target)
        except ChadError as err:
            raise err.located(let.loc) from None
        if self.rewinds.needed(let):
            self.rewinds.add(body, saves)
        text = f"let {', '.join(ir.target_names(target))} = {ir.format_expr(e, '')}"
        return [
            primal,
            *saves,
            Def(bp, [self.d, self.acc], body or [], comment=f"D[{text}]: {name}", env=self.env(depth)),
        ]

    def primal_expr(self, e: ir.Expr) -> Expr:
        """The primal half of a rule that binds nothing: the expression itself, in the target language."""
        match e:
            case ir.Var() | ir.Const() | ir.Ref():
                return self.primal(e)
            case ir.MakeTuple(items):
                return TupleX([self.primal(a) for a in items])
            case ir.MakeList(items):
                return ListX([self.primal(a) for a in items])
            case ir.MakeDict(keys, values):
                return DictX([self.primal(k) for k in keys], [self.primal(v) for v in values])
            case ir.MakeRecord(cls, [], []):  # a new empty object, for its `__init__` to fill
                return call(new_record, Obj(cls, cls.__name__), DictX([], []))
            case ir.MakeRecord(cls, names, values):  # a dataclass's or namedtuple's generated constructor
                return CallX(Obj(cls, cls.__name__), [], {k: self.primal(v) for k, v in zip(names, values)})
            case ir.Field(base, index):
                return Attr(self.primal(base), index.value)
            case ir.MakeClosure(code, captured):
                return call(Closure, ir.code_name(code), TupleX([self.primal(a) for a in captured]))
            case ir.EnvRead(base, index):  # a default argument kept in a function value
                return Item(Attr(self.primal(base), "env"), self.primal(index))
            case ir.Index(base, index, of_loop=True) if isinstance(self.type_of(base), Dct):
                return self.primal(index)  # a loop over a dict yields its keys
            case ir.Index(base, index, of_loop=True) if not isinstance(self.type_of(base), (Lst, Tup, Arr)):
                return call(element, self.primal(base), self.primal(index))  # data: a dict or a sequence
            case ir.Read(base, index):
                return Item(self.primal(base), self.primal(index))
            case ir.Prim(op, args, inplace):
                op = resolve(op, [self.type_of(a) for a in args])
                xs = [self.primal(a) for a in args]
                if inplace and op.ufunc is not None and isinstance(self.type_of(args[0]), Arr):
                    # `a += b` on an array: a new array laid out like `a`, as Python's in-place update leaves it
                    return call(updated, Obj(op.ufunc, spelling(op.ufunc)), *xs)
                if op.logged and self.rewinds.log:
                    xs.append(Name(self.rewinds.log))
                return op.emit(*xs)
        raise AssertionError(e)

    # Each rule below gives the backpropagator's body of the expression it transforms, the rule's
    # name (for the comment) and any forward statements it needs (values a later `append` changes).

    def variable(self, e: ir.Atom, target: str | tuple[str, ...]) -> Rule:
        """D[x : t] := <x, λd. one_x d>  and  D[r] := <r, λd. return <>> (a constant takes nothing)."""
        return "a copy: d into the variable's slot", self.var(e, Name(self.d)), []

    def pair(self, e: ir.Expr, target: str | tuple[str, ...]) -> Rule:
        """D[<t, s>] := <<x, y>, λd. do x' (lfst d); y' (lsnd d)>, for every product: a tuple, a
        list, a dict, and a function value, which is the tuple of its captured values (Section 9)."""
        match e:
            case ir.MakeDict(keys, values):
                parts = list(zip(keys, values))
            case ir.MakeClosure(_, captured):
                parts = [(Lit(k), a) for k, a in enumerate(captured)]
            case ir.MakeRecord(cls, names, values):  # a namedtuple's components are its positions
                keys = range(len(names)) if is_namedtuple(cls) else names
                parts = [(Lit(k), a) for k, a in zip(keys, values)]
            case _:
                parts = [(Lit(k), a) for k, a in enumerate(e.items)]
        out = []
        for k, a in parts:
            if self.active(a):
                key = k if isinstance(k, Lit) else self.primal(k)
                out += self.var(a, call(tuple_part, Name(self.d), key, self.zero(self.type_of(a))))
        if isinstance(e, ir.MakeClosure):
            return "a function value is its captured values: each one's part of d (pack)", out, []
        return "each component's part of d (lfst, lsnd)", out, []

    def projection(self, e: ir.Read, target: str | tuple[str, ...]) -> Rule:
        """D[fst t] := <fst x, λd. x' <d, 0>>, generalised: the cotangent of x[i] is a one-hot
        cotangent of x, O(1) (a dict entry, or an index contribution of an array, Section 7)."""
        d = Name(self.d)
        base_t = self.type_of(e.base)
        x, index = self.primal(e.base), self.primal(e.index)
        if isinstance(base_t, Arr):
            return "an index contribution, scattered once", self.var(e.base, call(index_ct, d, x, index)), []
        if isinstance(base_t, Fn):
            return "a one-hot cotangent of the function's captured values", self.var(e.base, DictX([index], [d])), []
        if isinstance(base_t, Dct):
            return "a one-hot dict cotangent {k: d}", self.var(e.base, DictX([index], [d])), []
        if isinstance(base_t, Rec):
            return "a one-hot record cotangent {name: d}", self.var(e.base, DictX([index], [d])), []
        if isinstance(e, ir.Field):  # a namedtuple's component, by name
            e = ir.Proj(e.base, ir.Const(base_t.position(e.index.value)))
        saves: list[Stmt] = []
        if isinstance(e, ir.Slice) or self.type_of(e.index) == SLICE:  # `xs[1:]`, `xs[s]` for a slice s
            if isinstance(base_t, Tup) and isinstance(e, ir.Slice) and e.static is not None:
                positions: Expr = call(range, *range(len(base_t.items))[e.static].__reduce__()[1])
            else:
                positions = Name(self.names.fresh("positions"))
                saves.append(Assign([positions.id], Item(call(range, call(len, x)), index)))
            return "each element's part back in place", self.var(e.base, call(slice_ct, d, positions)), saves
        if isinstance(base_t, Tup):
            n = len(base_t.items)
            if isinstance(e.index, ir.Var):
                key: Expr = index % n  # a negative index names the same component
            else:
                key = Lit(e.index.value % n)
            if self.stage.dense_tuples:
                one_hot: Expr = call(dense_one_hot, self.dense_layout(base_t), key, d)
                return "a dense one-hot tuple <0, .., d, .., 0> (Fig. 4)", self.var(e.base, one_hot), []
            return "a one-hot tuple cotangent {k: d}", self.var(e.base, DictX([key], [d])), []
        assert isinstance(base_t, Lst)
        if isinstance(e, ir.Index) and e.natural or isinstance(e.index, ir.Const) and e.index.value >= 0:
            key = index
        else:  # the position now: a later append would change what a negative index means
            key = Name(self.names.fresh("position"))
            saves.append(Assign([key.id], index % call(len, x)))
        return "a one-hot list cotangent {i: d}", self.var(e.base, DictX([key], [d])), saves

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
                        env=self.env(depth),
                    )
                )
            fwd.append(Assign(ir.target_names(target), self.primal(block.result)))
            branches.append(fwd)
        return If(self.primal(e.cond), branches[0], branches[1], comment="D[case]" if bp else "")

    def operation(self, e: ir.Prim, target: str | tuple[str, ...]) -> Rule:
        """D[op(t1..tn)] := <op(x1..xn), λd. let <d1..dn> = Dop^t(x1..xn; d) in do x1' d1; ..; xn' dn>,
        and D[sign t] := <sign t, λd. return <>> (a discrete operation: no rule, and no cotangent
        reaches it, or `infer` said so)."""
        d, y = Name(self.d), Name(target if isinstance(target, str) else "")
        args = [self.primal(a) for a in e.args]
        op = resolve(e.op, [self.type_of(a) for a in e.args])
        rule = f"Dop^t of {op.name}, each part into its argument's slot"
        out: list[Stmt] = []
        saves: list[Stmt] = []
        if op.runtime_vjp is not None:  # a user rule: call it, then add each part
            parts = [self.cotangent_name(a) for a in e.args]
            cts = CallX(Obj(op.runtime_vjp, "vjp_" + op.name.split(".")[-1]), [d, y, *args])
            out.append(unpack(parts, cts))
            for a, p in zip(e.args, parts):
                out += self.var(a, Name(p))
            return rule + " (user rule)", out, saves
        extra = {}
        if op.saves is not None:
            saved = self.names.fresh("saved")
            saves.append(Assign([saved], op.saves(y, *args), comment=f"kept for D[{op.name}]"))
            extra["saved"] = Name(saved)

        def bind(value: Expr, hint: str) -> Name:
            name = self.names.fresh(hint)
            out.append(Assign([name], value))
            return Name(name)

        array_result = isinstance(target, str) and isinstance(self.spec.types.get(target), Arr)
        cts = op.transpose(d, y, args, bind, array_result, lambda k: self.broadcasts(e.args, k), **extra)
        if isinstance(cts, Expr):  # one expression computing every argument's part
            parts = [self.cotangent_name(a) if self.active(a) else "_" for a in e.args]
            out.append(unpack(parts, cts))
            cts = [Name(p) for p in parts]
        for k, (a, ct) in enumerate(zip(e.args, cts)):
            if not (isinstance(a, ir.Var) and self.active(a)) or ct is ZERO:  # ZERO: the rule says none
                continue
            if ct is None:
                raise ChadTypeError(f"`{op.name}` has no derivative with respect to its argument {k + 1}")
            out += self.var(a, ct)
        return rule, out, saves

    def broadcasts(self, args: list[ir.Atom], k: int) -> bool:
        """Whether argument k of an elementwise operation with an array result may have another shape
        than the result: a scalar always does; an array does unless every other argument is a scalar."""
        if not isinstance(self.type_of(args[k]), Arr):
            return True
        return any(not is_number(self.type_of(a)) for j, a in enumerate(args) if j != k and a != args[k])


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


def _plain(atom: ir.Atom) -> str:
    return atom.name if isinstance(atom, ir.Var) else "const"


def zero_of(t: VType) -> Expr:
    """The zero cotangent of type t, as generated code."""
    return Lit(0.0) if isinstance(t, Float) else ZERO


def dense_layout(t: VType) -> object:
    """What the naive stage's `dense_zero` builds a cotangent of type t from: a tuple's, the tuple of its
    components' layouts; a float's, 0.0; any other, `Zero`."""
    if isinstance(t, Tup):
        return tuple(dense_layout(item) for item in t.items)
    return 0.0 if isinstance(t, Float) else Zero
