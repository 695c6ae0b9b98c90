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

The tables themselves are flat files in `rules/`: scalars and operators, lists
and dicts, NumPy. An operator means different things on different types (`+` adds
numbers, concatenates lists); `resolve` picks the version for the argument types
found by inference. A rule that needs a primal value the list may lose later (a
length before an `append`) names it with `saves`: the forward pass stores it.
Users add their own with `defvjp`, whose rule is an ordinary Python function
called at run time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from .kinds import FLOAT_RESULT, GENERAL_ARRAY, KindRule
from .target import Expr, IfExp, Lit, call
from .vtypes import Arr, Lst, Tup, VType

Vjp = Callable[..., list[Expr]]


@dataclass(eq=False)
class Primitive:
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
    ufunc: object = None  # an operator's NumPy ufunc, for `a op= b` on arrays (laid out like `a`)
    data_only: bool = False  # no derivative rule: an error if a derivative flows into it (not a zero)
    containers: bool = False  # takes tuples, lists or dicts that carry derivatives
    # What its result refers to (for `ownership`): "" a new object (or a number); "view" the data of
    # its first argument (`np.reshape`); "argument" one of its arguments or an element of one
    # (`max(a, b)`); "unknown" anything (a call chadpy cannot read may also keep its arguments).
    aliases: str = ""

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
            if not (isinstance(a, Lit) and (a.value is default or _same_constant(a.value, default))):
                x.keywords[name] = a
        return x

    return emit


def _same_constant(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


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


def sign_times(d: Expr, x: Expr) -> Expr:
    """d * sign(x), with sign(0) = 0 (the subgradient chadpy picks for |x| at 0)."""
    return IfExp(x.compare(">", 0), d, IfExp(x.compare("<", 0), -d, Lit(0.0)))


def pow_base(d: Expr, a: Expr, b: Expr, general: object) -> Expr:
    """Cotangent of a in a ** b: inline for a literal exponent (`x ** 2` gives `d * 2 * x`),
    else `general(d, a, b)` (the scalar or the array version)."""
    if isinstance(b, Lit) and isinstance(b.value, (int, float)) and not isinstance(b.value, bool):
        k = b.value
        return Lit(0.0) if k == 0 else d if k == 1 else d * k * a if k == 2 else d * k * a ** (k - 1)
    return call(general, d, a, b)


def resolve(op: Primitive, types: list[VType]) -> Primitive:
    """The version of `op` for these argument types (a list `+` concatenates)."""
    if op.for_sequences is not None and any(isinstance(t, (Lst, Tup)) for t in types):
        return op.for_sequences
    if op.for_arrays is not None and any(isinstance(t, Arr) for t in types):
        return op.for_arrays
    return op


# The registries, filled by the files in `rules/`: functions by the Python object a call
# resolves to, operators by their Python spelling (unary ones: "neg", "pos", "not"),
# methods and attributes of array values by name (as the NumPy functions they are).
PRIMITIVES: dict[object, Primitive] = {}
OPERATORS: dict[str, Primitive] = {}
METHODS: dict[str, object] = {}
ATTRIBUTES: dict[str, object] = {}


def lookup(fn: object) -> Primitive | None:
    """The primitive a called object is, if any (unhashable objects are none)."""
    try:
        return PRIMITIVES.get(fn)
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
