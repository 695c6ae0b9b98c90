"""Tangent rules (JVPs): a primitive's tangent from its arguments' tangents, written with primitives.

The forward transformation (`forward/transform.py`) pairs each value with its tangent, the linear map
of CHAD's forward half (Vákár and Smeding, TOPLAS 2022) applied to the input's tangent. A primitive's
tangent is computed by its rule, `jvp(ts, y, *xs) -> Term`: `ts` holds one tangent per argument (None
where none flows in: a constant, a shape, an axis), `y` is the primal result and `xs` the arguments.
Rules build `Term`s, expression trees over IR atoms whose operators and calls are primitives
(`t * m.cos(x)` is `mul(t, np.cos(x))`), which the transformation emits as `let`s. So the tangent code
is core IR like any other: inferred, differentiated again (reverse over forward for a Hessian-vector
product, forward over forward), and printed.

Most rules are one of three shapes, or follow from the VJP's formula:
- `linear(k, ...)`: the operation is linear in those arguments jointly (`np.sum`, `reshape`, an index,
  `append`, `concatenate`): the same operation on their tangents (zeros where one has none);
- `multilinear(k, ...)`: linear in each separately (`*`, `@`, `np.dot`, `np.outer`): the sum over the
  arguments of the operation with one replaced by its tangent;
- `pointwise` formulas (`registry.pointwise`, the operators): a function of numbers' transposed derivative
  is its derivative, so the VJP's formula, spelled with primitives (`TERMS_MATH`, `TERMS_NP`) and given
  an argument's tangent for `d`, is that argument's part of the tangent (`from_formula`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ChadTypeError, UnknownFunction
from ..ir import nodes as ir
from ..ir.types import (
    BOOL,
    BOTTOM,
    INT,
    NONE,
    OBJECT,
    STR,
    Arr,
    Dct,
    Discrete,
    Float,
    Lst,
    Tup,
    VType,
    activated,
    describe,
    is_active,
    tangent_of,
    with_parts,
)
from ..runtime import tangents as runtime
from ..runtime.array_cotangents import parts_ct, unbroadcast
from ..runtime.numpy import safe_divisor
from ..runtime.pointwise import strong_zero
from ..target.expressions import DictX, call
from .kinds import elementwise
from .registry import OPERATORS, PRIMITIVES, ZERO, Primitive, Spelling, function, lookup

# ---------------------------------------------------------------- terms


class Term:
    """A tangent rule's expression: an IR atom, a primitive applied to terms, a tuple of terms, or component
    `k` of a tuple-valued term. Operators build primitives' applications, as in the code they stand for."""

    __slots__ = ("head", "args", "type")

    def __init__(self, head: object, args: Sequence[Term] = (), type: VType | None = None):
        self.head = head  # an ir.Atom (a leaf), a Primitive, TUPLE, or (ITEM, k)
        self.args = tuple(args)
        self.type = type  # an argument's type, where the transformation knows it

    def __add__(self, o: object) -> Term:
        return apply("+", self, o)

    def __radd__(self, o: object) -> Term:
        return apply("+", o, self)

    def __sub__(self, o: object) -> Term:
        return apply("-", self, o)

    def __rsub__(self, o: object) -> Term:
        return apply("-", o, self)

    def __mul__(self, o: object) -> Term:
        return apply("*", self, o)

    def __rmul__(self, o: object) -> Term:
        return apply("*", o, self)

    def __truediv__(self, o: object) -> Term:
        return apply("/", self, o)

    def __rtruediv__(self, o: object) -> Term:
        return apply("/", o, self)

    def __floordiv__(self, o: object) -> Term:
        return apply("//", self, o)

    def __pow__(self, o: object) -> Term:
        return apply("**", self, o)

    def __matmul__(self, o: object) -> Term:
        return apply("@", self, o)

    def __rmatmul__(self, o: object) -> Term:
        return apply("@", o, self)

    def __neg__(self) -> Term:
        return Term(OPERATORS["neg"], [self])

    def __getitem__(self, k: object) -> Term:
        """Component k of a tuple-valued term (a rule's tuple result, `np.linalg.slogdet`'s pair)."""
        return Term((ITEM, k), [self])

    @property
    def atom(self) -> ir.Atom | None:
        """The IR atom this term is, if it is a leaf."""
        return self.head if not self.args and isinstance(self.head, (ir.Var, ir.Const, ir.Ref)) else None

    @property
    def constant(self) -> object:
        """The number this term is, if it is a constant written in the code (a literal exponent); else None."""
        a = self.atom
        return a.value if isinstance(a, ir.Const) and type(a.value) in (int, float) else None


TUPLE = "tuple"
ITEM = "item"
INDEX = "index"


def index(base: object, position: object) -> Term:
    """`base[position]` for a position computed by the rule (`max(xs)`'s tangent: dxs at the winner's)."""
    return Term(INDEX, [term(base), term(position)])


def term(x: object) -> Term:
    """x as a term: a term, an IR atom, or a constant."""
    if isinstance(x, Term):
        return x
    if isinstance(x, (ir.Var, ir.Const, ir.Ref)):
        return Term(x)
    return Term(ir.Const(x))


def apply(op: str | Primitive | Callable, *args: object) -> Term:
    """The primitive `op` (an operator's spelling, a registered function, or a primitive) applied to terms."""
    prim = OPERATORS[op] if isinstance(op, str) else op if isinstance(op, Primitive) else lookup(op)
    if prim is None:
        raise TypeError(f"{op!r} is not a primitive: a tangent rule is written with primitives")
    return Term(prim, [term(a) for a in args])


def python(fn: Callable, *args: object) -> Term:
    """A call of a function written in Python that chadpy reads (a tangent too long for one term: `math.prod`'s),
    differentiated again like the user's code."""
    return Term(fn, [term(a) for a in args])


def tuple_of(*items: object) -> Term:
    """A tuple of terms (the tangent of an operation returning a tuple)."""
    return Term(TUPLE, [term(x) for x in items])


def total(parts: Sequence[Term | None]) -> Term | None:
    """The sum of the parts that are there (None if none is)."""
    out = None
    for p in parts:
        if p is not None:
            out = p if out is None else out + p
    return out


class TermSpelling(Spelling):
    """A pointwise formula's spelling over terms: `m.cos(x)` is the primitive `np.cos` (or `math.cos`) applied
    to x, so the same formula writes the tangent code in primitives."""

    def __getattr__(self, name: str) -> Callable[..., Term]:
        return functools.partial(apply, getattr(self.module, name))


# ---------------------------------------------------------------- primitives tangent code needs


def _where_nonzero_jvp(ts: list, y: Term, mask: Term, v: Term) -> Term | None:
    return None if ts[1] is None else apply(WHERE_NONZERO, mask, ts[1])


# `v` where `mask` is non-zero, else 0: the derivative of `safe_divisor`, and a strong zero's mask
WHERE_NONZERO = function(
    runtime.where_nonzero,
    lambda d, y, mask, v: [ZERO, call(runtime.where_nonzero, mask, d)],  # the mask: piecewise constant
    (2, 2),
    kind=elementwise("where_nonzero", "f"),
    elementwise=True,
)
WHERE_NONZERO.jvp = _where_nonzero_jvp
# `ct`, exactly 0 where `d` is 0 (Enzyme's strong zero): a tangent through a pole's partial stays 0 where
# the tangent coming in is 0, not 0 * inf = NaN
STRONG_ZERO = function(
    strong_zero,
    lambda d, y, mask, ct: [ZERO, call(strong_zero, mask, d)],
    (2, 2),
    kind=lambda types, consts: types[1],
    name="strong_zero",
)
# (the mask is piecewise constant: a tangent only through ct, none where ct has none)
STRONG_ZERO.jvp = lambda ts, y, mask, ct: None if ts[1] is None else apply(STRONG_ZERO, mask, ts[1])
# x with its zeros made ones (a divisor whose numerator is 0 where x is): derivative 1 away from 0
SAFE_DIVISOR = function(
    safe_divisor,
    lambda d, y, x: [call(runtime.where_nonzero, x, d)],
    kind=elementwise("safe_divisor", "f"),
    elementwise=True,
)
SAFE_DIVISOR.jvp = lambda ts, y, x: apply(WHERE_NONZERO, x, ts[0])
# a tangent given the shape of the result it belongs to (`x + A` with x a number: x's tangent is A's shape),
# always a new array: it never shares data with the tangent it came from
BROADCAST_LIKE = function(
    runtime.broadcast_like,
    lambda d, y, v, like: [call(unbroadcast, d, v), ZERO],  # `like` gives only a shape
    (2, 2),
    kind=lambda types, consts: types[1],
)
BROADCAST_LIKE.jvp = lambda ts, y, v, like: None if ts[0] is None else apply(BROADCAST_LIKE, ts[0], like)


def _zeros_kind(t: VType) -> VType:
    """The type of the zero tangent of a value of type t: its structure, a float's 0.0, an array's float zeros
    (an int array's too), an empty list's or object's an empty one, None for an int, a str, None."""
    if isinstance(t, Float):
        return Float(False)
    if isinstance(t, Arr):
        return Arr(t.rank, "f")
    if isinstance(t, Lst) and t.item is BOTTOM:  # an empty list's: an empty list
        return t
    return with_parts(t, _zeros_kind) or NONE


# the zero tangent of a value: 0.0 for a float, a float array of zeros for an array, the same structure
# for tuples, lists, dicts and objects, None where no derivative can flow (an int, a str)
ZEROS = function(runtime.zeros_like_tangent, None, kind=lambda types, consts: _zeros_kind(types[0]))
# the same where the value is one of a join's that carries derivatives as a float or an array: 0.0 for a bool or
# an int too (a bool on one path of `v > 0.5 or a`)
JOINED_ZEROS = function(runtime.joined_zeros, None, kind=lambda types, consts: _zeros_kind(types[0]))


def _pow_base_tangent(m: Spelling, t: Term, a: Term, b: Term) -> Term:
    """a ** b's part from a's tangent t: t * b * a ** (b - 1), written out for an exponent in the code."""
    k = b.constant
    if k == 0:
        return None
    if k == 1:
        return t
    if k == 2:
        return t * a * 2.0
    if k is not None and k == int(k) and k > 0:
        return t * k * a ** (k - 1)
    # a quotient, not a product with a ** (b - 1): infinite at a pole (`sqrt` at 0), where reverse mode over this
    # code gives a zero cotangent zero through a quotient (its rule is a strong zero), and nan through a product
    # and exactly 0 where b == 0 (a ** 0 is constant: 0 * 0 ** -1 would be nan at a == 0)
    return apply(WHERE_NONZERO, b, apply(STRONG_ZERO, t, _without_raising(t * b / a ** (1.0 - b))))


def _pow_exponent_tangent(m: Spelling, t: Term, y: Term, a: Term) -> Term:
    """a ** b's part from b's tangent t: t * y * log(a), 0 where a == 0 (`x ** b` at 0 with b > 0), and where t is;
    NumPy's log in both flavours: nan for a < 0 (`(-2.0) ** 2.0`, whose partial in b is undefined), where
    `math.log` would raise."""
    return apply(STRONG_ZERO, apply(WHERE_NONZERO, a, t), t * y * apply(np.log, apply(SAFE_DIVISOR, a)))


TERMS_MATH = TermSpelling(
    math,
    # float(x): a number that joined a bool (`(a > b) or t`) may be True here, which np.sign takes no loop for
    times_sign=lambda d, x: d * apply(np.sign, apply(float, x)),
    safe_divisor=lambda x: apply(SAFE_DIVISOR, x),
    strong_zero=lambda d, ct: apply(STRONG_ZERO, d, ct),
    quotient=lambda a, b: a / b,
)
TERMS_NP = TermSpelling(
    np,
    times_sign=lambda d, x: d * apply(np.sign, x),
    safe_divisor=lambda x: apply(SAFE_DIVISOR, x),
    strong_zero=lambda d, ct: apply(STRONG_ZERO, d, ct),
    quotient=lambda a, b: apply(np.true_divide, a, b),
)
_SPELLINGS = {"math": TERMS_MATH, "numpy": TERMS_NP}


def _pow_jvp(m: Spelling) -> Callable:
    def jvp(ts: list, y: Term, a: Term, b: Term) -> Term:
        base = None if ts[0] is None else _pow_base_tangent(m, ts[0], a, b)
        exponent = None if ts[1] is None else _pow_exponent_tangent(m, ts[1], y, a)
        return total([base, exponent])

    return jvp


POW_MATH, POW_NP = _pow_jvp(TERMS_MATH), _pow_jvp(TERMS_NP)


# ---------------------------------------------------------------- the shapes of rules


def linear(*positions: int, zeros_like_result: tuple[int, ...] = ()) -> Callable:
    """The rule of an operation linear in the arguments at `positions` jointly (the others are not
    differentiated: a shape, an axis, a position): itself, on their tangents (zeros where one has none).
    `zeros_like_result`: the arguments whose zeros are made from the result, of their structure, not from
    them (a version of an object that missed an update in place, read no more after it: `views.py`'s
    write-backs, `x.__updated_by__(t)`)."""

    def jvp(ts: list, y: Term, *xs: Term, op: Primitive) -> Term:
        args = list(xs)
        for k in range(len(xs)) if positions == ALL else positions:
            if k < len(xs) and ts[k] is not None:
                args[k] = ts[k]
            elif k < len(xs):
                args[k] = apply(ZEROS, y) if k in zeros_like_result else zero_of(xs[k])
        return Term(op, args)

    return jvp


ALL = (-1,)  # `linear(*ALL)`: linear in every argument (`merged_keywords(*dicts)`)


def zero_of(x: Term) -> Term:
    """The zero tangent of an argument no derivative flows into: 0.0 for a number (`x[k] = 5` writes 0.0 into
    the tangent), zeros of its structure for a float, an array or a container, the value itself where no
    derivative can flow (None, a str)."""
    t = x.type
    if t in (INT, BOOL) or t is None and isinstance(x.constant, (int, float)):
        return term(0.0)
    if t is None and x.atom == ir.Const(None) or t in (NONE, STR, OBJECT):
        return x
    return apply(ZEROS, x)


def multilinear(*positions: int) -> Callable:
    """The rule of an operation linear in each argument at `positions` separately (a product): the sum over
    them of the operation with that argument replaced by its tangent."""

    def jvp(ts: list, y: Term, *xs: Term, op: Primitive) -> Term:
        parts = []
        for k in positions:
            if k < len(xs) and ts[k] is not None:
                parts.append(Term(op, [ts[j] if j == k else x for j, x in enumerate(xs)]))
        return total(parts)

    return jvp


def from_formula(op: Primitive) -> Callable | None:
    """The tangent rule a pointwise primitive's VJP formula gives (`registry.pointwise`, the operators):
    argument k's part is the formula's k-th cotangent with `d` its tangent (a function of numbers'
    derivative is its own transpose). None if the VJP is not such a formula."""
    vjp = op.vjp
    if not (isinstance(vjp, functools.partial) and vjp.args and isinstance(vjp.args[0], Spelling)):
        return None
    spelling = _SPELLINGS.get(getattr(vjp.args[0].module, "__name__", ""))
    if spelling is None:
        return None
    formula = vjp.func
    if getattr(formula, "__name__", "") == "<lambda>" and _is_pow(op):
        return POW_NP if spelling is TERMS_NP else POW_MATH
    strong = getattr(formula, "__name__", "") == "strong"  # `registry.strong_zeros`: a partial with a pole

    def jvp(ts: list, y: Term, *xs: Term) -> Term:
        parts = []
        for k, t in enumerate(ts):
            if t is not None:
                part = formula(spelling, t, y, *xs)[k]
                if part is not None and part is not ZERO and not isinstance(part, (Term, int, float)):
                    raise UnknownFunction(
                        f"the derivative formula of `{op.name}` calls code of its own: it needs a tangent rule (jvp)"
                    )
                parts.append(None if part is None or part is ZERO else term(part))
        out = total(parts)
        return _without_raising(out) if strong and out is not None else out

    return jvp


def _without_raising(t: Term) -> Term:
    """t with its quotients and powers NumPy's: at a pole they give inf (then zeroed where the tangent is 0, a
    strong zero), where Python's raise ZeroDivisionError (`d / (2 sqrt(x))` at 0, of a tangent never used)."""
    head = t.head
    if head is OPERATORS["/"]:
        head = PRIMITIVES[np.true_divide]
    elif head is OPERATORS["**"]:
        head = PRIMITIVES[np.power]
    if head is t.head and not t.args:
        return t
    return Term(head, [_without_raising(a) for a in t.args], t.type)


def _is_pow(op: Primitive) -> bool:
    return op.fn in (math.pow, np.power, np.float_power, pow) or op.name == "pow"


@dataclass(frozen=True)
class TangentRule:
    """A primitive's tangent rule as the forward transformation calls it: `rule(ts, y, *xs)`."""

    op: Primitive
    rule: Callable

    def __call__(self, ts: list, y: Term, *xs: Term) -> Term | None:
        if _takes_op(self.rule):  # `linear`, `multilinear`: the operation itself, on the tangents
            return self.rule(ts, y, *xs, op=self.op)
        return self.rule(ts, y, *xs)


def _takes_op(rule: Callable) -> bool:
    """Whether a rule takes the primitive it belongs to (as the keyword-only parameter `op`)."""
    code = getattr(rule, "__code__", None)
    return code is not None and "op" in code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]


def tangent_rule(op: Primitive) -> TangentRule | None:
    """The tangent rule of a differentiable primitive, if it has one (a pointwise one spelled over terms)."""
    jvp = op.jvp
    if isinstance(jvp, functools.partial) and jvp.args and isinstance(jvp.args[0], Spelling):
        spelling = _SPELLINGS.get(getattr(jvp.args[0].module, "__name__", ""))
        if spelling is not None and not isinstance(jvp.args[0], TermSpelling):
            jvp = functools.partial(jvp.func, spelling, *jvp.args[1:])
    if jvp is not None:
        return TangentRule(op, jvp)
    derived = from_formula(op)
    return None if derived is None else TangentRule(op, derived)


def _part_kind(types: list[VType], consts: list[object]) -> VType:
    pair = types[0]
    return pair.items[consts[1]] if isinstance(pair, Tup) and isinstance(consts[1], int) else BOTTOM


# component k of an attempt's completed result, None where the attempt raised (`rewrite/tries.py`)
PART_OR_NONE = function(
    runtime.part_or_none, lambda d, y, pair, k: [DictX([k], [d]), None], (2, 2), kind=_part_kind, containers=True
)
PART_OR_NONE.jvp = linear(0)


def _unit_tangents_kind(types: list[VType], consts: list[object]) -> VType:
    args = types[0]
    return Tup(tuple(tangent_of(activated(t)) for t in args.items)) if isinstance(args, Tup) else BOTTOM


def _gradient_type(x: VType, active: bool) -> VType:
    """The type of a gradient with respect to a value of type x: a float's is a float, a float array's a float
    array, a container's the same container of its parts' gradients; None for a discrete value."""
    if isinstance(x, Float) or isinstance(x, Arr) and x.dtype == "f":
        return Float(active) if isinstance(x, Float) else Arr(x.rank, "f", active)
    if isinstance(x, (Tup, Lst, Dct)):
        return with_parts(x, lambda part: _gradient_type(part, active))
    if isinstance(x, (Discrete, Arr)):
        return NONE
    raise ChadTypeError(
        "a gradient inside differentiated code is taken with respect to floats, float arrays and tuples, lists and "
        f"dicts of them, not {describe(x)}"
    )


def _from_parts_kind(types: list[VType], consts: list[object]) -> VType:
    x, parts = types
    return _gradient_type(x, is_active(parts))


# A gradient inside differentiated code, in forward mode (`api/forward.py`'s `gradient`): a tangent per element
TANGENT_SIZE = function(runtime.tangent_size, None, kind=lambda types, consts: INT)
UNIT_TANGENTS = function(runtime.unit_tangents, None, (3, 3), kind=_unit_tangents_kind)
FROM_PARTS = function(
    runtime.from_parts,
    lambda d, y, x, parts: [ZERO, call(parts_ct, d, x)],
    (2, 2),
    kind=_from_parts_kind,
    containers=True,
)
FROM_PARTS.jvp = linear(1)


def _from_columns_kind(types: list[VType], consts: list[object]) -> VType:
    out, x, columns = types
    rank = lambda t: 0 if isinstance(t, Float) or t == INT else t.rank if isinstance(t, Arr) else None  # noqa: E731
    total = None if rank(out) is None or rank(x) is None else rank(out) + rank(x)
    return Float(is_active(columns)) if total == 0 else Arr(total, "f", is_active(columns))


FROM_COLUMNS = function(
    runtime.from_columns,
    lambda d, y, out, x, columns: [ZERO, ZERO, call(runtime.columns_ct, d, out, x)],
    (3, 3),
    kind=_from_columns_kind,
    containers=True,
)
FROM_COLUMNS.jvp = linear(2)

# `chad.stop_gradient(x)`: x, through which no derivative flows (discrete: no rule, its result inactive)
STOP_GRADIENT = function(runtime.stop_gradient, None, kind=lambda types, consts: types[0], aliases="argument")

for _p in (
    TANGENT_SIZE,
    UNIT_TANGENTS,
    FROM_PARTS,
    FROM_COLUMNS,
    STOP_GRADIENT,
    WHERE_NONZERO,
    STRONG_ZERO,
    SAFE_DIVISOR,
    BROADCAST_LIKE,
    ZEROS,
    PART_OR_NONE,
):
    PRIMITIVES[_p.fn] = _p
