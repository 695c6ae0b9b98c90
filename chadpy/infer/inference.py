"""Type and activity inference: which values carry cotangents, per call signature.

A `Program` holds every specialisation (function x argument types) reachable from
the function being differentiated. Inference runs to a fixpoint, so recursive and
mutually recursive functions get their result types; calls whose arguments are
all inactive run the original function and need no derivative at all (unless a
function value goes in or comes out: its code must be chadpy's).

A function value's type names its code (`Fn`), so a call of it (`Apply`) is a
static call of that code's specialisation, with the captured values' tuple as its
first argument (closure conversion, Appendix C).
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import types as pytypes
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import ChadError, ChadTypeError, Loc, UnknownFunction
from ..ir import nodes as ir
from ..ir.records import Constructor, is_namedtuple
from ..ir.types import (
    ARRAY_SUBCLASS,
    BOOL,
    BOTTOM,
    INT,
    NONE,
    OBJECT,
    SLICE,
    STR,
    Arr,
    Dct,
    Flag,
    Float,
    Fn,
    Lst,
    Rec,
    Tup,
    VType,
    activated,
    dct,
    describe,
    dtype_of,
    element,
    functions_in,
    holds_function,
    inactive,
    is_active,
    item_join,
    join,
    join_all,
    of_value,
)
from ..lower import objects
from ..lower.resolve import primitive_function
from ..names import numbered
from ..read.source import Watch
from ..rules.kinds import UNKNOWN, as_array
from ..rules.registry import lookup, resolve
from ..rules.scalar import ON_PATH
from ..runtime.scalar import UNASSIGNED
from . import ownership

_MAX_ROUNDS = 50
_MAX_SPECS = 2000


@dataclass(eq=False)
class Spec:
    """One function specialised to the types of its parameters."""

    fn: ir.Function
    sig: tuple[VType, ...]
    name: str  # the name of its CHAD form in the generated code
    backward: str = ""  # its backpropagator's (`pullbacks.name_apart` names both)
    types: dict[str, VType] = field(default_factory=dict)
    result: VType = BOTTOM
    callees: dict[int, Spec] = field(default_factory=dict)  # id(ir.Call or ir.Apply) -> callee specialisation
    # id(ir.MethodCall, or ir.Field of a property, or ir.Apply of an object) -> the call it makes here
    methods: dict[int, ir.Call] = field(default_factory=dict)
    # Only called with inactive arguments so far (to learn its result's kind): if chadpy cannot
    # type it, its callers run the original function instead, and `error` says why.
    optional: bool = False
    error: ChadError | None = None
    caller: tuple[Spec, Loc | None] | None = None  # the first call that needed it (for messages)
    references: ownership.Summary | None = None  # what a call of it does to references (`ownership`)
    outside: dict[str, VType] = field(default_factory=dict)  # the types of the outside data it reads
    # id(ir.Case) -> the branch its condition takes, known from the kinds of values (`y is None`, y None);
    # `fn` is then the code with only that branch (`_on_paths`), `full` the code as lowered
    taken: dict[int, bool] = field(default_factory=dict)
    full: ir.Function | None = None
    copied: tuple[str, ...] = ()  # differentiated parameters it updates in place: copied on entry (`ownership`)
    recursive: bool | None = None  # while `ownership` finds its summary: whether a call of it was met
    known: dict[str, bool] = field(default_factory=dict)  # the entry point's bool parameters: their values (`Flag`)
    # the outside data it stores differentiated values into, which it does not read again: name -> where
    stored_outside: dict[str, Loc] = field(default_factory=dict)
    # id(ir.Prim) of each `a op= b` whose a, typed as an array of unknown shape (data of a kind seen only when the
    # code runs), `ownership` could not prove the function's own: checked then to be a number (`not_an_array`)
    number_updates: set[int] = field(default_factory=set)

    def type_of(self, atom: ir.Atom) -> VType:
        if isinstance(atom, ir.Var):
            return self.types[atom.name]
        if isinstance(atom, ir.Ref):  # outside data: typed once per name (a list's walk is not repeated)
            if atom.value is UNASSIGNED:  # a variable read where it is not assigned: nothing after it completes
                return BOTTOM
            if atom.path not in self.outside:
                self.outside[atom.path] = of_value(atom.value, False)
            return self.outside[atom.path]
        return of_value(atom.value, False)

    def active(self, atom: ir.Atom) -> bool:
        return is_active(self.type_of(atom))


class Program:
    """All specialisations needed to differentiate one entry point."""

    def __init__(
        self,
        watch: Watch,
        lower: Callable[[object, Watch], ir.Function],
        jvp_entry: Callable[[object, tuple[VType, ...], bool, bool, Watch], ir.Function] | None = None,
    ):
        self.watch = watch
        self.lower = lower  # a user function's or class's code -> its IR (the front end: `pipeline.lower`)
        self.lowered: dict[object, ir.Function | ChadError] = {}
        self.specs: dict[tuple[object, tuple[VType, ...]], Spec] = {}
        # code, the types of its parameters (active where a tangent comes in), lifted, packed -> what `chad.jvp` of
        # it calls (the forward transformation: `pipeline.jvp_entry_of`)
        self.make_jvp_entry = jvp_entry
        self.jvp_entries: dict[tuple[object, tuple[VType, ...]], ir.Function] = {}

    def jvp_entry(self, code: object, sig: tuple[VType, ...], lifted: bool, packed: bool) -> ir.Function:
        """What `chad.jvp` of `code` at parameter types `sig` calls (made once per code and types; `lifted`: code
        taking its captured values first; `packed`: code taking its arguments as one `*args` tuple)."""
        key = (code, sig)
        if key not in self.jvp_entries:
            if self.make_jvp_entry is None:
                raise ChadError("chad.jvp inside differentiated code is not supported here")
            self.jvp_entries[key] = self.make_jvp_entry(code, sig, lifted, packed, self.watch)
        return self.jvp_entries[key]

    def function(self, code: object, arity: int) -> ir.Function:
        """The IR of a function's code: lifted already, a primitive as a function, or lowered now."""
        if isinstance(code, ir.Function):
            return code
        if isinstance(code, Constructor):
            if code not in self.lowered:
                self.lowered[code] = self.lower(code, self.watch)
            return self.lowered[code]
        if not isinstance(code, pytypes.FunctionType) or lookup(code) is not None:
            key = (code, arity)
            if key not in self.lowered:
                self.lowered[key] = primitive_function(code, arity)
            return self.lowered[key]
        if code not in self.lowered:
            try:
                self.lowered[code] = self.lower(code, self.watch)
            except ChadError as e:  # kept: an unreadable callee is tried once, not every round
                self.lowered[code] = e
        lowered = self.lowered[code]
        if isinstance(lowered, ChadError):
            raise lowered
        return lowered

    def spec(self, code: object, sig: tuple[VType, ...], optional: bool = False) -> Spec:
        key = (code, sig)
        if key in self.specs:
            spec = self.specs[key]
            if not optional and spec.optional:
                spec.optional = False
                if spec.error is not None:
                    raise spec.error
            return spec
        fn = self.function(code, len(sig))
        if len(fn.params) != len(sig):
            raise ChadTypeError(f"`{fn.name}` takes {len(fn.params)} arguments here, given {len(sig)}")
        name = numbered(f"{fn.name}_chad", {s.name for s in self.specs.values()})
        plain = tuple(BOOL if isinstance(t, Flag) else t for t in sig)  # a flag's value is known, its kind a bool
        self.specs[key] = Spec(fn, plain, name, optional=optional)
        self.specs[key].known = {p: t.value for p, t in zip(fn.params, sig) if isinstance(t, Flag)}
        return self.specs[key]

    def callee_of(self, spec: Spec, e: ir.Call) -> Spec | None:
        """The specialisation a call runs (or, for one that runs the original function, that chadpy read)."""
        return spec.callees.get(id(e)) or self.specs.get((e.fn, tuple(spec.type_of(a) for a in e.args)))

    def infer(self, entry: Spec) -> list[Spec]:
        """Infer types to a fixpoint; return the specialisations reachable from `entry`.

        Each round visits callees (found later) before callers, so results flow up a
        call chain in one round; a chain of n calls is found in n rounds."""
        rounds = 0
        while True:
            rounds += 1
            if rounds > _MAX_ROUNDS + 2 * len(self.specs) or len(self.specs) > _MAX_SPECS:
                raise ChadError(
                    f"the result type of `{entry.fn.name}` does not settle (a recursion that grows tuples?)"
                )
            count = len(self.specs)
            changed = False
            for spec in reversed(list(self.specs.values())):
                if spec.error is not None:
                    continue
                before = spec.result
                try:
                    _Infer(self, spec).run()
                except ChadError as e:
                    if not spec.optional:
                        raise _with_calls(e, spec) from None
                    spec.error, spec.result = e, OBJECT  # its callers run the original function
                changed |= spec.result != before
            if not changed and len(self.specs) == count:
                break
            if len(self.specs) == count and not any(s.callees for s in self.specs.values()):
                break  # no specialisation calls another: a round more would infer the same types
        reachable, todo = [], [entry]
        while todo:
            s = todo.pop()
            if s not in reachable:
                reachable.append(s)
                todo.extend(s.callees.values())
        for s in reachable:  # now report what an early round's unknown (BOTTOM) types excused
            try:
                _Infer(self, s, strict=True).run()
            except ChadError as e:
                raise _with_calls(e, s) from None
        for s in reachable:  # BOTTOM left over only on paths that never return
            s.types = {k: (OBJECT if v is BOTTOM else v) for k, v in s.types.items()}
            s.result = OBJECT if s.result is BOTTOM else s.result
            ownership.check_ownership(s, self.callee_of, entry=s is entry)
        ownership.check_outside_stores(reachable)
        return reachable


class _Infer:
    """One round of type inference over one specialisation: each let's type from its operands', callees specialised
    on the way."""

    def __init__(self, program: Program, spec: Spec, strict: bool = False):
        self.program = program
        self.spec = spec
        self.loc: Loc | None = None  # the let being inferred
        self.strict = strict  # types are final: a call of a non-function is an error now

    def run(self) -> None:
        spec = self.spec
        spec.fn = spec.full or spec.fn
        spec.types = dict(zip(spec.fn.params, spec.sig))
        spec.callees = {}
        spec.methods = {}
        spec.taken = {}
        self.defined: dict[str, ir.Expr] = {}
        spec.result = join(spec.result, self.block(spec.fn.body))
        spec.full, spec.fn = (spec.fn, _on_paths(spec)) if spec.taken else (None, spec.fn)

    def block(self, block: ir.Block) -> VType:
        for let in block.lets:
            self.loc = let.loc
            try:
                t = self.expr(let.expr)
                self.bind(let.target, t)
                if isinstance(let.target, str):
                    self.defined[let.target] = let.expr
            except ChadError as e:
                e.located(let.loc)
                if isinstance(let.expr, (ir.Call, ir.Apply)):
                    e.reached_from(let.loc)  # an error in the callee: this call led there
                raise e from None
        return self.atom(block.result)

    def bind(self, target: str | tuple[str, ...], t: VType) -> None:
        if isinstance(target, str):
            self.spec.types[target] = t
            return
        if isinstance(t, Tup):
            if len(t.items) != len(target):
                raise ChadTypeError(f"cannot unpack a tuple of {len(t.items)} into {len(target)} names")
            items = t.items
        elif is_active(t) and not isinstance(t, (Lst, Dct, Arr)) or isinstance(t, Fn):
            raise ChadTypeError(f"cannot unpack {describe(t)} that carries derivatives; index it instead")
        else:  # a list's elements, a dict's keys, an array's rows, a str's characters, data
            item = t.key if isinstance(t, Dct) else BOTTOM if t is BOTTOM else item_join(t)
            items = (item,) * len(target)
        for name, item in zip(target, items):
            self.spec.types[name] = item

    def atom(self, a: ir.Atom) -> VType:
        return self.spec.type_of(a)

    def expr(self, e: ir.Expr) -> VType:
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return self.atom(e)
        if isinstance(e, ir.Prim):
            return self.prim(e)
        if isinstance(e, ir.Call):
            return self.call(e, e.fn, tuple(self.atom(a) for a in e.args))
        if isinstance(e, ir.MethodCall):
            receiver = self.atom(e.receiver)
            if receiver is BOTTOM or receiver == NONE and not self.strict:
                return BOTTOM  # not known yet (None: perhaps only so far, an optional value)
            if receiver in (OBJECT, STR):  # data chadpy does not look into: its method runs as it is
                self.spec.methods[id(e)] = data_call = objects.data_method(e, receiver)
                return self.prim(data_call)
            return self.resolved(e, objects.call_of_method(e, receiver))
        if isinstance(e, ir.MakeRecord):
            values = tuple(self.atom(a) for a in e.values)
            if is_namedtuple(e.cls):
                return Tup(values, e.cls)
            return Rec(e.cls, tuple(zip(e.names, values)))
        if isinstance(e, ir.MakeClosure):
            return Fn(e.code, tuple(self.atom(a) for a in e.captured))
        if isinstance(e, ir.Jvp):
            return self.jvp(e)
        if isinstance(e, ir.Apply) and e.catch is not None:  # an attempt: <ok, the exception, the result>
            result = self.applied(e)
            return BOTTOM if result is BOTTOM else Tup((BOOL, OBJECT, result))
        if isinstance(e, ir.Apply):
            return self.applied(e)
        if isinstance(e, ir.MakeTuple):
            return Tup(tuple(self.atom(a) for a in e.items))
        if isinstance(e, ir.MakeList):
            items = [self.atom(a) for a in e.items]
            try:
                return Lst(join_all(items) if items else BOTTOM)
            except ChadTypeError:
                if any(map(is_active, items)):
                    raise
                return OBJECT  # data of mixed kinds (`LOG.extend([x.shape, 0.5])`): passed along as it is
        if isinstance(e, ir.MakeDict):
            values = [self.atom(a) for a in e.values]
            constant = all(isinstance(k, (ir.Const, ir.Ref)) for k in e.keys)
            key = join_all([self.atom(k) for k in e.keys])
            return dct(values, [k.value for k in e.keys] if constant else None, key)
        if isinstance(e, ir.Read):
            return self.read(e)
        if isinstance(e, ir.Case):
            return self.case(e)
        if isinstance(e, ir.Loop):
            return self.loop(e)
        raise AssertionError(e)

    def case(self, e: ir.Case) -> VType:
        """An `if`: the join of its branches' types. Where they cannot join (`return scores` if `y is None`, else
        `loss, grads`), a test the kinds of the values decide specialises it to the branch it takes (`taken`):
        the other branch is not in this specialisation."""
        known = self.known_branch(e.cond)
        if known is None:
            return join(self.block(e.then), self.block(e.orelse))
        taken, certain = known
        if certain:  # a value that is None: the other branch is never taken
            self.spec.taken[id(e)] = taken
            return self.block(e.then if taken else e.orelse)
        then, orelse = self.block(e.then), self.block(e.orelse)
        try:
            return join(then, orelse)
        except ChadTypeError:
            self.spec.taken[id(e)] = taken
            return then if taken else orelse

    def known_branch(self, cond: ir.Atom) -> tuple[bool, bool] | None:
        """The value of an `if`'s test `v is None` (`is not`) where the kind of v decides it, and whether that is
        certain: v is None (typed None: certain), or v is a parameter of a kind never
        None (the specialisation of `def f(X, y=None)` to an array y; but a value joined with an optional one can
        be None). The generated code checks it where it specialises the `if` (`on_path`)."""
        flag = self.flag(cond)
        if flag is not None:  # `if as_list:` on a bool argument whose value is known: taken where kinds differ
            return flag, False
        test = self.defined.get(cond.name) if isinstance(cond, ir.Var) else None
        if not (isinstance(test, ir.Prim) and test.op.name in ("is", "is_not") and ir.Const(None) in test.args):
            return None
        v = test.args[0] if test.args[1] == ir.Const(None) else test.args[1]
        t = self.atom(v)
        if t == NONE:
            none, certain = True, True
        elif isinstance(v, ir.Var) and v.name in self.spec.fn.params and _never_none(t):
            none, certain = False, False
        else:
            return None
        return (none if test.op.name == "is" else not none), certain

    def flag_value(self, a: ir.Atom) -> bool | None:
        """The value of a bool argument known here: a constant, or a bool parameter whose value is known."""
        if isinstance(a, ir.Const) and type(a.value) is bool:
            return a.value
        return self.spec.known.get(a.name) if isinstance(a, ir.Var) else None

    def flag(self, cond: ir.Atom) -> bool | None:
        """The value of a test that is a bool parameter of the entry point (`Flag`), or `not` of one."""
        if not isinstance(cond, ir.Var):
            return None
        if cond.name in self.spec.known:
            return self.spec.known[cond.name]
        test = self.defined.get(cond.name)
        if isinstance(test, ir.Prim) and test.op.name in ("not", "bool", "truth") and len(test.args) == 1:
            inner = self.flag(test.args[0])
            return None if inner is None else inner if test.op.name != "not" else not inner
        return None

    def applied(self, e: ir.Apply) -> VType:
        """The type of a call of a function value."""
        fn = self.atom(e.fn)
        if isinstance(fn, Rec):  # an object with `__call__`
            return self.resolved(e, objects.object_call(e, fn))
        if fn == OBJECT:  # data chadpy does not look into (a class made as written): called as it is
            self.spec.methods[id(e)] = data_call = objects.data_apply(e)
            return self.prim(data_call)
        if fn is BOTTOM or not isinstance(fn, Fn) and not self.strict:
            return BOTTOM  # perhaps not known yet (a list still being built)
        if not isinstance(fn, Fn):
            raise ChadTypeError(
                f"`{ir.format_atom(e.fn)}` is called, but it is not a function value chadpy made or can read "
                f"(it is {describe(fn)})"
            )
        args = tuple(self.atom(a) for a in e.args)
        if not isinstance(fn.code, ir.Function):  # a module-level function: its own defaults
            defaults = tuple(of_value(d, False) for d in python_defaults(fn.code, len(args)))
            return self.call(e, fn.code, (*args, *defaults), always=True)
        defaults = tuple(fn.env[k] for k in default_positions(fn.code, len(args)))
        return self.call(e, fn.code, (fn.env_type, *args, *defaults), always=True)

    def jvp(self, e: ir.Jvp) -> VType:
        """`chad.jvp(f, primals, tangents)`: the call of f's forward form at the primals' types (each part that can
        carry a derivative given a tangent), made by the forward transformation (`Program.jvp_entry`)."""
        fn, primals, tangents = self.atom(e.fn), self.atom(e.primals), self.atom(e.tangents)
        if BOTTOM in (fn, primals, tangents):
            return BOTTOM
        if not isinstance(fn, Fn):
            raise ChadTypeError(f"chad.jvp differentiates a function, not {describe(fn)}")
        if not (isinstance(primals, Tup) and isinstance(tangents, Tup) and len(primals.items) == len(tangents.items)):
            raise ChadTypeError("chad.jvp takes tuples of primals and tangents of the same length")
        lifted = isinstance(fn.code, ir.Function) and fn.code.captured is not None
        params = tuple(activated(t) for t in primals.items)
        packed = _packed(fn.code)
        if packed:  # `def f(*args)`: its parameter is the tuple of them
            params = (Tup(params),)
        sig = (inactive(fn.env_type), *params) if lifted else params
        code = self.program.function(fn.code, len(sig))
        if len(code.params) != len(sig):
            raise ChadTypeError(f"chad.jvp of `{code.name}` inside differentiated code: give every argument")
        entry = self.program.jvp_entry(fn.code, sig, lifted, packed)
        return self.resolved(e, ir.Call(entry, [e.fn, e.primals, e.tangents]))

    def resolved(self, e: ir.Expr, call: ir.Call) -> VType:
        """The type of the call a method call, a property or an object's call makes here."""
        self.spec.methods[id(e)] = call
        return self.call(call, call.fn, tuple(self.atom(a) for a in call.args))

    def call(self, e: ir.Call | ir.Apply, code: object, args: tuple[VType, ...], always: bool = False) -> VType:
        """The result type of a call; registers the callee's specialisation where one is run.

        A bool argument whose value is known here (`f(x, True)`) is part of the callee's signature (`Flag`).
        Calls with inactive arguments run the original function (no derivative flows),
        unless a function value goes in or comes out (`always` for a function value's call);
        chadpy still reads the callee to know what kind of value it returns (`object` if it
        cannot: then nothing must flow through that value)."""
        if BOTTOM in args:
            return BOTTOM
        if isinstance(e, ir.Call) and len(e.args) == len(args):  # `f(x, True)`: specialised to the flag's value
            args = tuple(t if (v := self.flag_value(a)) is None else Flag("bool", v) for a, t in zip(e.args, args))
        always = always or isinstance(code, ir.Function)  # code chadpy wrote has no original to run
        if not always and not any(is_active(t) or holds_function(t) for t in args):
            try:
                callee = self.program.spec(code, args, optional=True)
            except ChadError:
                return OBJECT  # code chadpy cannot read, run as it is: fine while nothing flows through it
            if callee.error is not None:
                return OBJECT
            if not holds_function(callee.result):
                return inactive(callee.result)
        callee = self.program.spec(code, args)
        if callee.caller is None and callee is not self.spec:
            callee.caller = (self.spec, self.loc)
        self.spec.callees[id(e)] = callee
        if _transient(callee.result):
            raise ChadTypeError(
                f"`{callee.fn.name}` returns a function that captured a variable which changes later "
                "(a loop variable?): Python would use the new value when it runs; bind it as a default parameter"
            )
        if getattr(code, "transient", False) and holds_function(callee.result):
            raise ChadTypeError(
                f"`{callee.fn.name}` reads a variable which changes after this call and returns a function: "
                "Python's function would read the new value when it runs; pass the variable as an argument"
            )
        return callee.result

    def prim(self, e: ir.Prim) -> VType:
        """The kind its rule gives; active if a derivative flows through it (a differentiable
        primitive with an active argument)."""
        args = [self.atom(a) for a in e.args]
        if BOTTOM in args:
            return BOTTOM
        op = resolve(e.op, args)
        active = [k for k, t in enumerate(args) if is_active(t)]
        if op.data_only and active:
            raise UnknownFunction(
                f"no derivative rule for `{op.name}` (its argument {active[0] + 1} carries derivatives); "
                "register one with chadpy.defvjp"
            )
        if not op.containers and not op.discrete and any(isinstance(args[k], (Tup, Lst, Dct, Rec)) for k in active):
            t = args[next(k for k in active if isinstance(args[k], (Tup, Lst, Dct, Rec)))]
            raise ChadTypeError(f"`{op.name}` of {describe(t)} that carries derivatives is not supported")
        if active and not op.discrete and ARRAY_SUBCLASS in args:
            raise ChadTypeError(
                f"`{op.name}` of a NumPy array subclass (a masked array, a matrix) and a value that carries a "
                "derivative: its operations are not a plain array's; pass np.asarray(a), or np.ma.filled(a, 0.0) for "
                "a masked one"
            )
        consts = [a.value if isinstance(a, (ir.Const, ir.Ref)) else UNKNOWN for a in e.args]
        t = op.kind(args, consts)
        return t if active and not op.discrete else inactive(t)

    def read(self, e: ir.Read) -> VType:
        base = self.atom(e.base)
        if base is BOTTOM or base == NONE and not self.strict:
            return BOTTOM  # not known yet (None: perhaps only so far, a value None on one path only)
        if isinstance(e, ir.Field):
            array_attribute = objects.array_attribute(e, base)
            if array_attribute is not None:
                self.spec.methods[id(e)] = array_attribute
                return self.prim(array_attribute)
            getter = objects.property_call(e, base)
            return self.resolved(e, getter) if getter is not None else objects.field_type(e, base)
        of_loop = isinstance(e, ir.Index) and e.of_loop
        if isinstance(e, ir.EnvRead):  # a default argument, kept in the function value
            return base.env[e.index.value]
        if isinstance(base, Arr):
            return element(base) if of_loop else _array_item(base, e, self.atom(e.index))
        sliced = isinstance(e, ir.Slice) or self.atom(e.index) == SLICE  # `s = slice(1, None); xs[s]`
        if isinstance(base, Dct) and sliced:
            raise ChadTypeError("a dict cannot be sliced")
        if isinstance(base, Dct):
            if of_loop:
                return base.key  # a loop over a dict yields its keys
            if isinstance(e.index, (ir.Const, ir.Ref)):
                return base.field(e.index.value)
            return item_join(base)
        if isinstance(base, Lst):
            return base if sliced else base.item
        if isinstance(base, Tup):
            if sliced:
                if not isinstance(e, ir.Slice) or e.static is None:
                    return Lst(item_join(base))  # run-time bounds: its length is not known statically
                return Tup(base.items[e.static])
            if isinstance(e.index, ir.Var):
                return item_join(base)
            k = e.index.value
            if not isinstance(k, int) or not -len(base.items) <= k < len(base.items):
                raise ChadTypeError(f"tuple index {k!r} out of range for a tuple of {len(base.items)}")
            return base.items[k]
        if base == STR or base == OBJECT:
            return base  # a str's characters; data
        raise ChadTypeError(f"cannot index {describe(base)}")

    def loop(self, e: ir.Loop) -> VType:
        """Iterate the body's types until the state's types settle (they only grow)."""
        types = [self.atom(a) for a in e.init]
        for _ in range(_MAX_ROUNDS):
            for name, t in zip(e.state, types):
                self.spec.types[name] = t
            if isinstance(e, ir.ForLoop):  # a position, or a dict's key
                self.spec.types[e.index] = item_join(self.atom(e.seq))
            else:
                self.block(e.test)
            self.block(e.body)
            new = [join(t, self.atom(n)) for t, n in zip(types, e.next)]
            if new == types:
                break
            types = new
        else:
            raise ChadTypeError("the types of this loop's variables do not settle (a tuple that grows?)")
        for name, t in zip(e.state, types):
            if _transient(t):
                raise ChadTypeError(
                    f"`{name}` carries a function made in this loop into its next iteration, but the function "
                    "captured a variable the loop changes: Python would use the new value; bind it as a default "
                    "parameter (`lambda y, k=k: ...`)"
                )
        return types[0] if len(types) == 1 else Tup(tuple(types))


def _packed(code: object) -> bool:
    """Whether a function takes its arguments as one `*args` tuple and nothing else."""
    c = getattr(code, "__code__", None)
    return c is not None and c.co_argcount == 0 and c.co_kwonlyargcount == 0 and bool(c.co_flags & inspect.CO_VARARGS)


def _with_calls(e: ChadError, spec: Spec) -> ChadError:
    """The error with the chain of calls that led to `spec` (the user's outermost call first)."""
    seen = set()
    while spec.caller is not None and id(spec) not in seen:
        seen.add(id(spec))
        spec, loc = spec.caller
        e.reached_from(loc)
    return e


def python_defaults(code: object, given: int) -> list[object]:
    """The default values of the parameters a call of Python function `code` with `given`
    positional arguments leaves out (none for a primitive: it takes what it is given)."""
    if not isinstance(code, pytypes.FunctionType):
        return []
    params = list(inspect.signature(code).parameters.values())
    missing = params[given:]
    if len(params) < given or any(p.default is p.empty for p in missing):
        raise ChadTypeError(f"`{code.__name__}` takes {len(params)} arguments (some with defaults), given {given}")
    return [p.default for p in missing]


def default_positions(code: ir.Function, given: int) -> list[int]:
    """Where the function value of lifted `code` keeps the defaults of the parameters a call
    with `given` arguments leaves out."""
    own = code.params[1:]
    missing = own[given:]
    if len(own) < given or any(p not in code.defaults for p in missing):
        raise ChadTypeError(f"`{code.name}` takes {len(own)} arguments (some with defaults), given {given}")
    return [len(code.captured) + code.defaults.index(p) for p in missing]


def _transient(t: VType) -> bool:
    """Whether t holds a function value that must not outlive the variables it captured."""
    return any(getattr(f.code, "transient", False) for f in functions_in(t))


def _array_item(base: Arr, e: ir.Read, index: VType) -> VType:
    """The type of `x[index]` for an array x (NumPy's rules): ints and integer arrays (or lists) index
    an axis each and together add the axes of their broadcast shape, slices keep an axis, `None` adds
    one, a boolean mask of rank k replaces k axes by one; anything else gives an array of any rank."""
    if isinstance(e, ir.Slice) and e.static is not None:
        return base
    parts = index.items if isinstance(index, Tup) else (index,)
    dropped, added, advanced = 0, 0, []
    for part in parts:
        if part == INT or isinstance(part, (Arr, Lst)) and dtype_of(as_array(part)) == "i":
            dropped += 1
            advanced.append(as_array(part).rank)
        elif part == NONE:
            added += 1
        elif isinstance(part, Arr) and part.dtype == "b" and len(parts) == 1 and part.rank is not None:
            dropped, added = part.rank, 1
        elif part != SLICE:
            return Arr(None, base.dtype, base.active)
    if None in advanced:
        return Arr(None, base.dtype, base.active)
    return element(base, dropped - added - max(advanced, default=0))


def _never_none(t: VType) -> bool:
    return isinstance(t, (Float, Arr, Tup, Lst, Dct, Rec, Fn)) or t in (INT, BOOL, STR)


def _on_paths(spec: Spec) -> ir.Function:
    """The function with each `if` in `spec.taken` replaced by the check of its test (`on_path`) and the branch
    it takes (its lets, the same objects: what inference found for them stays theirs)."""
    taken = spec.taken

    def block(b: ir.Block) -> ir.Block:
        lets: list[ir.Let] = []
        for let in b.lets:
            e = let.expr
            if isinstance(e, ir.Case) and id(e) in taken:
                branch = block(e.then if taken[id(e)] else e.orelse)
                check = ir.Prim(ON_PATH, [e.cond, ir.Const(taken[id(e)])])
                checked = numbered("_", spec.types)
                spec.types[checked] = NONE
                lets += [ir.Let(checked, check, let.loc), *branch.lets]
                lets.append(ir.Let(let.target, branch.result, let.loc))
            elif ir.blocks(e) and (inner := [block(x) for x in ir.blocks(e)]) != ir.blocks(e):
                lets.append(ir.Let(let.target, _with_blocks(e, inner), let.loc))
            else:
                lets.append(let)
        return b if all(map(operator.is_, lets, b.lets)) and len(lets) == len(b.lets) else ir.Block(lets, b.result)

    return dataclasses.replace(spec.fn, body=block(spec.fn.body))


def _with_blocks(e: ir.Expr, new: list[ir.Block]) -> ir.Expr:
    """A case or loop with its blocks (in `ir.blocks`' order) replaced."""
    if isinstance(e, ir.Case):
        return dataclasses.replace(e, then=new[0], orelse=new[1])
    if isinstance(e, ir.WhileLoop):
        return dataclasses.replace(e, test=new[0], body=new[1])
    return dataclasses.replace(e, body=new[0])
