"""Type and activity inference: which values carry cotangents, per call signature.

A `Program` holds every specialisation (function x argument types) reachable from
the function being differentiated. Inference runs to a fixpoint, so recursive and
mutually recursive functions get their result types; calls whose arguments are
all inactive run the original function and need no derivative at all.
"""

from __future__ import annotations

import types as pytypes
from dataclasses import dataclass, field

from . import ir
from .errors import ChadError, ChadTypeError
from .lower import lower_function
from .primitives import resolve
from .source import Watch
from .vtypes import ARR, BOTTOM, CONST, REAL, Dct, Lst, Tup, VType, dct, is_active, item_join, join, join_all, lst, tup

_MAX_ROUNDS = 50


@dataclass(eq=False)
class Spec:
    """One function specialised to the types of its parameters."""

    fn: ir.Function
    sig: tuple[VType, ...]
    name: str  # the name of its CHAD form in the generated code
    types: dict[str, VType] = field(default_factory=dict)
    result: VType = BOTTOM
    callees: dict[int, Spec] = field(default_factory=dict)  # id(ir.Call) -> callee specialisation

    def type_of(self, atom: ir.Atom) -> VType:
        return self.types[atom.name] if isinstance(atom, ir.Var) else CONST

    def active(self, atom: ir.Atom) -> bool:
        return is_active(self.type_of(atom))


class Program:
    """All specialisations needed to differentiate one entry point."""

    def __init__(self, watch: Watch):
        self.watch = watch
        self.lowered: dict[pytypes.FunctionType, ir.Function] = {}
        self.specs: dict[tuple[object, tuple[VType, ...]], Spec] = {}

    def spec(self, pyfunc: pytypes.FunctionType, sig: tuple[VType, ...]) -> Spec:
        key = (pyfunc, sig)
        if key not in self.specs:
            if pyfunc not in self.lowered:
                self.lowered[pyfunc] = lower_function(pyfunc, self.watch)
            fn = self.lowered[pyfunc]
            taken = {s.name for s in self.specs.values()}
            name, k = f"{fn.name}_chad", 0
            while name in taken:
                k += 1
                name = f"{fn.name}_chad_{k}"
            self.specs[key] = Spec(fn, sig, name)
        return self.specs[key]

    def infer(self, entry: Spec) -> list[Spec]:
        """Infer types to a fixpoint; return the specialisations reachable from `entry`."""
        for _ in range(_MAX_ROUNDS):
            count = len(self.specs)
            changed = False
            for spec in list(self.specs.values()):
                before = spec.result
                _Infer(self, spec).run()
                changed |= spec.result != before
            if not changed and len(self.specs) == count:
                break
        else:
            raise ChadError(f"the result type of `{entry.fn.name}` does not settle (a recursion that grows tuples?)")
        reachable, todo = [], [entry]
        while todo:
            s = todo.pop()
            if s not in reachable:
                reachable.append(s)
                todo.extend(s.callees.values())
        for s in reachable:  # BOTTOM left over only on paths that never return
            s.types = {k: (CONST if v is BOTTOM else v) for k, v in s.types.items()}
            s.result = CONST if s.result is BOTTOM else s.result
        return reachable


class _Infer:
    def __init__(self, program: Program, spec: Spec):
        self.program = program
        self.spec = spec

    def run(self) -> None:
        spec = self.spec
        spec.types = dict(zip(spec.fn.params, spec.sig))
        spec.callees = {}
        spec.result = join(spec.result, self.block(spec.fn.body))

    def block(self, block: ir.Block) -> VType:
        for let in block.lets:
            try:
                t = self.expr(let.expr)
                self.bind(let.target, t)
            except ChadError as e:
                if e.loc is None:
                    raise type(e)(e.message, let.loc) from None
                raise
        return self.atom(block.result)

    def bind(self, target: str | tuple[str, ...], t: VType) -> None:
        if isinstance(target, str):
            self.spec.types[target] = t
            return
        if isinstance(t, Tup):
            if len(t.items) != len(target):
                raise ChadTypeError(f"cannot unpack a tuple of {len(t.items)} into {len(target)} names")
            for name, item in zip(target, t.items):
                self.spec.types[name] = item
        elif t is REAL or t is ARR:
            raise ChadTypeError("cannot unpack a float or an array that carries derivatives; index it instead")
        elif isinstance(t, (Lst, Dct)):
            for name in target:
                self.spec.types[name] = item_join(t) if isinstance(t, Lst) else CONST
        else:
            for name in target:
                self.spec.types[name] = t  # CONST or BOTTOM

    def atom(self, a: ir.Atom) -> VType:
        return self.spec.types[a.name] if isinstance(a, ir.Var) else CONST

    def expr(self, e: ir.Expr) -> VType:
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return self.atom(e)
        if isinstance(e, ir.Prim):
            return self.prim(e)
        if isinstance(e, ir.Call):
            args = tuple(self.atom(a) for a in e.args)
            if BOTTOM in args:
                return BOTTOM
            if not any(is_active(t) for t in args):
                return CONST  # runs the original function: nothing to differentiate
            callee = self.program.spec(e.fn, args)
            self.spec.callees[id(e)] = callee
            return callee.result
        if isinstance(e, ir.MakeTuple):
            items = [self.atom(a) for a in e.items]
            return lst(join_all(items)) if e.kind == "list" else tup(items)
        if isinstance(e, ir.MakeDict):
            values = [self.atom(a) for a in e.values]
            constant = all(isinstance(k, (ir.Const, ir.Ref)) for k in e.keys)
            return dct(values, [k.value for k in e.keys] if constant else None)
        if isinstance(e, ir.GetItem):
            return self.getitem(e)
        if isinstance(e, ir.Case):
            return join(self.block(e.then), self.block(e.orelse))
        if isinstance(e, ir.Loop):
            return self.loop(e)
        raise AssertionError(e)

    def prim(self, e: ir.Prim) -> VType:
        args = [self.atom(a) for a in e.args]
        op = resolve(e.op, args)
        if op.discrete:
            return CONST
        if BOTTOM in args:
            return BOTTOM
        if op.type_rule is not None:
            return op.type_rule(*args)
        if any(isinstance(t, (Tup, Lst, Dct)) for t in args):
            raise ChadTypeError(f"`{op.name}` on a tuple, list or dict that carries derivatives is not supported")
        if not any(is_active(t) for t in args):
            return CONST
        if op.result == "array" or op.result == "same" and ARR in args:
            return ARR
        return REAL

    def getitem(self, e: ir.GetItem) -> VType:
        base = self.atom(e.base)
        if base is REAL:
            raise ChadTypeError("cannot index a float")
        if base is ARR:
            return ARR
        if isinstance(base, Dct):
            if e.of_loop:
                return CONST  # a loop over a dict yields its keys
            if isinstance(e.index, (ir.Const, ir.Ref)):
                return base.field(e.index.value)
            return item_join(base)
        if isinstance(base, Lst):
            return base if e.slice is not None else base.item
        if not isinstance(base, Tup):
            return base  # CONST or BOTTOM
        if e.slice is not None:
            if not isinstance(e.slice, slice):
                return lst(item_join(base))  # run-time bounds: its length is not known statically
            return tup(base.items[e.slice])
        if isinstance(e.index, ir.Var):
            return item_join(base)
        k = e.index.value
        if not isinstance(k, int) or not -len(base.items) <= k < len(base.items):
            raise ChadTypeError(f"tuple index {k!r} out of range for a tuple of {len(base.items)}")
        return base.items[k]

    def loop(self, e: ir.Loop) -> VType:
        """Iterate the body's types until the state's types settle (they only grow)."""
        types = [self.atom(a) for a in e.init]
        for _ in range(_MAX_ROUNDS):
            for name, t in zip(e.state, types):
                self.spec.types[name] = t
            if e.index is not None:
                self.spec.types[e.index] = CONST
            if e.test is not None:
                self.block(e.test)
            self.block(e.body)
            new = [join(t, self.atom(n)) for t, n in zip(types, e.next)]
            if new == types:
                break
            types = new
        else:
            raise ChadTypeError("the types of this loop's variables do not settle (a tuple that grows?)")
        return types[0] if len(types) == 1 else tup(types)
