"""Primitives: every operation chadpy knows, with its transposed derivative and its kind rule.

Each `Primitive` says how to write the operation in the generated code (`emit`),
what kind of value it returns (`kind`, see `kinds.py`) and, for differentiable
ones, its transposed derivative Dop^t (`vjp`): given the incoming cotangent `d`,
the primal result `y` and the arguments, one cotangent per argument (None for an
argument that takes none: a shape, an axis, a condition), or one expression whose
value is the tuple of them. Rules are written with target expressions, so
`d * cos(x)` in a rule becomes `d * math.cos(x)` inline in the generated code (no
call overhead). A primitive without `vjp` is discrete: comparisons, `//`, `int`,
`len`, `np.shape`, ...

A call binds its arguments by the real function's signature (`bind`): the
primitive takes the parameters named in `params`, in that order, and every other
parameter of the function must be left at its default, so `np.linalg.norm(A, 1)`
is `ord=1` (not supported: a clear error), never `axis=1`.

The tables themselves are flat files in `rules/`, one registration per function:
pointwise functions, scalars and operators, lists and dicts, NumPy. A pointwise
formula is written once for all its flavours (`pointwise`): `m.cos(x)` in the rule
of sin is `math.cos(x)` for `math.sin` and `np.cos(x)` for `np.sin`. Broadcasting is
the registrar's too (`Primitive.transpose`): an elementwise rule computes with a
dense cotangent, and each part is summed back to its argument's shape where that may
differ. An operator means different things on different types (`+` adds numbers,
concatenates lists); `resolve` picks the version for the argument types found by
inference. A rule that needs a primal value the list may lose later (a length before
an `append`) names it with `saves`: the forward pass stores it. Every differentiable
rule carries `samples` (or a default), where `tests/test_rules.py` checks it against
finite differences. Users add their own with `defvjp`, whose rule is an ordinary
Python function called at run time.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .. import texts
from ..ir.types import OBJECT, STR, Arr, Dct, Lst, Rec, Tup, VType, is_active
from ..runtime import numpy as numpy_runtime
from ..runtime import pointwise as pointwise_runtime
from ..runtime.array_cotangents import dense, unbroadcast
from ..runtime.cotangents import Zero
from ..target.expressions import Attr, CallX, Expr, IfExp, Lit, Name, Obj, UnaryOp, call
from .kinds import FLOAT_RESULT, GENERAL_ARRAY, KindRule, elementwise

Vjp = Callable[..., list[Expr]]
ZERO = Obj(Zero, "Zero")  # the zero cotangent, as a rule writes it


@dataclass(frozen=True)
class Reals:
    """Where the rule test samples an argument: uniform in [lo, hi] (with `signed`, magnitudes there and
    random signs); a float, or an array of `shape`. Without a shape, an elementwise rule is also tried
    on arrays and broadcasting shapes."""

    lo: float = -0.9
    hi: float = 0.9
    signed: bool = False
    shape: tuple[int, ...] | None = None

    def of(self, *shape: int) -> Reals:
        """The same reals as an array of this shape."""
        return replace(self, shape=shape)


REALS = Reals()
POSITIVE = Reals(0.2, 2.0)
NONZERO = Reals(0.2, 1.0, signed=True)  # kinks, poles and ties at 0 stay away


@dataclass(eq=False)
class Primitive:
    """An operation chadpy knows: how it is written in the generated code, its kind rule, and its transposed
    derivative (VJP), with what the registrars and the optimiser need to know of it."""

    name: str
    emit: Callable[..., Expr]  # argument expressions -> primal expression
    vjp: Vjp | None = None  # (d, y, *args[, saved=]) -> a cotangent per argument, or one tuple expression
    nargs: tuple[int, int | None] = (1, 1)  # least and most arguments (of a primitive without `params`)
    kind: KindRule = FLOAT_RESULT  # the type of its result
    runtime_vjp: Callable | None = None  # a user rule, called at run time (see `defvjp`)
    elementwise: bool = False  # broadcasting: argument cotangents are summed back to their shapes
    # The parameters it takes, by the names of the real function's signature (`fn`), and
    # their defaults when not given (the trailing ones); None: positional arguments only.
    params: tuple[str, ...] | None = None
    defaults: tuple[object, ...] = ()
    fn: object = None  # the real function, whose signature binds a call's arguments
    saves: Callable[..., Expr] | None = None  # (y, *args) -> a forward value the rule needs
    for_sequences: Primitive | None = None  # the version for lists and tuples (`+` concatenates)
    for_arrays: Primitive | None = None  # the version for arrays, when the scalar rule does not broadcast
    in_place: Primitive | None = None  # the version when its first argument is a list, dict or array
    when_active: Primitive | None = None  # the version when a derivative flows into it (a call run as it is)
    for_records: Primitive | None = None  # `obj.sum()` read as `np.sum(obj)` of an object: the object's own method
    for_text: Primitive | None = None  # the version when its first argument is a str (`"%.3f" % x` formats)
    ufunc: object = None  # an operator's NumPy ufunc, for `a op= b` on arrays (laid out like `a`)
    data_only: bool = False  # no derivative rule: an error if a derivative flows into it (not a zero)
    containers: bool = False  # takes tuples, lists or dicts that carry derivatives
    # What its result refers to (for `ownership`): "" a new object (or a number); "view" the data of
    # its first argument (`np.reshape`); "argument" one of its arguments or an element of one
    # (`max(a, b)`); "unknown" anything (a call chadpy cannot read may also keep its arguments).
    aliases: str = ""
    logged: bool = False  # updates in place, logged: its call takes the function's `runtime.writes.Writes` last
    resizes: bool = False  # updates its first argument, a list, in place and changes its length (`append`)
    statement: object = None  # a statement run as written (`rewrite/as_written.AsWritten`): what it stores where
    # Argument lists where tests/test_rules.py checks `vjp` against finite differences: `Reals` are
    # sampled, other values are passed as they are (a list of `Reals` is a list of sampled values).
    samples: tuple[tuple[object, ...], ...] = ()
    # (ts, y, *args) -> the result's tangent (`rules/tangents.py`: a term over primitives), given a tangent per
    # argument (None where none flows in); pointwise formulas derive theirs from `vjp`
    jvp: Callable | None = None

    @property
    def discrete(self) -> bool:
        return self.vjp is None and self.runtime_vjp is None

    def default(self, param: str) -> object:
        """The value a parameter takes when the call does not give it."""
        k = self.params.index(param) - (len(self.params) - len(self.defaults))
        if k < 0:
            raise TypeError(f"`{self.name}` needs its argument `{param}`")
        return self.defaults[k]

    def signature(self) -> inspect.Signature:
        """The real function's signature, or one made of `params` where it has none."""
        try:
            return inspect.signature(self.fn)
        except (TypeError, ValueError):
            required = len(self.params) - len(self.defaults)
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            return inspect.Signature(
                [
                    inspect.Parameter(p, kind, default=inspect.Parameter.empty if k < required else self.default(p))
                    for k, p in enumerate(self.params)
                ]
            )

    def transpose(
        self,
        d: Expr,
        y: Expr,
        args: list[Expr],
        bind: Callable[[Expr, str], Name],
        array_result: bool,
        broadcasts: Callable[[int], bool],
        number_result: bool = False,
        **saved: Expr,
    ) -> list[Expr | None] | Expr:
        """Dop^t: the cotangent of each argument (None where it takes none), or one expression whose
        value is the tuple of them. An elementwise rule with an array result computes with `d` made a
        dense array (`bind` names it) and sums each part back to its argument's shape where
        `broadcasts(k)` (the argument may have another shape than the result); with a number result
        (`np.divide` of two floats, which tangent code writes for a quotient that must not raise), with `d`
        made a number (`Zero`, a float's cotangent out of a container's nobody used, is 0.0: NumPy takes no
        `Zero`)."""
        spread = self.elementwise and array_result
        if spread:  # an inline rule computes with d: make it a dense array (not Zero, not a Scatter)
            d = bind(call(dense, d, y), "d_dense")
        elif self.elementwise and number_result and self.name.startswith("np."):
            d = bind(IfExp(d, d, Lit(0.0)), "d_number")
        cts = self.vjp(d, y, *args, **saved)
        if spread:
            cts = [ct if ct is None or not broadcasts(k) else _unbroadcast(ct, args[k]) for k, ct in enumerate(cts)]
        return cts


def _unbroadcast(ct: Expr, arg: Expr) -> Expr:
    """`unbroadcast(ct, arg)`; for ct = -e, `-unbroadcast(e, arg)`: the negation touches the summed part
    (a float for `x - a` with a scalar a), not an array of the result's size."""
    if isinstance(ct, UnaryOp) and ct.op == "-":
        return -call(unbroadcast, ct.operand, arg)
    return call(unbroadcast, ct, arg)


def keyword_call(
    fn: object, params: tuple[str, ...], defaults: tuple[object, ...], positional: int | None = None
) -> Callable[..., Expr]:
    """`emit` for a function called with its first `positional` arguments (the required ones) by
    position and the others by keyword, where they differ from their defaults (`np.sum(x, axis=0)`)."""
    required = len(params) - len(defaults)
    positional = required if positional is None else positional

    def emit(*args: Expr) -> Expr:
        x = call(fn, *args[:positional])
        for name, default, a in zip(params[positional:], defaults[positional - required :], args[positional:]):
            if not (isinstance(a, Lit) and is_default(a.value, default)):
                x.keywords[name] = a
        return x

    return emit


def is_default(value: object, default: object) -> bool:
    """Whether a constant argument is the parameter's default (`ord=None`, `keepdims=np._NoValue`)."""
    return value is default or type(value) is type(default) and value == default


# ---------------------------------------------------------------- registrars


def function(
    fn: Callable,
    vjp: Vjp | None,
    nargs: tuple[int, int | None] = (1, 1),
    kind: KindRule = FLOAT_RESULT,
    name: str | None = None,
    **more,
) -> Primitive:
    """A primitive written as a positional call of `fn`, e.g. `math.sin(x)`."""
    if name is None:
        name = f"{getattr(fn, '__module__', '') or ''}.{fn.__name__}".lstrip(".")
    return Primitive(name, lambda *a: call(fn, *a), vjp, nargs, kind, fn=fn, **more)


def numpy_function(
    fn: Callable,
    vjp: Vjp | None,
    params: tuple[str, ...],
    defaults: tuple[object, ...] = (),
    kind: KindRule = GENERAL_ARRAY,
    positional: int | None = None,
    methods: tuple[str, ...] = (),
    **more,
) -> Primitive:
    """A NumPy function taking `params` (its required ones by position, the others by keyword); `methods`
    are the names of the array methods that are this function (`x.sum()` is `np.sum(x)`)."""
    module = getattr(fn, "__module__", "") or ""
    name = ("np.linalg." if module.endswith("linalg") else "np.") + fn.__name__
    emit = keyword_call(fn, params, defaults, positional)
    nargs = (len(params) - len(defaults), len(params))
    METHODS.update(dict.fromkeys(methods, fn))
    p = Primitive(name, emit, vjp, nargs, kind, params=params, defaults=defaults, fn=fn, **more)
    if len(methods) == 1:
        p.for_records = method_of_record(methods[0], params, defaults)
    return p


def method_of_record(method: str, params: tuple[str, ...], defaults: tuple[object, ...]) -> Primitive:
    """`obj.method(...)` of an object of a user class, read as NumPy's `np.method(obj, ...)` before obj's type is
    known (`x.sum()` of an array): the object's own method, run as it is (`d.std()` of a frozen distribution);
    its result is data, and a derivative flowing into it an error."""
    required = len(params) - len(defaults)

    def emit(x: Expr, *args: Expr) -> Expr:
        out = CallX(Attr(x, method), list(args[: required - 1]))
        for name, default, a in zip(params[required:], defaults, args[required - 1 :]):
            if not (isinstance(a, Lit) and is_default(a.value, default)):
                out.keywords[name] = a
        return out

    return Primitive(
        f".{method}", emit, None, (1, None), lambda types, consts: OBJECT, data_only=True, aliases="unknown"
    )


def ufunc(fn: np.ufunc, vjp: Vjp, nargs: int = 1) -> Primitive:
    """A NumPy ufunc of one or two arguments (or an elementwise NumPy function written in Python, such as
    `np.sinc`, with a float result): broadcasting. A ufunc's result keeps the kind of its arguments where
    NumPy has an integer loop for it (`np.add`), else it is a float (`np.exp`)."""
    if not isinstance(fn, np.ufunc):
        params = tuple(inspect.signature(fn).parameters)[:nargs]
        return numpy_function(fn, vjp, params, kind=elementwise("np." + fn.__name__, "f"), elementwise=True)
    params = ("x",) if nargs == 1 else ("x1", "x2")
    integers = any(set(t.replace("->", "")) <= set(np.typecodes["AllInteger"]) for t in fn.types)
    kind = elementwise("np." + fn.__name__, None if integers else "f")
    return numpy_function(fn, vjp, params, kind=kind, elementwise=True, ufunc=fn)


def sign_times(d: Expr, x: Expr) -> Expr:
    """d * sign(x), with sign(0) = 0 (the subgradient chadpy picks for |x| at 0)."""
    return IfExp(x.compare(">", 0), d, IfExp(x.compare("<", 0), -d, Lit(0.0)))


def literal_number(e: Expr) -> float | None:
    """The number an expression is, when it is one written in the code (`x ** 2`'s 2); else None."""
    if isinstance(e, Lit) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
        return e.value
    return None


def pow_base(d: Expr, a: Expr, b: Expr, general: Callable[..., Expr]) -> Expr:
    """Cotangent of a in a ** b: inline for a literal exponent (`x ** 2` gives `d * 2 * x`),
    else `general(d, a, b)` (the scalar or the array version)."""
    k = literal_number(b)
    if k is not None:
        return Lit(0.0) if k == 0 else d if k == 1 else d * k * a if k == 2 else d * k * a ** (k - 1)
    return general(d, a, b)


class Spelling:
    """How a pointwise formula spells what it calls, so that it is written once for every flavour of its
    function: `m.cos(x)` is `math.cos(x)` in the rule of `math.sin` and `np.cos(x)` in that of `np.sin`.
    The few pieces that differ by more than their module are named (`times_sign`, `pow_base`, ...;
    `safe_divisor(x)`: x with its zeros made ones, for a quotient whose numerator is 0 where x is)."""

    def __init__(self, module: object, **own: Callable[..., Expr]):
        self.module = module
        self.__dict__.update(own)

    def __getattr__(self, name: str) -> Callable[..., Expr]:
        return _calls(getattr(self.module, name))


def _calls(fn: object) -> Callable[..., Expr]:
    return lambda *args: call(fn, *args)


MATH = Spelling(
    math,
    times_sign=sign_times,
    safe_divisor=lambda x: IfExp(x.compare("==", 0), Lit(1.0), x),
    strong_zero=lambda d, ct: IfExp(d, ct, Lit(0.0)),
    quotient=lambda a, b: a / b,
    pow_base=_calls(pointwise_runtime.pow_base_ct),
    pow_exponent=_calls(pointwise_runtime.pow_exponent_ct),
)
NP = Spelling(
    np,
    times_sign=lambda d, x: d * call(np.sign, x),
    safe_divisor=_calls(numpy_runtime.safe_divisor),
    strong_zero=_calls(pointwise_runtime.strong_zero),
    quotient=_calls(np.true_divide),  # NumPy's: inf at a pole, also of two Python floats (never ZeroDivisionError)
    pow_base=_calls(pointwise_runtime.power_base_ct),
    pow_exponent=_calls(pointwise_runtime.power_exponent_ct),
)


def pointwise(
    fns: object,
    vjp: Callable[..., list[Expr]],
    domain: Reals | tuple[Reals, ...] = REALS,
    strong: bool = False,
    jvp: Callable | None = None,
) -> Callable:
    """Register one formula for every flavour of a pointwise function (`fns`, one or a tuple): `math.f`
    on numbers, `np.f` on arrays (broadcasting). `vjp(m, d, y, *xs)` spells what it calls through `m`
    (`MATH` or `NP`); its parameters give the arity (a NumPy flavour takes the required ones). The rule
    test samples the arguments in `domain` (one `Reals` for all, or one per argument). `strong`: a partial
    can be infinite (a pole: `1 / x`, `sqrt` at 0), and a zero cotangent must still give exactly zero, not
    0 * inf = NaN (Enzyme's strong zero; `strong_zeros`). `jvp(m, ts, y, *xs)`: the tangent rule, spelled
    through `m` over terms (`tangents.tangent_rule` spells it: `m` is given here as `MATH` or `NP`, which it
    reads as `TERMS_MATH` or `TERMS_NP`), where the VJP's formula cannot be read as one (`tangents.from_formula`:
    a part that is a constant, or a call of code of its own). Returns the rule, for the operators and builtins
    that share it."""
    params = list(inspect.signature(vjp).parameters.values())[3:]
    if strong:
        vjp = strong_zeros(vjp)
    least = sum(p.default is p.empty and p.kind is not p.VAR_POSITIONAL for p in params)
    most = None if any(p.kind is p.VAR_POSITIONAL for p in params) else len(params)
    for fn in fns if isinstance(fns, tuple) else (fns,):
        if isinstance(fn, np.ufunc) or getattr(fn, "__module__", "") == "numpy":
            p = ufunc(fn, functools.partial(vjp, NP), least)
            p.samples = sampled(domain, least)
            p.jvp = jvp and functools.partial(jvp, NP)
        else:
            p = function(fn, functools.partial(vjp, MATH), (least, most))
            p.samples = sampled(domain, *sorted({least, most or least + 2}))
            p.jvp = jvp and functools.partial(jvp, MATH)
        PRIMITIVES[fn] = p
    return vjp


def strong_zeros(vjp: Callable[..., list[Expr]]) -> Callable[..., list[Expr]]:
    """The rule with each argument's cotangent exactly 0 where `d` is: `ct if d else 0.0` on numbers,
    `strong_zero(d, ct)` on arrays (a sum to find a NaN, then a `where` only if there is one)."""

    def strong(m: Spelling, d: Expr, y: Expr, *xs: Expr) -> list[Expr]:
        return [
            ct if ct is None or ct is ZERO or isinstance(ct, Lit) else m.strong_zero(d, ct) for ct in vjp(m, d, y, *xs)
        ]

    return strong


def sampled(domain: Reals | tuple[Reals, ...], *arities: int) -> tuple[tuple[Reals, ...], ...]:
    """`samples` for calls of these arities: `domain` for every argument, or one per argument (the
    last one for the rest)."""
    domains = domain if isinstance(domain, tuple) else (domain,)
    return tuple(tuple(domains[min(k, len(domains) - 1)] for k in range(n)) for n in arities)


def resolve(op: Primitive, types: list[VType]) -> Primitive:
    """The version of `op` for these argument types (a list `+` concatenates)."""
    if op.when_active is not None and any(map(is_active, types)):
        return op.when_active
    if op.for_records is not None and types and isinstance(types[0], Rec):
        return op.for_records
    if op.for_text is not None and types and types[0] == STR:
        return op.for_text
    if op.in_place is not None and isinstance(types[0], (Lst, Dct, Arr)):
        return op.in_place
    arrays = any(isinstance(t, Arr) for t in types)  # `row * [0.3, x, 0.9]`: NumPy's, elementwise
    if op.for_sequences is not None and any(isinstance(t, (Lst, Tup)) for t in types) and not arrays:
        return op.for_sequences
    if op.for_arrays is not None and any(isinstance(t, Arr) for t in types):
        return op.for_arrays
    return op


# The registries, filled by the files in `rules/`: functions by the Python object a call
# resolves to, operators by their Python spelling (unary ones: "neg", "pos", "not"),
# methods and attributes of array values by name (as the NumPy functions they are).
PRIMITIVES: dict[object, Primitive] = {}
# Functions that are a primitive registered above too (`operator.mul` is `*`), or chadpy's own that code it
# generates calls
SPELLINGS: dict[object, Primitive] = {}
OPERATORS: dict[str, Primitive] = {}
METHODS: dict[str, object] = {}
# Methods of data objects with a rule where a derivative flows into their arguments (`frozen.logpdf(x)`)
DATA_METHODS: dict[str, Primitive] = {}
# Objects whose calls make a record the function differentiates (a SciPy distribution: its frozen ones, by class)
DISTRIBUTIONS: dict[object, type] = {}
ATTRIBUTES: dict[str, object] = {}


# Functions chadpy differentiates through Python written for them (`np.vectorize`: `rules/numpy.py`)
AS_PYTHON: dict[object, object] = {}
# Derivatives taken inside differentiated code (`chad.grad(f)(x)`): the Python written for each (`api/forward.py`;
# `grad`, `jacobian`, `hessian`: a function of the argument position giving it)
DERIVATIVE_HELPERS: dict[str, object] = {}


def written_in_python(source: str, name: str, namespace: dict[str, object]) -> dict[str, object]:
    """The functions `source` defines (its names in `namespace`), as Python functions whose source chadpy reads
    like a user's (`name` names the text in locations): what a rule written in Python is."""
    defined = dict(namespace)
    exec(texts.compiled(name, source), defined)  # its text in linecache, for chadpy to read
    return {k: v for k, v in defined.items() if k not in namespace and k != "__builtins__"}


def lookup(fn: object) -> Primitive | None:
    """The primitive a called object is, if any (unhashable objects are none)."""
    try:
        return PRIMITIVES.get(fn) or SPELLINGS.get(fn)
    except TypeError:
        return None


def defvjp(fn: Callable, vjp: Callable, nargs: tuple[int, int | None] = (1, None)) -> Callable:
    """Teach chadpy the derivative of `fn`.

    `vjp(d, y, *args)` is called at run time with the output cotangent `d`, the
    primal result `y` and the arguments, and returns one cotangent per argument.
    Its result may be a number or an array of any shape. Returns `fn`, so it can
    be used as a decorator factory's result.
    """
    name = getattr(fn, "__name__", None) or type(fn).__name__
    PRIMITIVES[fn] = Primitive(
        name, lambda *a: call(fn, *a), None, nargs, GENERAL_ARRAY, runtime_vjp=vjp, fn=fn, elementwise=False
    )
    return fn
