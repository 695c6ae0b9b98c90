"""`uniforms`: the cotangent of `np.sum(a)` or `np.mean(a)` is one number at every element of `a`; kept as
that number until it meets an array of its shape.

`sum_ct(d, a)` is a zero-stride view of the number d in a's shape. What the backward pass does with it
before it meets an array makes whole arrays of one repeated number: `dpower = unbroadcast(dense(dadded,
added), power)`, then `dsub = dpower * 2 * sub` multiplies twice (Rosenbrock's `np.sum(100 * (...) ** 2)`).
Where such an array of one number meets an array of its own shape in elementwise arithmetic (`peephole.Shapes`
says the shapes cannot differ), the number takes its place: `dsub = d * 2 * sub`, one multiplication of one
array. The number follows the view through what keeps
it one number: `dense` and `unbroadcast` to an array of its shape (the same number), `unbroadcast` to an
operand it was broadcast from (the number times how many elements each of the operand's stands for),
negation, and multiplication or division by a number. The arrays of one number nobody reads any more
are left to `dead`.

The numbers are made of names assigned once (never an older value's) and literals. A `Zero` cotangent stays
`Zero` through each step as the view did (`0.0 * x` is not `Zero * x`: Zero absorbs inf and nan), except `dense`,
which makes zeros of it: there the number is `as_number(d)`, 0.0 for Zero, since what follows a `dense` may
call NumPy on it (random programs, seeds 9227 and 10414: `np.divide` of a Zero in a Hessian-vector product).
"""

from __future__ import annotations

from typing import NamedTuple

from ..ir.types import Float, VType
from ..runtime import array_cotangents, reductions
from ..runtime.arrays import element_count
from ..target.expressions import BinOp, CallX, Expr, Lit, Name, UnaryOp, call, is_call_of
from ..target.statements import Assign, Def, map_exprs, map_statement_exprs, walk
from .peephole import Shapes

_MEETS = {"+", "-", "*", "/"}  # elementwise arithmetic where a number may stand for an array of it


class _Uniform(NamedTuple):
    """An array of one number: the number (an expression of names assigned once), an array of its shape (for
    counts), and its shape name (`Shapes`)."""

    number: Expr
    like: Expr
    shape: str


class _Uniforms:
    def __init__(self, fn: Def, types: dict[str, VType]):
        self.shapes = Shapes([fn], types)
        self.named: dict[str, _Uniform] = {}
        self.numbers: set[str] = set()  # the cotangents of whole sums and means: numbers, whatever their names
        for s in walk([fn]):  # definitions come before uses
            if isinstance(s, Assign) and len(s.targets) == 1 and self.shapes.bound[s.targets[0]] == 1:
                u = self.of(s.value)
                if u is not None:
                    self.named[s.targets[0]] = u

    def fixed(self, e: Expr) -> bool:
        """A number or an array that means the same wherever it is read: a literal, a name assigned once."""
        return isinstance(e, Lit) or isinstance(e, Name) and self.shapes.bound[e.id] <= 1

    def number(self, e: Expr) -> bool:
        return self.shapes.scalar(e) and self.fixed(e)

    def of(self, e: Expr) -> _Uniform | None:
        """e as an array of one number, if it is one."""
        shapes = self.shapes
        if isinstance(e, Name):
            return self.named.get(e.id)
        if isinstance(e, UnaryOp) and e.op == "-":
            u = self.of(e.operand)
            return u and u._replace(number=UnaryOp("-", u.number))
        if isinstance(e, BinOp) and e.op in ("*", "/"):
            u = self.of(e.left)
            if u is not None and self.number(e.right):
                return u._replace(number=BinOp(e.op, u.number, e.right))
            u = self.of(e.right)
            if u is not None and e.op == "*" and self.number(e.left):
                return u._replace(number=BinOp("*", e.left, u.number))
            return None
        if not isinstance(e, CallX) or e.keywords or len(e.args) < 2:
            return None
        first, like = e.args[0], e.args[1]
        rest = e.args[2:]
        whole = all(isinstance(a, Lit) for a in rest) and [a.value for a in rest] in ([], [None], [None, False])
        if (is_call_of(e, reductions.sum_ct) or is_call_of(e, reductions.mean_ct)) and whole:
            # the cotangent of a whole array's sum or mean is a number (or Zero), whatever its name's type
            if not (self.fixed(first) and self.fixed(like) and shapes.of(like) is not None):
                return None
            if isinstance(first, Name):
                self.numbers.add(first.id)
            number = first if is_call_of(e, reductions.sum_ct) else BinOp("/", first, call(element_count, like))
            return _Uniform(number, like, shapes.of(like))
        u = self.of(first)
        if u is None or len(e.args) != 2 or not self.fixed(like) or shapes.of(like) is None:
            return None
        if is_call_of(e, array_cotangents.dense) and shapes.of(like) == u.shape:
            return u._replace(number=call(array_cotangents.as_number, u.number), like=like)
        if is_call_of(e, array_cotangents.unbroadcast):
            if shapes.of(like) == u.shape:
                return u._replace(like=like)
            # summed down to an operand it was broadcast from: each of its elements stands for count(u) / count(x)
            ratio = BinOp("//", call(element_count, u.like), call(element_count, like))
            return _Uniform(BinOp("*", u.number, ratio), like, shapes.of(like))
        return None

    def met(self, e: Expr) -> Expr:
        """e with an array of one number that meets an array of its shape replaced by the number."""
        if isinstance(e, BinOp) and e.op in _MEETS:
            left, right = self.of(e.left), self.of(e.right)
            if left is not None and right is None and self.shapes.of(e.right) == left.shape:
                return BinOp(e.op, left.number, e.right)
            if right is not None and left is None and self.shapes.of(e.left) == right.shape:
                return BinOp(e.op, e.left, right.number)
        return e


def uniforms(fn: Def, types: dict[str, VType]) -> Def:
    u = _Uniforms(fn, types)
    if not u.named:
        return fn
    for name in u.numbers:  # typed as the numbers they are, so that `tidy` sees `d * 2 * a` shaped like `a`
        types.setdefault(name, Float(True))
    return map_statement_exprs([fn], lambda e: map_exprs(e, u.met))[0]
