"""The forward transformation: typed core IR -> core IR that computes each value with its tangent.

CHAD's forward half (Vákár and Smeding, TOPLAS 2022): a value x of a type a derivative flows through is
paired with its tangent dx, the linear map of the derivative applied to the input's tangent, and each
construct's tangent is built from its parts' (one case per construct below, in the order of `chad/`'s:
variable, tuple, projection, case, operation, loop, call, function value). A specialisation
`f(x1..xn)` becomes `f_jvp(x1..xn, dx1..dxk) = <f(x1..xn), df>`, with a tangent parameter for each
parameter a derivative flows through and `None` for a result none flows through.

The result is core IR like the user's: `pipeline.forward_program` infers it again and compiles it (with
nothing differentiated, its primal code is the tangent program, `chad.jvp`), or differentiates it again:
reverse over forward is a Hessian-vector product, forward over forward a second directional derivative.
Tangents of containers have their structure (a tuple's tangent is the tuple of its components', `None`
where a component carries none; a function value's is its captured values'). A tangent is a new object
where its value is, and a view or the same object where its value is (`broadcast_like` copies where a
rule would hand on its argument's tangent), so the updates in place ownership allowed on the primal are
exact on the tangents too.
"""

from __future__ import annotations

import dataclasses
import types

from ..errors import ChadTypeError, Loc, UnknownFunction
from ..infer.inference import Spec, default_positions, python_defaults
from ..ir import nodes as ir
from ..ir.records import is_namedtuple
from ..ir.types import BOTTOM, Arr, Dct, Float, Lst, Tup, VType, is_active, is_number, tangent_of
from ..names import NameSupply
from ..rules.registry import resolve
from ..rules.tangents import (
    BROADCAST_LIKE,
    INDEX,
    ITEM,
    JOINED_ZEROS,
    PART_OR_NONE,
    TUPLE,
    ZEROS,
    Term,
    tangent_rule,
)
from ..runtime.scalar import UNASSIGNED


class Forward:
    """The forward transformations of a program's specialisations, made once each (a recursive call finds its
    callee's function before its body is done)."""

    def __init__(self) -> None:
        self.done: dict[tuple[Spec, bool], ir.Function] = {}

    def of(self, spec: Spec, with_env: bool = False) -> ir.Function:
        """`spec`'s function paired with tangents: its parameters, then a tangent per active one; <result, tangent>.
        `with_env`: as the code of a function value (lifted code takes its environment first; a function of the
        module takes an empty one), for an attempt, which calls a function value."""
        with_env = with_env and spec.fn.captured is None
        key = (spec, with_env)
        if key not in self.done:
            fn = spec.fn
            f = self.done[key] = ir.Function(f"{fn.name}_jvp", [], ir.Block([], ir.Const(None)), fn.loc, None)
            _Transform(self, spec, f).run()
            if with_env:
                f.params.insert(0, "no_env")
            if fn.captured is not None or with_env:
                f.captured = fn.captured or ()
        return self.done[key]


class _Transform:
    """The forward transformation of one specialisation."""

    def __init__(self, forward: Forward, spec: Spec, out: ir.Function):
        self.forward = forward
        self.spec = spec
        self.out = out
        self.names = NameSupply(set(spec.types) | set(spec.fn.params), reserve=False)
        self.tangents: dict[str, ir.Atom] = {}  # variable -> its tangent's atom
        self.lets: list[ir.Let] = []  # where the current block's lets go
        self.loc: Loc | None = None

    # ------------------------------------------------------------ helpers

    def type_of(self, a: ir.Atom | str) -> VType:
        return self.spec.types[a] if isinstance(a, str) else self.spec.type_of(a)

    def active(self, a: ir.Atom | str) -> bool:
        return is_active(self.type_of(a))

    def let(self, target: str | tuple[str, ...], e: ir.Expr) -> None:
        self.lets.append(ir.Let(target, e, self.loc))

    def fresh(self, hint: str, e: ir.Expr) -> ir.Var:
        name = self.names.fresh(hint)
        self.let(name, e)
        return ir.Var(name)

    def tangent_name(self, var: str) -> str:
        return self.names.fresh("d" + var)

    def tangent(self, a: ir.Atom) -> ir.Atom | None:
        """The tangent of an atom (None where no derivative flows)."""
        if isinstance(a, ir.Var) and self.active(a):
            return self.tangents[a.name]
        return None

    def part(self, a: ir.Atom) -> ir.Atom:
        """The tangent of a part of an active container: 0.0 for a float no derivative flows through, None for
        another such part (`types.component_tangent`)."""
        if self.active(a):
            return self.tangents[a.name]
        return ir.Const(0.0) if isinstance(self.type_of(a), Float) else ir.Const(None)

    def tangent_as(self, a: ir.Atom, t: VType) -> ir.Atom:
        """a's tangent as a value of type t's (a join's, a loop state's, a parameter's): zeros where a carries
        none but t does, a tuple's components each made so."""
        if not is_active(t):
            return ir.Const(0.0) if isinstance(t, Float) else ir.Const(None)
        source = self.type_of(a)
        if isinstance(a, ir.Ref) and a.value is UNASSIGNED or source is BOTTOM:
            return ir.Ref("unassigned", UNASSIGNED)  # no value on this path (a join's): no tangent either, no object
        if not is_active(source) and not (isinstance(source, Tup) and isinstance(t, Tup)):
            # a value that carries none joined with a float or an array: a number's tangent is 0.0 (a bool's too,
            # which `zeros_like_tangent` gives none), also where its type is only `object` (`v > 0.5 or s`)
            if isinstance(t, Float) or isinstance(t, Arr) and is_number(source):
                return ir.Const(0.0)
            return self.fresh("zeros", ir.Prim(JOINED_ZEROS if isinstance(t, Arr) else ZEROS, [a]))
        if _same_tangent(source, t):
            return self.tangents[a.name]
        if isinstance(source, Tup) and isinstance(t, Tup) and len(source.items) == len(t.items):
            da = self.tangents.get(a.name) if isinstance(a, ir.Var) else None  # None: a constant tuple
            parts = []
            for k, (s, u) in enumerate(zip(source.items, t.items)):
                part = self.fresh("part", ir.Proj(a, ir.Const(k)))
                self.spec.types[part.name] = s
                if is_active(s) and da is not None:
                    self.tangents[part.name] = self.fresh("dpart", ir.Proj(da, ir.Const(k)))
                parts.append(self.tangent_as(part, u))
            if t.cls is not None and is_namedtuple(t.cls):  # a namedtuple's tangent is one of its class
                return self.fresh("d" + ir.name_hint(a), ir.MakeRecord(t.cls, list(t.cls._fields), parts))
            return self.fresh("d" + ir.name_hint(a), ir.MakeTuple(parts))
        if isinstance(source, Dct) and isinstance(t, Dct) and source.fields is not None and isinstance(a, ir.Var):
            # a dict of known keys as one of other types (a dict of any keys: `{'w': x}` joined with `dict(...)`)
            keys = [k for k, _ in source.fields]
            targets = [dict(t.fields).get(k) if t.fields is not None else t.item for k in keys]
            if all(u is not None for u in targets):
                da = self.tangents[a.name]
                parts = []
                for k, s, u in zip(keys, (f for _, f in source.fields), targets):
                    part = self.fresh("part", ir.Index(a, ir.Const(k)))
                    self.spec.types[part.name] = s
                    if is_active(s):
                        self.tangents[part.name] = self.fresh("dpart", ir.Index(da, ir.Const(k)))
                    parts.append(self.tangent_as(part, u))
                return self.fresh("d" + ir.name_hint(a), ir.MakeDict([ir.Const(k) for k in keys], parts))
        raise ChadTypeError(
            f"forward mode: `{ir.format_atom(a)}` joins values whose derivatives differ in structure "
            f"({source!r} and {t!r}); not supported yet"
        )

    def emit(self, t: Term, hint: str, memo: dict[int, ir.Atom], inplace: bool = False) -> ir.Atom:
        """A tangent rule's term as lets (each subterm once); its atom."""
        if id(t) in memo:
            return memo[id(t)]
        atom = t.atom
        if atom is None:
            args = [self.emit(a, "t", memo) for a in t.args]
            if t.head == TUPLE:
                e: ir.Expr = ir.MakeTuple(args)
            elif isinstance(t.head, tuple) and t.head[0] == ITEM:
                e = ir.Index(args[0], ir.Const(t.head[1]))
            elif t.head == INDEX:
                e = ir.Index(args[0], args[1])
            elif isinstance(t.head, types.FunctionType):  # Python chadpy reads (`tangents.python`)
                e = ir.Call(t.head, args)
            else:
                op = t.head
                if op.params is not None and len(args) < len(op.params):  # its defaults, as a call binds them
                    args += [ir.Const(v) for v in op.defaults[len(args) - len(op.params) :]]
                e = ir.Prim(op, args, inplace)
            atom = self.fresh(hint, e)
        memo[id(t)] = atom
        return atom

    def bind(self, target: str | tuple[str, ...], value: ir.Atom, dvalue: ir.Atom | None) -> None:
        """`let target = value`, and its tangent from dvalue (a tuple target destructures both)."""
        self.let(target, value)
        if dvalue is None:
            return
        if isinstance(target, str):
            if self.active(target):
                self.tangents[target] = dvalue
            return
        if not any(self.active(t) for t in target):
            return
        names = tuple(self.tangent_name(t) if self.active(t) else self.names.fresh("_") for t in target)
        self.let(names, dvalue)
        for t, dt in zip(target, names):
            if self.active(t):
                self.tangents[t] = ir.Var(dt)

    def paired(self, target: str | tuple[str, ...], e: ir.Expr, active: bool) -> None:
        """`let target = e` for an e whose value is <value, tangent> (a call of forward code, a case or a loop
        made so): taken apart where it is made (so `ownership` follows each part), the value bound to target,
        the tangent to target's."""
        value, dvalue = self.names.fresh("value"), self.names.fresh("dvalue")
        self.let((value, dvalue), e)
        self.spec.types[value] = _tuple_type(self, target) if isinstance(target, tuple) else self.type_of(target)
        self.bind(target, ir.Var(value), ir.Var(dvalue) if active else None)

    # ------------------------------------------------------------ functions and blocks

    def run(self) -> None:
        spec, out = self.spec, self.out
        params = list(spec.fn.params)
        for p in spec.fn.params:
            if self.active(p):
                name = self.tangent_name(p)
                self.tangents[p] = ir.Var(name)
                params.append(name)
        out.params = params
        self.loc = spec.fn.loc
        body = self.block(spec.fn.body, spec.result)
        out.body = body

    def block(self, b: ir.Block, result: VType | None) -> ir.Block:
        """The block's lets with their tangents; its result paired with its tangent as a value of type `result`
        (None: the result alone, for a block whose value carries no derivative out)."""
        outer, self.lets = self.lets, []
        for let in b.lets:
            self.loc = let.loc
            self.transform(let)
        if result is None:
            out = ir.Block(self.lets, b.result)
        else:
            dresult = self.tangent_as(b.result, result)
            out = ir.Block(self.lets, self.fresh("result", ir.MakeTuple([b.result, dresult])))
        self.lets = outer
        return out

    def transform(self, let: ir.Let) -> None:
        """One case per construct, in the order of `chad.transform.Chad.let`."""
        e = self.spec.methods.get(id(let.expr), let.expr)
        target = let.target
        active = any(self.active(t) for t in ir.target_names(target))
        if isinstance(target, tuple) and isinstance(e, ir.Prim) and active:  # one value, then its parts
            whole = self.names.fresh("whole")
            self.spec.types[whole] = Tup(tuple(self.type_of(t) for t in target))
            self.operation(whole, e, True)
            self.bind(target, ir.Var(whole), self.tangents[whole])
            return
        match e:
            case ir.Var() | ir.Const() | ir.Ref():
                self.bind(target, e, self.tangent(e))
            case ir.MakeTuple() | ir.MakeRecord() | ir.MakeList() | ir.MakeDict() | ir.MakeClosure():
                self.pair(target, e, active)
            case ir.Read():
                self.projection(target, e, active)
            case ir.Case():
                self.case(target, e, active)
            case ir.Prim():
                self.operation(target, e, active)
            case ir.Loop():
                self.loop(target, e, active)
            case ir.Call():
                self.call(target, e, active)
            case ir.Apply():
                self.apply(target, e, active)
            case _:  # an unresolved method call: its receiver is not assigned here, and its read raises
                self.let(target, e)

    # ------------------------------------------------------------ the rules

    def pair(self, target: str | tuple[str, ...], e: ir.Expr, active: bool) -> None:
        """T[<a, b>] = <da, db>, for every product: a tuple's tangent is its components' (None where one carries
        none), a list's its elements' (zeros where one carries none), a dict's and an object's by key, a
        function value's its captured values'."""
        if not active:
            self.let(target, e)
            return
        t = self.type_of(target) if isinstance(target, str) else None
        # the tangent's parts first: zeros made from a part read it before the product holds it (so that a list of
        # new arrays owns them, for `xs[i][k] = v` to update one in place)
        match e:
            case ir.MakeTuple(items):
                d: ir.Expr = ir.MakeTuple([self.part(a) for a in items])
            case ir.MakeList(items):
                item = t.item if isinstance(t, Lst) else None
                d = ir.MakeList([self.tangent_as(a, item or self.type_of(a)) for a in items])
            case ir.MakeDict(keys, values):
                d = ir.MakeDict(keys, [self.tangent_as(a, self._dict_part(t, k, a)) for k, a in zip(keys, values)])
            case ir.MakeRecord(cls, names, values):
                d = ir.MakeRecord(cls, names, [self.part(a) for a in values])
            case ir.MakeClosure(_, captured):
                d = ir.MakeTuple([self.part(a) for a in captured])
        value = self.fresh("made", e) if isinstance(target, tuple) else None
        if value is None:
            self.let(target, e)
        dvalue = self.fresh("d" + (target if isinstance(target, str) else "made"), d)
        if value is not None:
            self.bind(target, value, dvalue)
        else:
            self.tangents[target] = dvalue

    def _dict_part(self, t: VType | None, key: ir.Atom, value: ir.Atom) -> VType:
        if isinstance(t, Dct):
            if t.fields is not None and isinstance(key, (ir.Const, ir.Ref)):
                return t.field(key.value)
            if t.item is not None:
                return t.item
        return self.type_of(value)

    def projection(self, target: str | tuple[str, ...], e: ir.Read, active: bool) -> None:
        """T[x[i]] = dx[i]: the same part of the tangent (a record's attribute, a tuple's component, a list's or
        an array's element or slice); a function value's captured value is a component of its tangent tuple."""
        if not active or self.tangent(e.base) is None:
            self.let(target, e)
            return
        db = self.tangent(e.base)
        if isinstance(e, ir.EnvRead):
            d: ir.Expr = ir.Proj(db, e.index)
        else:
            d = dataclasses.replace(e, base=db)
        value = self.fresh("part", e) if isinstance(target, tuple) else None
        if value is None:
            self.let(target, e)
            self.tangents[target] = self.fresh("d" + target, d)
        else:
            self.bind(target, value, self.fresh("dpart", d))

    def case(self, target: str | tuple[str, ...], e: ir.Case, active: bool) -> None:
        """T[case c of {s | r}] = case c of {<s, ds> | <r, dr>}: each branch pairs its result with its tangent as a
        value of the join's type (zeros where a branch's carries none); c is discrete."""
        if not active:
            self.let(target, e)
            return
        t = self.type_of(target) if isinstance(target, str) else _tuple_type(self, target)
        then, orelse = self.block(e.then, t), self.block(e.orelse, t)
        self.paired(target, ir.Case(e.cond, then, orelse), True)

    def operation(self, target: str | tuple[str, ...], e: ir.Prim, active: bool) -> None:
        """T[op(x1..xn)] = Dop(x1..xn)(dx1..dxn): the primitive's tangent rule (`rules/tangents.py`) on its
        arguments' tangents, emitted as lets of primitives. An update in place (`xs.append(v)`, `a += b`) has
        its tangent computed first, from the values before the update, or, where the rule reads the result
        too, is made a new value (exact: `ownership` proved nobody else sees the old one)."""
        if not active or not isinstance(target, str):
            self.let(target, e)
            return
        types = [self.type_of(a) for a in e.args]
        op = resolve(e.op, types)
        rule = tangent_rule(op)
        if rule is None:
            if op.runtime_vjp is not None:
                raise UnknownFunction(f"`{op.name}` has a VJP from chadpy.defvjp but no tangent rule for forward mode")
            raise UnknownFunction(f"no tangent rule (JVP) for `{op.name}`: forward mode does not support it yet")
        ts = [None if (da := self.tangent(a)) is None else Term(da) for a in e.args]
        y = Term(ir.Var(target))
        out = rule(ts, y, *[Term(a, type=t) for a, t in zip(e.args, types)])
        if out is None:  # every part is zero (a constant's): the tangent is zeros
            self.let(target, e)
            zero = ir.Const(0.0) if isinstance(self.type_of(target), Float) else ir.Prim(ZEROS, [ir.Var(target)])
            self.tangents[target] = zero if isinstance(zero, ir.Const) else self.fresh("d" + target, zero)
            return
        result = self.type_of(target)
        if isinstance(result, Arr) and (out.atom is not None or op.elementwise and _may_broadcast(self, e.args)):
            # the result's shape, and never the same array as an argument's tangent
            out = Term(BROADCAST_LIKE, [out, y])
        # a resizing update of a fresh zeros (`append(zeros_like_tangent(xs), dv)`) is one in place too: read after it,
        # as a second derivative's forward pass would, the zeros would have the new length
        fresh = bool(out.args) and out.args[0].atom is None
        inplace = e.inplace and out.head is op and bool(out.args) and (not fresh or op.resizes)
        if e.inplace and not _reads(out, y):
            self.tangents[target] = self.emit(out, "d" + target, {}, inplace)
            self.let(target, e)
            return
        self.let(target, dataclasses.replace(e, inplace=False) if e.inplace else e)
        self.tangents[target] = self.emit(out, "d" + target, {}, inplace)

    def loop(self, target: str | tuple[str, ...], e: ir.Loop, active: bool) -> None:
        """T[loop with s = init: body; next] = loop with <s, ds> = <init, dinit>: T[body]; <next, dnext>: each
        state variable a derivative flows through carries its tangent (Section 7's fold, paired)."""
        carried = [s for s in e.state if self.active(s)]
        if not carried:
            self.let(target, e)
            return
        dstate = []
        for s in carried:
            name = self.tangent_name(s)
            dstate.append(name)
        dinit = [self.tangent_as(a, self.type_of(s)) for s, a in zip(e.state, e.init) if self.active(s)]
        for s, name in zip(carried, dstate):
            self.tangents[s] = ir.Var(name)
        outer, self.lets = self.lets, []
        for let in e.body.lets:
            self.loc = let.loc
            self.transform(let)
        dnext = [self.tangent_as(a, self.type_of(s)) for s, a in zip(e.state, e.next) if self.active(s)]
        body = ir.Block(self.lets, e.body.result)
        self.lets = outer
        loop = dataclasses.replace(
            e, state=[*e.state, *dstate], init=[*e.init, *dinit], body=body, next=[*e.next, *dnext]
        )
        finals = [self.names.fresh(s) for s in e.state]
        dfinals = [self.names.fresh("d" + s) for s in carried]
        self.let(tuple(finals + dfinals), loop)
        for s, f in zip(e.state, finals):
            self.spec.types[f] = self.type_of(s)
        value = ir.Var(finals[0]) if len(finals) == 1 else self.fresh("state", ir.MakeTuple(list(map(ir.Var, finals))))
        if len(e.state) == 1:
            dvalue: ir.Atom = ir.Var(dfinals[0])
        else:
            by_state = dict(zip(carried, dfinals))
            parts = [ir.Var(by_state[s]) if s in by_state else self.part(ir.Var(s)) for s in e.state]
            dvalue = self.fresh("dstate", ir.MakeTuple(parts))
        self.bind(target, value, dvalue)

    def call(self, target: str | tuple[str, ...], e: ir.Call, active: bool) -> None:
        """T[g(x1..xn)] = g_jvp(x1..xn, dx1..dxk): the callee's own forward form (a call through which no
        derivative flows runs the original function)."""
        callee = self.spec.callees.get(id(e))
        if callee is None:
            self.let(target, e)
            return
        args = list(e.args) + [self.tangent_as(a, t) for a, t in zip(e.args, callee.sig) if is_active(t)]
        self.paired(target, ir.Call(self.forward.of(callee), args), active)

    def apply(self, target: str | tuple[str, ...], e: ir.Apply, active: bool) -> None:
        """T[f(x1..xn)] for a function value f: its code's forward form on (f's captured values, x1..xn, the
        defaults it keeps) and their tangents (f's tangent is its captured values'); an attempt (`catch`) is
        attempted the same way, its result <value, tangent> taken apart where it completed."""
        callee = self.spec.callees.get(id(e))
        if callee is None:
            self.let(target, e)
            return
        fn_type = self.type_of(e.fn)
        lifted = callee.fn.captured is not None
        args, sig = list(e.args), callee.sig[1:] if lifted else callee.sig
        tangents: list[ir.Atom] = []
        dfn = self.tangent(e.fn)
        if lifted:
            for k in default_positions(callee.fn, len(e.args)):  # the defaults the function value keeps
                default = self.fresh("default", ir.EnvRead(e.fn, ir.Const(k)))
                self.spec.types[default.name] = fn_type.env[k]
                if dfn is not None and is_active(fn_type.env[k]):
                    self.tangents[default.name] = self.fresh("ddefault", ir.Proj(dfn, ir.Const(k)))
                args.append(default)
            if is_active(callee.sig[0]):
                tangents.append(dfn)
        else:  # a function of the module: the defaults of the parameters the call leaves out
            args += [ir.Const(d) for d in python_defaults(fn_type.code, len(e.args))]
        tangents += [self.tangent_as(a, t) for a, t in zip(args, sig) if is_active(t)]
        if e.catch is None and not lifted:
            self.paired(target, ir.Call(self.forward.of(callee), [*args, *tangents]), active)
            return
        code = self.forward.of(callee, with_env=True)
        env = [self.fresh("captured", ir.EnvRead(e.fn, ir.Const(k))) for k in range(len(fn_type.env))] if lifted else []
        fn = self.fresh(code.name, ir.MakeClosure(code, env))
        if e.catch is None:
            self.paired(target, ir.Apply(fn, [*args, *tangents]), active)
            return
        ok, caught, done = (self.names.fresh(n) for n in ("ok", "caught", "done"))
        self.let((ok, caught, done), ir.Apply(fn, [*args, *tangents], e.catch))
        value = self.fresh("value", ir.Prim(PART_OR_NONE, [ir.Var(done), ir.Const(0)]))
        result = ir.MakeTuple([ir.Var(ok), ir.Var(caught), value])
        dresult = None
        if active:
            dvalue = self.fresh("dvalue", ir.Prim(PART_OR_NONE, [ir.Var(done), ir.Const(1)]))
            dresult = self.fresh("dattempt", ir.MakeTuple([ir.Const(None), ir.Const(None), dvalue]))
        self.bind(target, self.fresh("attempt", result), dresult)


def _reads(t: Term, part: Term) -> bool:
    """Whether term t reads `part` (the primal result, in a tangent rule)."""
    return t is part or any(_reads(a, part) for a in t.args)


def _same_tangent(a: VType, b: VType) -> bool:
    """Whether values of types a and b have tangents of one structure (a float's and an array's are both
    numbers: an array type is the general representation of one)."""
    ta, tb = tangent_of(a), tangent_of(b)
    return ta == tb or _numeric(ta) and _numeric(tb)


def _numeric(t: VType) -> bool:
    return isinstance(t, (Float, Arr))


def _may_broadcast(tr: _Transform, args: list[ir.Atom]) -> bool:
    """Whether an elementwise operation's active argument may have another shape than its array result."""
    arrays = [a for a in args if isinstance(tr.type_of(a), Arr)]
    return any(tr.active(a) and (is_number(tr.type_of(a)) or len(arrays) > 1) for a in args)


def _tuple_type(tr: _Transform, target: tuple[str, ...]) -> VType:
    return Tup(tuple(tr.type_of(t) for t in target))


def tangent_output(code: ir.Function) -> ir.Function:
    """A function of the same parameters as forward form `code` returning only the tangent of its result:
    its gradient with respect to the primal parameters is a Hessian-vector product (reverse over forward)."""
    pair, tangent = ir.Var("pair"), "tangent"
    body = ir.Block(
        [
            ir.Let(pair.name, ir.Call(code, [ir.Var(p) for p in code.params]), code.loc),
            ir.Let(tangent, ir.Proj(pair, ir.Const(1)), code.loc),
        ],
        ir.Var(tangent),
    )
    return ir.Function(f"{code.name}_tangent", list(code.params), body, code.loc, None)


def jvp_entry(code: ir.Function, sig: tuple[VType, ...], lifted: bool, packed: bool = False) -> ir.Function:
    """What `chad.jvp(f, primals, tangents)` inside differentiated code calls: a function of (f, the primals' tuple,
    the tangents' tuple) running f's forward form `code` (inferred at `sig`: f's captured values, if `lifted`,
    then its parameters, active where a tangent comes in) on f's captured values, the primals and the tangents of
    the active ones (`packed`: f takes them as one `*args` tuple); its result is <f(*primals), tangent>."""
    loc = code.loc
    lets: list[ir.Let] = []
    args: list[ir.Atom] = []
    if lifted:
        env = sig[0]
        captured = [f"captured_{k}" for k in range(len(env.items))]
        lets += [ir.Let(c, ir.EnvRead(ir.Var("fn"), ir.Const(k)), loc) for k, c in enumerate(captured)]
        lets.append(ir.Let("env", ir.MakeTuple([ir.Var(c) for c in captured]), loc))
        args.append(ir.Var("env"))
    params = sig[1:] if lifted else sig
    if packed:  # `def f(*args)`: the tuples as they are
        primals, tangents = ("primals",), ("tangents",)
    else:
        primals = tuple(f"primal_{k}" for k in range(len(params)))
        tangents = tuple(f"tangent_{k}" for k in range(len(params)))
        lets += [ir.Let(p, ir.Proj(ir.Var("primals"), ir.Const(k)), loc) for k, p in enumerate(primals)]
        lets += [ir.Let(t, ir.Proj(ir.Var("tangents"), ir.Const(k)), loc) for k, t in enumerate(tangents)]
    args += [ir.Var(p) for p in primals]
    args += [ir.Var(t) for t, kind in zip(tangents, params) if is_active(kind)]
    lets.append(ir.Let("pair", ir.Call(code, args), loc))
    return ir.Function(f"{code.name}_entry", ["fn", "primals", "tangents"], ir.Block(lets, ir.Var("pair")), loc, None)
