"""Rules for numbers: Python's operators, the `math` module and the numeric builtins.

One registration per function: its derivative (`vjp`, None for a discrete one) and
the kind of its result (`kinds.py`). The formulas of the arithmetic operators and of
`math`'s functions are in `pointwise.py`, written once with their NumPy flavours.
Operators that also work on arrays broadcast (`elementwise`); where the scalar
formula does not (`**`, `abs`), `for_arrays` names the NumPy version.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import math
import operator

import numpy as np

from ..errors import ChadTypeError
from ..ir.types import BOOL, BOTTOM, INT, NONE, OBJECT, REAL, SLICE, Arr, VType, describe
from ..runtime import reductions as reductions_runtime
from ..runtime import scalar as runtime
from ..target.expressions import Attr, BinOp, CallX, Compare, Expr, IfExp, Lit, Obj, UnaryOp, call
from .kinds import (
    BOOL_RESULT,
    FLOAT_RESULT,
    INDICES,
    INT_RESULT,
    NONE_RESULT,
    STR_RESULT,
    KindRule,
    compare,
    either,
    elementwise,
    fixed,
)
from .numpy import MATMUL
from .pointwise import ABS, ADD, DIV, MOD, MUL, NEG, POW, SUB
from .registry import (
    MATH,
    METHODS,
    NONZERO,
    NP,
    OPERATORS,
    POSITIVE,
    PRIMITIVES,
    REALS,
    SPELLINGS,
    Primitive,
    Spelling,
    function,
    is_default,
    sampled,
    written_in_python,
)
from .sequences import CONCAT, LIST_COPY, REPEAT, SUM_SEQ, sum_builtin_kind
from .tangents import ZEROS, Term, apply, linear, python

# ---------------------------------------------------------------- tangent helpers of this family


def _or_zeros(t: Term | None, x: Term) -> Term:
    return t if t is not None else apply(ZEROS, x)


# The tangents of `math.prod` and `math.dist`, written in Python chadpy reads, so they are differentiable again
_IN_PYTHON = written_in_python(
    """
def prod_tangent(xs, dxs):
    lefts = []
    left = 1.0
    for x in xs:
        lefts.append(left)
        left = left * x
    total = 0.0
    right = 1.0
    for k in range(len(xs) - 1, -1, -1):
        total = total + dxs[k] * lefts[k] * right
        right = right * xs[k]
    return total


def dist_tangent(dist, p, q, dp, dq):
    if dist == 0:
        return 0.0
    total = 0.0
    for a, b, da, db in zip(p, q, dp, dq):
        total = total + (a - b) * (da - db)
    return total / dist
""",
    "tangents of math.prod and math.dist",
    {},
)


# ---------------------------------------------------------------- kind rules of this family


def round_builtin_kind(types: list[VType], consts: list[object]) -> VType:
    """`round(x)` is an int; `round(x, n)` is a number like x."""
    return INT if len(types) == 1 or types[1] == NONE else types[0]


def _scalar(formula: object, spelling: Spelling = MATH) -> object:
    """A `pointwise.py` formula, spelled for numbers (or for arrays: `NP`)."""
    return functools.partial(formula, spelling)


def _binary(
    name: str,
    symbol: str,
    formula: object,
    domain: object = REALS,
    dtype: str | None = None,
    spelling: Spelling = MATH,
    **more,
) -> Primitive:
    kind = elementwise(symbol, dtype)  # messages show the operator as written
    vjp, samples = (None, ()) if formula is None else (_scalar(formula, spelling), sampled(domain, 2))
    return Primitive(
        name, lambda a, b: BinOp(symbol, a, b), vjp, (2, 2), kind, elementwise=True, samples=samples, **more
    )


def _compare(name: str, symbol: str, kind: KindRule = compare) -> Primitive:
    return Primitive(name, lambda a, b: Compare(symbol, a, b), None, (2, 2), kind)


def _extreme_jvp(b_wins: str) -> object:
    """`max(a, b)`'s tangent: b's where b wins (strictly greater: Python keeps the first of equals), else a's."""

    def jvp(ts: list, y: Term, a: Term, b: Term) -> Term:
        wins = apply(b_wins, b, a)
        da = ts[0] if ts[0] is not None else 0.0
        db = ts[1] if ts[1] is not None else 0.0
        return da + wins * (db - da) if ts[0] is not None else wins * db

    return jvp


def _max_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    # builtins.max keeps the first argument unless the second is strictly greater
    b_wins = b.compare(">", a)
    return [IfExp(b_wins, Lit(0.0), d), IfExp(b_wins, d, Lit(0.0))]


def _min_vjp(d: Expr, y: Expr, a: Expr, b: Expr) -> list[Expr]:
    b_wins = b.compare("<", a)
    return [IfExp(b_wins, Lit(0.0), d), IfExp(b_wins, d, Lit(0.0))]


_TWO = ((REALS, REALS),)
_LIST = [REALS, REALS, REALS]  # a list of floats the rule test samples
_PRINT_OPTIONS = {"sep": " ", "end": "\n", "file": None, "flush": False}


def _print(*args: Expr) -> Expr:
    """`print(x, y, sep=..., end=...)`: the values, then the options that differ from print's defaults."""
    n = len(args) - len(_PRINT_OPTIONS)
    x = CallX(Obj(builtins.print, "print"), list(args[:n]))
    for (name, default), a in zip(_PRINT_OPTIONS.items(), args[n:]):
        if not (isinstance(a, Lit) and is_default(a.value, default)):
            x.keywords[name] = a
    return x


def _unary(name: str, symbol: str, vjp: object) -> Primitive:
    emit = (lambda a: -a) if symbol == "-" else (lambda a: UnaryOp(symbol, a))
    return Primitive(name, emit, vjp, kind=elementwise(symbol), elementwise=True, samples=((REALS,),))


def _invert_kind(types: list[VType], consts: list[object]) -> VType:
    """`~k` of an int or a bool (an int, as Python's), `~m` of an int or bool array (of its dtype)."""
    t = types[0]
    if isinstance(t, Arr) and t.dtype in ("b", "i") or t == OBJECT:
        return t
    if t in (INT, BOOL):
        return INT
    raise ChadTypeError(f"`~` of {describe(t)}: it takes an int, a bool, or an array of them")


# `a ** b` on arrays or NumPy scalars: np.power's rules, written as the operator (NumPy's `**` on a float64
# scalar and np.power can differ in the last bit; the forward pass computes what the user wrote)
_ARRAY_POWER = dataclasses.replace(PRIMITIVES[np.power], emit=lambda a, b: BinOp("**", a, b))
# `"%.3f" % x`: printf-style formatting, a str (discrete)
_FORMAT = Primitive("format %", lambda a, b: BinOp("%", a, b), None, (2, 2), STR_RESULT)
_DIVIDE = functools.partial(_binary, "truediv", "/", DIV, (REALS, NONZERO), dtype="f", ufunc=np.true_divide)

OPERATORS.update(
    {
        "+": _binary("add", "+", ADD, for_sequences=CONCAT, ufunc=np.add),
        "-": _binary("sub", "-", SUB, ufunc=np.subtract),
        "*": _binary("mul", "*", MUL, for_sequences=REPEAT, ufunc=np.multiply),
        # on arrays its strong zero is the arrays' (`strong_zero`), not `ct if d else 0.0`
        "/": _DIVIDE(for_arrays=_DIVIDE(spelling=NP)),
        "**": _binary("pow", "**", POW, POSITIVE, for_arrays=_ARRAY_POWER),
        "%": _binary("mod", "%", MOD, (REALS, NONZERO), ufunc=np.remainder, for_text=_FORMAT),
        "//": _binary("floordiv", "//", None, ufunc=np.floor_divide),
        "@": MATMUL,
        "neg": _unary("neg", "-", _scalar(NEG)),
        "pos": dataclasses.replace(_unary("pos", "+", lambda d, y, a: [d]), jvp=linear(0)),
        "not": Primitive("not", lambda a: UnaryOp("not", a), kind=BOOL_RESULT),
        "invert": Primitive("invert", lambda a: UnaryOp("~", a), kind=_invert_kind),  # discrete: ints and bools
        # comparisons: discrete
        "<": _compare("lt", "<"),
        "<=": _compare("le", "<="),
        ">": _compare("gt", ">"),
        ">=": _compare("ge", ">="),
        "==": _compare("eq", "=="),
        "!=": _compare("ne", "!="),
        "is": _compare("is", "is", BOOL_RESULT),
        "is not": _compare("is_not", "is not", BOOL_RESULT),
        "in": _compare("in", "in", BOOL_RESULT),
        "not in": _compare("not_in", "not in", BOOL_RESULT),
    }
)

PRIMITIVES.update(
    {
        # math (the differentiable functions are in pointwise.py)
        math.floor: function(math.floor, None, kind=INT_RESULT),
        math.ceil: function(math.ceil, None, kind=INT_RESULT),
        math.trunc: function(math.trunc, None, kind=INT_RESULT),
        math.isnan: function(math.isnan, None, kind=BOOL_RESULT),
        math.isinf: function(math.isinf, None, kind=BOOL_RESULT),
        math.isfinite: function(math.isfinite, None, kind=BOOL_RESULT),
        math.isclose: function(math.isclose, None, (2, 2), kind=BOOL_RESULT),
        math.isqrt: function(math.isqrt, None, kind=INT_RESULT),
        math.ulp: function(math.ulp, None),  # a float, piecewise constant
        math.factorial: function(math.factorial, None, kind=INT_RESULT),
        math.gcd: function(math.gcd, None, (0, None), kind=INT_RESULT),
        math.lcm: function(math.lcm, None, (0, None), kind=INT_RESULT),
        math.comb: function(math.comb, None, (2, 2), kind=INT_RESULT),
        math.perm: function(math.perm, None, (1, 2), kind=INT_RESULT),
        # math on sequences of numbers
        math.fsum: Primitive(
            "math.fsum",
            lambda xs: call(math.fsum, xs),
            lambda d, y, xs, saved: [call(reductions_runtime.sum_seq_ct, d, xs, saved)],
            kind=FLOAT_RESULT,
            saves=lambda y, xs: call(len, xs),
            containers=True,
            fn=math.fsum,
            samples=((_LIST,),),
            jvp=linear(0),
        ),
        math.prod: function(
            math.prod,
            lambda d, y, xs: [call(reductions_runtime.prod_seq_ct, d, xs)],
            kind=sum_builtin_kind,
            params=("iterable",),
            containers=True,
            samples=((_LIST,), ([REALS, 0.0, REALS],), (REALS.of(3, 2),)),
            jvp=lambda ts, y, xs: python(_IN_PYTHON["prod_tangent"], xs, ts[0]),
        ),
        math.dist: function(
            math.dist,
            lambda d, y, p, q: [
                call(reductions_runtime.dist_ct, d, y, p, q),
                call(reductions_runtime.dist_ct, d, y, q, p),
            ],
            (2, 2),
            containers=True,
            samples=((_LIST, _LIST), ([REALS], [REALS])),
            jvp=lambda ts, y, p, q: python(
                _IN_PYTHON["dist_tangent"], y, p, q, _or_zeros(ts[0], p), _or_zeros(ts[1], q)
            ),
        ),
        # builtins
        builtins.abs: function(
            builtins.abs, _scalar(ABS), kind=elementwise("abs"), for_arrays=PRIMITIVES[np.abs], samples=((NONZERO,),)
        ),
        builtins.pow: function(
            builtins.pow,
            _scalar(POW),
            (2, 2),
            kind=elementwise("pow"),
            for_arrays=PRIMITIVES[np.power],
            params=("base", "exp"),
            samples=((POSITIVE, POSITIVE),),
        ),
        builtins.max: function(
            builtins.max, _max_vjp, (2, 2), kind=either, aliases="argument", samples=_TWO, jvp=_extreme_jvp(">")
        ),
        builtins.min: function(
            builtins.min, _min_vjp, (2, 2), kind=either, aliases="argument", samples=_TWO, jvp=_extreme_jvp("<")
        ),
        builtins.float: function(
            builtins.float, lambda d, y, x: [d], kind=fixed(REAL), samples=((REALS,),), jvp=linear(0)
        ),
        builtins.int: function(builtins.int, None, (1, 2), kind=INT_RESULT),
        builtins.bool: function(builtins.bool, None, kind=BOOL_RESULT),
        builtins.round: function(
            builtins.round, None, (1, 2), kind=round_builtin_kind, params=("number", "ndigits"), defaults=(None,)
        ),
        builtins.len: function(builtins.len, None, kind=INT_RESULT),
        builtins.isinstance: function(builtins.isinstance, None, (2, 2), kind=BOOL_RESULT),
        builtins.str: function(builtins.str, None, kind=STR_RESULT),
        builtins.repr: function(builtins.repr, None, kind=STR_RESULT),
        builtins.ascii: function(builtins.ascii, None, kind=STR_RESULT),
        builtins.format: function(builtins.format, None, (1, 2), kind=STR_RESULT),
        builtins.print: Primitive(
            "print",
            _print,
            kind=NONE_RESULT,
            params=("args", *_PRINT_OPTIONS),
            defaults=tuple(_PRINT_OPTIONS.values()),
            fn=builtins.print,
        ),
        builtins.range: function(builtins.range, None, (1, 3), kind=INDICES),
        builtins.slice: function(builtins.slice, None, (1, 3), kind=fixed(SLICE)),
        builtins.sum: SUM_SEQ,
        builtins.list: LIST_COPY,
        runtime.check: function(runtime.check, None, (1, 2), kind=NONE_RESULT),
        runtime.exception_classes: function(runtime.exception_classes, None, (1, None), kind=fixed(OBJECT)),
    }
)
# The `operator` module's functions (`functools.reduce(operator.mul, xs)`, `map(operator.add, xs, ys)`) are
# the operators they spell
SPELLINGS.update(
    {
        getattr(operator, name): OPERATORS[symbol]
        for name, symbol in {
            "add": "+",
            "sub": "-",
            "mul": "*",
            "truediv": "/",
            "pow": "**",
            "mod": "%",
            "floordiv": "//",
            "matmul": "@",
            "neg": "neg",
            "pos": "pos",
            "not_": "not",
            "invert": "invert",
            "lt": "<",
            "le": "<=",
            "gt": ">",
            "ge": ">=",
            "eq": "==",
            "ne": "!=",
            "is_": "is",
            "is_not": "is not",
        }.items()
    }
)
SPELLINGS[operator.abs] = PRIMITIVES[builtins.abs]
# A read of a variable not assigned on the path that reaches it: it raises (nothing after it is on a path).
READ_UNASSIGNED = function(runtime.read_unassigned, None, (1, 1), kind=lambda types, consts: BOTTOM)
# The check of an `if` inference specialised to one branch by the kinds of the values it tests (`y is None`).
ON_PATH = function(runtime.on_path, None, (2, 2), kind=NONE_RESULT)

# A `with` statement's context manager (data), entered and left around its body (`desugar.with_blocks`).
PRIMITIVES[runtime.enter] = Primitive(
    "__enter__", lambda cm: CallX(Attr(cm, "__enter__"), []), kind=fixed(OBJECT), aliases="unknown", fn=runtime.enter
)
PRIMITIVES[runtime.leave] = Primitive(
    "__exit__", lambda cm: CallX(Attr(cm, "__exit__"), [Lit(None)] * 3), kind=NONE_RESULT, fn=runtime.leave
)
METHODS.update({"__enter__": runtime.enter, "__exit__": runtime.leave})

# An f-string's parts joined: `format(x, ".2f") + " and " + ...` (its values are formatted with `format`).
JOINED_STR = Primitive(
    "fstring", lambda *parts: functools.reduce(lambda a, b: BinOp("+", a, b), parts), None, (1, None), STR_RESULT
)

# Primitives whose n-ary calls are folded into chains of binary calls, left to right
# (the order in which builtins.max/min compare, so ties resolve the same way).
BINARY_FOLDS = {PRIMITIVES[builtins.max], PRIMITIVES[builtins.min]}
