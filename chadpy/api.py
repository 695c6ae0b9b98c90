"""The public API: `reverse`, `grad`, `value_and_grad`, `vjp`, `source` (JAX's conventions),
and `cost_report`, which measures a derivative against its primal (`chadpy.cost`).

Derivatives are built at their first use and cached per argument signature and stage;
a cached derivative is rebuilt if a module constant or function it used was rebound.
Every entry point takes `stage=` (`naive`, `sparse`, `monadic`, `efficient`, see
`stages.py`); the default is `efficient`, the only one `simplify` applies to.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cost
from .build import Derivative, build, generate_source
from .errors import ChadError, ChadTypeError, Loc
from .stages import stage_named
from .vtypes import ARR, CONST, REAL, Tup, VType, from_user, is_active, of_value, to_user

_CACHE_ATTR = "__chad_cache__"


def _unwrap(f: Callable) -> types.FunctionType:
    return getattr(f, "__chad_wrapped__", f)


def _shape(v: Any) -> Any:
    """What the type signature of a value depends on: its type, a tuple's shape, the kinds of a
    list's or dict's elements, an array's dtype kind (not its shape: derivatives are shape-generic)."""
    kind = type(v)
    if kind is tuple:
        return tuple(map(_shape, v))
    if kind is list:
        return kind, frozenset(map(_shape, v))
    if kind is dict:  # its keys are part of its type (each key's value has its own)
        return kind, tuple((k, _shape(x)) for k, x in v.items())
    if kind is np.ndarray:
        return kind, v.dtype.kind
    if callable(v) and kind is not type:
        return v  # a function argument: its code (and the constants it reads) is part of the derivative
    return kind


def _derivative(
    fn: types.FunctionType, values: tuple, argnums: tuple[int, ...], simplify: bool, stage: str
) -> Derivative:
    """The cached derivative for these argument types (built on first use)."""
    cache: dict = fn.__dict__.setdefault(_CACHE_ATTR, {})
    key = (argnums, tuple(map(_shape, values)), simplify, stage)
    d = cache.get(key)
    if d is None or not d.watch.still_valid():
        sig = tuple(of_value(v, i in argnums) for i, v in enumerate(values))
        d = cache[key] = build(fn, sig, stage_named(stage), simplify)
    fn.__dict__["__chad_last_sig__"] = d.sig
    return d


def _bind(fn: types.FunctionType, args: tuple, kwargs: dict) -> tuple:
    """All parameter values in order (defaults filled in)."""
    code = fn.__code__
    if not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount:
        return args  # the common case, without inspect's overhead
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise ChadError(f"{fn.__name__}: {e}") from None
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _argnums(argnums: int | tuple[int, ...], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ChadError(f"argnums {i} out of range for {nargs} positional arguments")
    return tuple(i % nargs for i in nums)


def _vjp(f: Callable, args: tuple, kwargs: dict, argnums: tuple[int, ...], simplify: bool, stage: str):
    """Run the forward pass; return (result, pullback over argnums, result type)."""
    fn = _unwrap(f)
    values = _bind(fn, args, kwargs)
    d = _derivative(fn, values, argnums, simplify, stage)
    sig = d.sig
    result, backpropagator = d.forward(*values)
    result_type = d.result_type

    def pullback(ct: Any) -> tuple:
        cts = backpropagator(from_user(ct, result_type) if is_active(result_type) else None)
        return tuple(to_user(cts[i], sig[i], values[i]) for i in argnums)

    return result, pullback, result_type, d.entry.fn.loc


def _scalar_ct(fn: Callable, value: Any, t: VType, loc: Loc) -> float:
    """The seed cotangent 1.0, after checking the output is a float."""
    if t is REAL or (t is CONST and isinstance(value, float)):
        return 1.0
    if t in (ARR, CONST) and isinstance(value, (np.floating, np.ndarray)) and np.ndim(value) == 0:
        return 1.0  # a NumPy scalar (np.sum of an array)
    raise ChadTypeError(
        f"grad of {_unwrap(fn).__name__} needs a scalar float output, got {type(value).__name__}; use vjp for others",
        loc,
    )


def value_and_grad(
    f: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    simplify: bool = True,
    stage: str = "efficient",
) -> Callable:
    """`g(*args)` returns `(f(*args), gradient)`; with has_aux, `((value, aux), gradient)`."""

    @functools.wraps(_unwrap(f))
    def value_and_grad_f(*args: Any, **kwargs: Any) -> tuple:
        nums = _argnums(argnums, len(args))
        result, pullback, t, loc = _vjp(f, args, kwargs, nums, simplify, stage)
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise ChadTypeError("has_aux=True needs the function to return a pair (output, aux)")
            out_t = t.items[0] if isinstance(t, Tup) else CONST
            seed: Any = (_scalar_ct(f, result[0], out_t, loc), _zero_like_aux(result[1]))
        else:
            seed = _scalar_ct(f, result, t, loc)
        grads = pullback(seed)
        return result, (grads[0] if isinstance(argnums, int) else grads)

    return value_and_grad_f


def _zero_like_aux(aux: Any) -> Any:
    """A zero cotangent in the structure of the auxiliary output."""
    if isinstance(aux, float):
        return 0.0
    if isinstance(aux, tuple):
        return tuple(_zero_like_aux(a) for a in aux)
    return None


def grad(
    f: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    simplify: bool = True,
    stage: str = "efficient",
) -> Callable:
    """`g(*args)` returns the gradient of the scalar `f` w.r.t. the arguments in `argnums`."""
    vg = value_and_grad(f, argnums, has_aux, simplify, stage)

    @functools.wraps(_unwrap(f))
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def vjp(f: Callable, *primals: Any, has_aux: bool = False, simplify: bool = True, stage: str = "efficient") -> tuple:
    """`(f(*primals), pullback)`: `pullback(ct)` gives one cotangent per primal (a tuple)."""
    result, pullback, _, _ = _vjp(f, primals, {}, tuple(range(len(primals))), simplify, stage)
    if not has_aux:
        return result, pullback
    out, aux = result

    def pullback_out(ct: Any) -> tuple:
        return pullback((ct, _zero_like_aux(aux)))

    return out, pullback_out, aux


def source(
    f: Callable,
    *args: Any,
    stage: str = "efficient",
    simplify: bool = True,
    annotate: bool = True,
    **kwargs: Any,
) -> str:
    """The generated derivative of `f`, as Python source.

    With example arguments, for their types (all positional ones differentiated);
    otherwise for the types of the last differentiated call, or all-float parameters.
    `annotate` puts a comment on each part naming the CHAD rule that made it, and the
    environment's slot layout on each scope.
    """
    fn = _unwrap(f)
    if args or kwargs:
        values = _bind(fn, args, kwargs)
        sig = tuple(of_value(v, i < len(args)) for i, v in enumerate(values))
    else:
        sig = fn.__dict__.get("__chad_last_sig__") or tuple(REAL for _ in inspect.signature(fn).parameters)
    text, _, _, _ = generate_source(fn, sig, stage_named(stage), simplify, annotate)
    return text


@dataclass(frozen=True)
class CostReport:
    """The cost (`chadpy.cost`) of running f, and of its derivative: the forward pass
    (primal values and backpropagators) plus the backward pass on a seed cotangent."""

    primal: cost.Cost
    derivative: cost.Cost

    @property
    def ratio(self) -> float:
        return self.derivative.total / self.primal.total


def cost_report(f: Callable, *args: Any, stage: str = "efficient", simplify: bool = True, ct: Any = None) -> CostReport:
    """Measure f(*args) and its derivative with respect to all positional arguments.

    The derivative is built (and run once) before measuring, so compilation is not
    counted, nor is converting its result to user-facing values (DESIGN.md section 7).
    Arrays among the arguments are counted element-wise (`cost.counted`). `ct` is the
    output cotangent (default 1.0: f must then return a float; pass `ct` for other outputs).
    """
    fn = _unwrap(f)
    values = cost.counted(_bind(fn, args, {}))
    d = _derivative(fn, values, tuple(range(len(args))), simplify, stage)
    result, backpropagator = d.forward(*values)
    if ct is None:  # the seed 1.0, after checking the output is a float (grad's rule)
        ct = _scalar_ct(fn, result, d.result_type, d.entry.fn.loc)
    seed = from_user(ct, d.result_type) if is_active(d.result_type) else None
    backpropagator(seed)  # warm up: first-call effects (imports, caches) are not the program's cost
    _, primal = cost.measure(lambda: fn(*values))
    _, derivative = cost.measure(lambda: d.forward(*values)[1](seed))
    return CostReport(primal, derivative)


class Reverse:
    """A function with derivatives attached: `f(x)`, `f.grad(x)`, `f.vjp(x)`, `f.source`."""

    def __init__(self, fn: types.FunctionType, stage: str = "efficient"):
        functools.update_wrapper(self, fn)
        self.__chad_wrapped__ = fn
        self.stage = stage_named(stage).name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__chad_wrapped__(*args, **kwargs)

    def grad(self, *args: Any, **kwargs: Any) -> Any:
        """Gradients w.r.t. all positional arguments (a tuple; the bare gradient if there is one)."""
        _, g = self.value_and_grad(*args, **kwargs)
        return g

    def value_and_grad(self, *args: Any, **kwargs: Any) -> tuple:
        nums: int | tuple[int, ...] = 0 if len(args) == 1 else tuple(range(len(args)))
        return value_and_grad(self.__chad_wrapped__, nums, stage=self.stage)(*args, **kwargs)

    def vjp(self, *args: Any) -> tuple:
        return vjp(self.__chad_wrapped__, *args, stage=self.stage)

    @property
    def source(self) -> str:
        return source(self.__chad_wrapped__, stage=self.stage)

    def __repr__(self) -> str:
        return f"<chadpy.reverse {self.__chad_wrapped__.__qualname__}>"


def reverse(fn: types.FunctionType | None = None, *, stage: str = "efficient") -> Any:
    """Decorator: `f` stays callable as before and gains `grad`, `value_and_grad`, `vjp`, `source`.

    `@reverse` or `@reverse(stage="naive")`: the stage its derivatives use.
    """
    stage_named(stage)  # an unknown stage fails here, not at the first call
    if fn is None:
        return lambda f: Reverse(f, stage)
    return Reverse(fn, stage)
