"""The last pass over a simplified derivative: what no reader wants and no value needs.

1. `empty_branches`: an `if` with nothing in either branch (the backpropagators it chose
   between were inlined, and nothing was left) goes; `if c: pass else: s` becomes
   `if not c: s`.
2. `accumulate`: `dx = add(dx, v)` with a one-hot `v` adds in place instead of building `v`
   first: `add_at(dx, k, e)` for a dict entry `{k: e}`, `add_index(dx, ...)` for an array
   index contribution, `add_matmul_ct_a(dW, ...)` for a matrix-vector product's outer product.
3. `same_shapes`: `unbroadcast(e, x)` and `dense(e, x)` are `e` when `e` is already an array
   shaped like the array `x` (`unbroadcast(d * y, y)` in the derivative of `y * y`): the types say
   the shapes cannot differ.
4. `merge_one_hots`: two float contributions to one element, `dx = add_index(dx, u, x, i)` and
   later `dx = add_index(dx, v, x, i)` (the derivative of `x[i] * x[i]`), are added first:
   `dx = add_index(dx, u + v, x, i)`, one one-hot instead of two.

5. `literal_parts`: `dr = {1: dn}` read only as `tuple_part(dr, 1, 0.0)` (a loop's `break`
   status pair) reads `dn` instead.
6. `closure_tuples`: a function value read only for its captured values, `f = Closure('f', (a,))`
   read as `f.env` (its code's calls), is the tuple `f = (a,)`: Section 9's closure-converted value
   as it is, with no object to make (a recursion made one per call).

Each keeps every value the same: only code that computes nothing new is left out.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..ir.types import INT, Arr, Float, VType
from ..runtime import array_cotangents, cotangents
from ..runtime import numpy as numpy_runtime
from ..runtime.arrays import element_count
from ..runtime.closures import Closure
from ..target.expressions import Attr, BinOp, CallX, DictX, Expr, Lit, Name, Obj, UnaryOp, is_call_of
from ..target.statements import (
    Accum,
    Assign,
    Def,
    If,
    Replay,
    Stmt,
    expr_names,
    iter_exprs,
    lists_bottom_up,
    map_exprs,
    map_statement_exprs,
    replace,
    walk,
)


def tidy(fn: Def, types: dict[str, VType] | None = None) -> Def:
    stmts = closure_tuples(literal_parts(accumulate(empty_branches([fn]))))
    if types and any(isinstance(t, Arr) for t in types.values()):  # 3 and 4 are about arrays only
        stmts = merge_one_hots(same_shapes(stmts, types), types)
    return stmts[0]


# ------------------------------------------------------------------ 1. empty branches


def empty_branches(stmts: list[Stmt]) -> list[Stmt]:
    def drop(body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            if isinstance(s, If) and not s.body and _calls_nothing(s.test):
                if not s.orelse:
                    continue
                s = If(UnaryOp("not", s.test), s.orelse, [], comment=s.comment, loc=s.loc)
            out.append(s)
        return out

    return lists_bottom_up(stmts, drop)


def _calls_nothing(e: Expr) -> bool:
    return not any(isinstance(x, CallX) for x in iter_exprs(e))


# ------------------------------------------------------------------ 2. accumulation


def accumulate(stmts: list[Stmt]) -> list[Stmt]:
    def lower(body: list[Stmt]) -> list[Stmt]:
        return [_add(s) if isinstance(s, Accum) and not s.real else s for s in body]

    return lists_bottom_up(stmts, lower)


def _add(s: Accum) -> Stmt:
    """`name = add(name, value)`; a one-hot value is added in place instead of being built first."""
    name, value = Name(s.name), s.value
    if isinstance(value, DictX) and len(value.keys) == 1:  # add(dxs, {k: v})
        added = CallX(Obj(cotangents.add_at, "add_at"), [name, value.keys[0], value.values[0]])
    elif isinstance(value, CallX) and is_call_of(value, array_cotangents.index_ct):
        added = CallX(Obj(array_cotangents.add_index, "add_index"), [name, *value.args])
    elif isinstance(value, CallX) and is_call_of(value, numpy_runtime.matmul_ct_a) and not value.keywords:
        added = CallX(Obj(numpy_runtime.add_matmul_ct_a, "add_matmul_ct_a"), [name, *value.args])
    else:
        return s  # printed as `name = add(name, value)`
    return Assign([s.name], added, comment=s.comment, loc=s.loc)


# ------------------------------------------------------------------ 3. shapes

_ELEMENTWISE = {"+", "-", "*", "/", "**"}


class Shapes:
    """Which expressions are arrays shaped like a given array variable (its "shape name").

    An array variable (a type `Arr` of known rank >= 1) has its own shape; a variable assigned
    once has its value's (when that shape name is itself assigned at most once: never an older
    value's). Elementwise arithmetic of arrays of one shape, and of such an array with scalars, has
    that shape; so has a one-argument ufunc of an array, `dense(d, x)`, and `unbroadcast(e, x)` of
    such an array e. A tape's replay rebinds a name to the value the forward pass gave it."""

    def __init__(self, stmts: list[Stmt], types: dict[str, VType]):
        self.types = types
        # a Replay rebinds the values its Record saved (one iteration's, as in the forward pass)
        self.bound = Counter(n for s in walk(stmts) if not isinstance(s, Replay) for n in s.binds())
        self.shape: dict[str, str] = {}
        for s in walk(stmts):  # definitions come before uses
            if isinstance(s, Assign) and len(s.targets) == 1 and self.bound[s.targets[0]] == 1:
                like = self.of(s.value)
                if like is not None and self.bound[like] <= 1:
                    self.shape[s.targets[0]] = like

    def array(self, name: str) -> bool:
        t = self.types.get(name)
        return isinstance(t, Arr) and t.rank is not None and t.rank >= 1

    def scalar(self, e: Expr) -> bool:
        if isinstance(e, Lit):
            return isinstance(e.value, (int, float)) and not isinstance(e.value, bool)
        if isinstance(e, BinOp):  # arithmetic of numbers (`d * (element_count(a) // element_count(b)) * 2`)
            return self.scalar(e.left) and self.scalar(e.right)
        if isinstance(e, UnaryOp) and e.op == "-":
            return self.scalar(e.operand)
        if is_call_of(e, element_count):
            return True
        return isinstance(e, Name) and isinstance(self.types.get(e.id), Float)

    def of(self, e: Expr) -> str | None:
        """The shape name of e, if e is an array shaped like that variable."""
        if isinstance(e, Name):
            return self.shape.get(e.id) or (e.id if self.array(e.id) else None)
        if isinstance(e, UnaryOp) and e.op == "-":
            return self.of(e.operand)
        if isinstance(e, BinOp) and e.op in _ELEMENTWISE:
            left, right = self.of(e.left), self.of(e.right)
            if left is not None and (left == right or self.scalar(e.right)):
                return left
            if right is not None and self.scalar(e.left):
                return right
            return None
        if isinstance(e, CallX) and isinstance(e.func, Obj) and not e.keywords:
            f = e.func.obj
            if f is array_cotangents.dense and len(e.args) == 2:
                return self.of(e.args[1])
            if f is array_cotangents.unbroadcast and len(e.args) == 2 and self.of(e.args[0]) is not None:
                return self.of(e.args[1])  # an array's cotangent summed down to x's shape (never Zero)
            if isinstance(f, np.ufunc) and f.nin == 1 and f.nout == 1 and len(e.args) == 1:
                return self.of(e.args[0])
        return None

    def simpler(self, e: Expr) -> Expr:
        if (
            (is_call_of(e, array_cotangents.unbroadcast) or is_call_of(e, array_cotangents.dense))
            and len(e.args) == 2
            and not e.keywords
        ):
            value, like = e.args
            if isinstance(like, Name) and self.array(like.id) and self.of(value) == self.of(like) is not None:
                return value
        return e


def same_shapes(stmts: list[Stmt], types: dict[str, VType]) -> list[Stmt]:
    shapes = Shapes(stmts, types)
    return map_statement_exprs(stmts, lambda e: map_exprs(e, shapes.simpler))


# ------------------------------------------------------------------ 4. one-hots to one element


def merge_one_hots(stmts: list[Stmt], types: dict[str, VType]) -> list[Stmt]:
    bound = Counter(n for s in walk(stmts) for n in s.binds())

    def key(s: Stmt) -> tuple | None:
        """(dx, x, i) of `dx = add_index(dx, v, x, i)`: v the float cotangent of x[i], x a vector, i an int,
        v a name bound once (so it means the same further on)."""
        if not (isinstance(s, Assign) and len(s.targets) == 1 and is_call_of(s.value, array_cotangents.add_index)):
            return None
        ct, value, *where = s.value.args
        if not (isinstance(ct, Name) and ct.id == s.targets[0] and all(isinstance(e, Name) for e in (value, *where))):
            return None
        x, i = where
        vector = isinstance(types.get(x.id), Arr) and types[x.id].rank == 1 and types[x.id].dtype == "f"
        if not (vector and types.get(i.id) == INT and bound[value.id] == 1):
            return None
        return (ct.id, x.id, i.id)

    def merge(body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt | None] = []
        earlier: dict[tuple, int] = {}  # a one-hot's key -> its place in out, while nothing else reads dx
        for s in body:
            k = key(s)
            if k is not None and k in earlier:
                first = earlier.pop(k)
                u, v = out[first].value.args[1], s.value.args[1]
                out[first] = None
                s = replace(s, value=CallX(s.value.func, [s.value.args[0], BinOp("+", u, v), *s.value.args[2:]]))
            elif k is None and earlier:
                rebound = {n for t in walk([s]) for n in t.binds()}
                read = expr_names(s) | rebound
                earlier = {was: at for was, at in earlier.items() if was[0] not in read and rebound.isdisjoint(was)}
            if k is not None:
                earlier[k] = len(out)
            out.append(s)
        return [s for s in out if s is not None]

    return lists_bottom_up(stmts, merge)


# ------------------------------------------------------------------ 5. parts of a literal


def literal_parts(stmts: list[Stmt]) -> list[Stmt]:
    bound = Counter(n for s in walk(stmts) for n in s.binds())
    added = {s.name for s in walk(stmts) if isinstance(s, Accum)}

    def fixed(e: Expr) -> bool:  # means the same wherever it is read
        return isinstance(e, Lit) or isinstance(e, Name) and bound[e.id] == 1 and e.id not in added

    literals: dict[str, dict] = {}
    for s in walk(stmts):
        if isinstance(s, Assign) and len(s.targets) == 1 and isinstance(s.value, DictX):
            keys, values = s.value.keys, s.value.values
            if bound[s.targets[0]] == 1 and all(isinstance(k, Lit) for k in keys) and all(map(fixed, values)):
                literals[s.targets[0]] = {k.value: v for k, v in zip(keys, values)}
    if not literals:
        return stmts
    parts = Counter(e.args[0].id for e in iter_exprs(stmts) if _part_of(e, literals))
    reads = _read_counts(stmts)
    literals = {v: d for v, d in literals.items() if reads[v] == parts[v]}  # read only by tuple_part

    def read(e: Expr) -> Expr:
        return literals[e.args[0].id].get(e.args[1].value, e.args[2]) if _part_of(e, literals) else e

    def drop(body: list[Stmt]) -> list[Stmt]:
        return [s for s in body if not (isinstance(s, Assign) and len(s.targets) == 1 and s.targets[0] in literals)]

    return lists_bottom_up(map_statement_exprs(stmts, lambda e: map_exprs(e, read)), drop)


def _read_counts(stmts: list[Stmt]) -> Counter:
    """How many times each name is read: in expressions, and by statements that read names themselves (a tape)."""
    reads = Counter(e.id for e in iter_exprs(stmts) if isinstance(e, Name))
    reads.update(n for s in walk(stmts) for n in s.reads())
    return reads


def _part_of(e: Expr, literals: dict[str, dict]) -> bool:
    """e is `tuple_part(v, k, zero)` of a literal v with a literal key k."""
    return (
        is_call_of(e, cotangents.tuple_part)
        and len(e.args) == 3
        and isinstance(e.args[0], Name)
        and e.args[0].id in literals
        and isinstance(e.args[1], Lit)
    )


# ------------------------------------------------------------------ 6. function values as their captured values


def closure_tuples(stmts: list[Stmt]) -> list[Stmt]:
    made = {
        s.targets[0]
        for s in walk(stmts)
        if isinstance(s, Assign) and len(s.targets) == 1 and is_call_of(s.value, Closure)
    }
    if not made:  # the common case: one walk
        return stmts
    bound = Counter(n for s in walk(stmts) for n in s.binds())
    made = {v for v in made if bound[v] == 1}
    envs = Counter(e.value.id for e in iter_exprs(stmts) if _env_of(e, made))
    reads = _read_counts(stmts)
    made = {v for v in made if reads[v] == envs[v]}  # read only as `v.env`

    def read(e: Expr) -> Expr:
        return e.value if _env_of(e, made) else e

    def as_tuples(body: list[Stmt]) -> list[Stmt]:
        return [
            replace(s, value=s.value.args[1])
            if isinstance(s, Assign) and len(s.targets) == 1 and s.targets[0] in made
            else s
            for s in body
        ]

    return lists_bottom_up(map_statement_exprs(stmts, lambda e: map_exprs(e, read)), as_tuples)


def _env_of(e: Expr, made: set[str]) -> bool:
    """e is `v.env` of a function value v in `made`."""
    return isinstance(e, Attr) and e.attr == "env" and isinstance(e.value, Name) and e.value.id in made
