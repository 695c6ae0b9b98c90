"""The CHAD rules of Fig. 7 for the expressions a `let` binds: variable and constant, tuple (unit and pair,
for every product: tuples, lists, dicts, records, function values), projection, and primitive operation.
`transform.Chad.let` picks one by the expression's form; each gives the backpropagator's body, the
rule's name (for the comment) and any forward statements it needs. `primal_expr` is the forward half.
"""

from __future__ import annotations

from ..errors import ChadTypeError
from ..ir import nodes as ir
from ..ir.records import is_namedtuple, new_record
from ..ir.types import OBJECT, SLICE, Arr, Dct, Float, Fn, Lst, Rec, Tup, is_number
from ..rules.registry import ZERO, resolve
from ..runtime.array_cotangents import index_ct, unpacked_ct
from ..runtime.closures import Closure
from ..runtime.cotangents import tuple_part
from ..runtime.environments import dense_one_hot
from ..runtime.scalar import augmented, not_an_array
from ..runtime.sequences import element, slice_ct, updated
from ..target.expressions import Attr, CallX, DictX, Expr, Item, ListX, Lit, Name, Obj, TupleX, call, spelling
from ..target.statements import Assign, Stmt, unpack
from .context import Rules

# A rule's backpropagator: its name (for the comment), its body, and the forward statements it needs.
Rule = tuple[str, list[Stmt], list[Stmt]]


def primal_expr(c: Rules, e: ir.Expr) -> Expr:
    """The primal half of a rule that binds nothing: the expression itself, in the target language."""
    match e:
        case ir.Var() | ir.Const() | ir.Ref():
            return c.primal(e)
        case ir.MakeTuple(items):
            return TupleX([c.primal(a) for a in items])
        case ir.MakeList(items):
            return ListX([c.primal(a) for a in items])
        case ir.MakeDict(keys, values):
            return DictX([c.primal(k) for k in keys], [c.primal(v) for v in values])
        case ir.MakeRecord(cls, [], []):  # a new empty object, for its `__init__` to fill
            return call(new_record, Obj(cls, cls.__name__), DictX([], []))
        case ir.MakeRecord(cls, names, values):  # a dataclass's or namedtuple's generated constructor
            return CallX(Obj(cls, cls.__name__), [], {k: c.primal(v) for k, v in zip(names, values)})
        case ir.Field(base, index):
            return Attr(c.primal(base), index.value)
        case ir.MakeClosure(code, captured):
            return call(Closure, ir.code_name(code), TupleX([c.primal(a) for a in captured]))
        case ir.EnvRead(base, index):  # a default argument kept in a function value
            return Item(Attr(c.primal(base), "env"), c.primal(index))
        case ir.Index(base, index, of_loop=True) if isinstance(c.type_of(base), Dct):
            return c.primal(index)  # a loop over a dict yields its keys
        case ir.Index(base, index, of_loop=True) if not isinstance(c.type_of(base), (Lst, Tup, Arr)):
            return call(element, c.primal(base), c.primal(index))  # data: a dict or a sequence
        case ir.Read(base, index):
            return Item(c.primal(base), c.primal(index))
        case ir.Prim(op, args, inplace):
            op = resolve(op, [c.type_of(a) for a in args])
            xs = [c.primal(a) for a in args]
            if inplace and c.type_of(args[0]) is OBJECT and not any(map(c.active, args)):
                return call(augmented, Lit(op.name), *xs)  # data: Python's `a op= b` (an array in place)
            if id(e) in c.spec.number_updates or inplace and c.type_of(args[0]) is OBJECT:
                xs[0] = call(not_an_array, xs[0])  # a value of unknown kind: checked to be a number
            if inplace and op.ufunc is not None and isinstance(c.type_of(args[0]), Arr):
                # `a += b` on an array: a new array laid out like `a`, as Python's in-place update leaves it
                return call(updated, Obj(op.ufunc, spelling(op.ufunc)), *xs)
            if op.logged and c.rewinds.log:
                xs.append(Name(c.rewinds.log))
            return op.emit(*xs)
    raise AssertionError(e)


def variable(c: Rules, e: ir.Atom, target: str | tuple[str, ...]) -> Rule:
    """D[x : t] := <x, λd. one_x d>  and  D[r] := <r, λd. return <>> (a constant takes nothing).
    An array unpacked into names (`m, b = theta`) takes its rows' cotangents as one scatter."""
    if isinstance(target, tuple) and isinstance(c.type_of(e), Arr):
        return "an array unpacked: its rows' cotangents", c.var(e, call(unpacked_ct, Name(c.d), c.primal(e))), []
    return "a copy: d into the variable's slot", c.var(e, Name(c.d)), []


def pair(c: Rules, e: ir.Expr, target: str | tuple[str, ...]) -> Rule:
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
        if c.active(a):
            key = k if isinstance(k, Lit) else c.primal(k)
            out += c.var(a, call(tuple_part, Name(c.d), key, c.zero(c.type_of(a))))
    if isinstance(e, ir.MakeClosure):
        return "a function value is its captured values: each one's part of d (pack)", out, []
    return "each component's part of d (lfst, lsnd)", out, []


def projection(c: Rules, e: ir.Read, target: str | tuple[str, ...]) -> Rule:
    """D[fst t] := <fst x, λd. x' <d, 0>>, generalised: the cotangent of x[i] is a one-hot
    cotangent of x, O(1) (a dict entry, or an index contribution of an array, Section 7)."""
    d = Name(c.d)
    base_t = c.type_of(e.base)
    x, index = c.primal(e.base), c.primal(e.index)
    if isinstance(base_t, Arr):
        return "an index contribution, scattered once", c.var(e.base, call(index_ct, d, x, index)), []
    if isinstance(base_t, Fn):
        return "a one-hot cotangent of the function's captured values", c.var(e.base, DictX([index], [d])), []
    if isinstance(base_t, Dct):
        return "a one-hot dict cotangent {k: d}", c.var(e.base, DictX([index], [d])), []
    if isinstance(base_t, Rec):
        return "a one-hot record cotangent {name: d}", c.var(e.base, DictX([index], [d])), []
    if isinstance(e, ir.Field):  # a namedtuple's component, by name
        e = ir.Proj(e.base, ir.Const(base_t.position(e.index.value)))
    saves: list[Stmt] = []
    if isinstance(e, ir.Slice) or c.type_of(e.index) == SLICE:  # `xs[1:]`, `xs[s]` for a slice s
        if isinstance(base_t, Tup) and isinstance(e, ir.Slice) and e.static is not None:
            positions: Expr = call(range, *range(len(base_t.items))[e.static].__reduce__()[1])
        else:
            positions = Name(c.names.fresh("positions"))
            saves.append(Assign([positions.id], Item(call(range, call(len, x)), index)))
        return "each element's part back in place", c.var(e.base, call(slice_ct, d, positions)), saves
    if isinstance(base_t, Tup):
        n = len(base_t.items)
        if isinstance(e.index, ir.Var):
            key: Expr = index % n  # a negative index names the same component
        else:
            key = Lit(e.index.value % n)
        if c.stage.dense_tuples:
            one_hot: Expr = call(dense_one_hot, c.dense_layout(base_t), key, d)
            return "a dense one-hot tuple <0, .., d, .., 0> (Fig. 4)", c.var(e.base, one_hot), []
        return "a one-hot tuple cotangent {k: d}", c.var(e.base, DictX([key], [d])), []
    assert isinstance(base_t, Lst)
    if isinstance(e, ir.Index) and e.natural or isinstance(e.index, ir.Const) and e.index.value >= 0:
        key = index
    else:  # the position now: a later append would change what a negative index means
        key = Name(c.names.fresh("position"))
        saves.append(Assign([key.id], index % call(len, x)))
    return "a one-hot list cotangent {i: d}", c.var(e.base, DictX([key], [d])), saves


def operation(c: Rules, e: ir.Prim, target: str | tuple[str, ...]) -> Rule:
    """D[op(t1..tn)] := <op(x1..xn), λd. let <d1..dn> = Dop^t(x1..xn; d) in do x1' d1; ..; xn' dn>,
    and D[sign t] := <sign t, λd. return <>> (a discrete operation: no rule, and no cotangent
    reaches it, or `infer` said so)."""
    d, y = Name(c.d), Name(target if isinstance(target, str) else "")
    args = [c.primal(a) for a in e.args]
    op = resolve(e.op, [c.type_of(a) for a in e.args])
    rule = f"Dop^t of {op.name}, each part into its argument's slot"
    out: list[Stmt] = []
    saves: list[Stmt] = []
    if op.runtime_vjp is not None:  # a user rule: call it, then add each part
        parts = [c.cotangent_name(a) for a in e.args]
        cts = CallX(Obj(op.runtime_vjp, "vjp_" + op.name.split(".")[-1]), [d, y, *args])
        out.append(unpack(parts, cts))
        for a, p in zip(e.args, parts):
            out += c.var(a, Name(p))
        return rule + " (user rule)", out, saves
    extra = {}
    if op.saves is not None:
        saved = c.names.fresh("saved")
        saves.append(Assign([saved], op.saves(y, *args), comment=f"kept for D[{op.name}]"))
        extra["saved"] = Name(saved)

    def bind(value: Expr, hint: str) -> Name:
        name = c.names.fresh(hint)
        out.append(Assign([name], value))
        return Name(name)

    array_result = isinstance(target, str) and isinstance(c.spec.types.get(target), Arr)
    number_result = isinstance(target, str) and isinstance(c.spec.types.get(target), Float)
    cts = op.transpose(d, y, args, bind, array_result, lambda k: broadcasts(c, e.args, k), number_result, **extra)
    if isinstance(cts, Expr):  # one expression computing every argument's part
        parts = [c.cotangent_name(a) if c.active(a) else "_" for a in e.args]
        out.append(unpack(parts, cts))
        cts = [Name(p) for p in parts]
    for k, (a, ct) in enumerate(zip(e.args, cts)):
        if not (isinstance(a, ir.Var) and c.active(a)) or ct is ZERO:  # ZERO: the rule says none
            continue
        if ct is None:
            raise ChadTypeError(f"`{op.name}` has no derivative with respect to its argument {k + 1}")
        out += c.var(a, ct)
    return rule, out, saves


def broadcasts(c: Rules, args: list[ir.Atom], k: int) -> bool:
    """Whether argument k of an elementwise operation with an array result may have another shape
    than the result: a scalar always does; an array does unless every other argument is a scalar."""
    if not isinstance(c.type_of(args[k]), Arr):
        return True
    return any(not is_number(c.type_of(a)) for j, a in enumerate(args) if j != k and a != args[k])
