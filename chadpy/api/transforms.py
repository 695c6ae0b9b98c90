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
from typing import Any, NamedTuple

import numpy as np

from ..backend.build import origin
from ..chad.stages import stage_named
from ..errors import ChadError, ChadTypeError, Loc, caller_loc, without_internal_frames
from ..ir.types import REAL, Float, Tup, VType, is_active, of_value
from ..pipeline import build, generate_source, show, typed_ir
from ..read.source import Watch
from ..rules.registry import lookup
from ..runtime import cost
from .conversions import from_user, to_user

_CACHE_ATTR = "__chad_cache__"
_DERIVATIVE_ATTR = "__chad_derivative__"  # marks the functions chadpy returns (grad(f), ...)
_PRIMITIVE_CACHES: dict[object, dict] = {}  # the derivative caches of primitives (which have no __dict__)


def _api(f: Callable) -> Callable:
    """An entry point of chadpy: an exception leaving it shows the user's code, not chadpy's.

    A `ChadError` without a place gets the user's call; an error raised while a derivative
    runs gets a note naming the user's line it comes from; chadpy's own frames are left out
    of the traceback (`CHADPY_TRACEBACK=full` keeps them)."""

    @functools.wraps(f)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except Exception as error:
            raise _leaving(error)  # noqa: B904  chadpy's frames are hidden; CHADPY_TRACEBACK=full shows them

    return entry


def _leaving(error: Exception) -> Exception:
    """An error leaving an entry point, explained, with chadpy's frames hidden."""
    _explain(error)
    return error.with_traceback(without_internal_frames(error.__traceback__))


def _explain(error: Exception) -> None:
    """Name the user's code in an error leaving chadpy (once, however many entry points it leaves)."""
    if isinstance(error, ChadError):
        error.located(caller_loc())
        return
    if getattr(error, "__chad_explained__", False):
        return
    error.__chad_explained__ = True
    tb, loc = error.__traceback__, None
    while tb is not None:  # the innermost line of a generated derivative
        loc = origin(tb.tb_frame.f_code.co_filename, tb.tb_lineno) or loc
        tb = tb.tb_next
    if loc is not None:
        error.add_note(f"raised in the derivative chadpy made, at the part that comes from\n{loc}")


def _unwrap(f: Callable) -> Callable:
    return getattr(f, "__chad_wrapped__", f)


class Target(NamedTuple):
    """What chadpy differentiates for a callable: a Python function or a primitive, and the values
    bound before the caller's arguments and as keywords (a bound method's instance, a
    `functools.partial`'s arguments: data, never differentiated)."""

    fn: Callable
    bound: tuple = ()
    keywords: dict = {}  # never mutated: a shared default is safe

    def values(self, args: tuple, kwargs: dict) -> tuple:
        """All parameter values of `fn` for a call with `args` and `kwargs`."""
        return _bind(self.fn, (*self.bound, *args), {**self.keywords, **kwargs})

    def places(self, positions: range | tuple[int, ...]) -> tuple[Place, ...]:
        """Where the positional arguments at these positions of a call (as passed, like JAX's `argnums`)
        land among `fn`'s parameter values: a parameter, or an element of its `*args` tuple."""
        k = len(self.bound)
        named = self.fn.__code__.co_argcount if isinstance(self.fn, types.FunctionType) else None
        return tuple((k + i, None) if named is None or k + i < named else (named, k + i - named) for i in positions)


Place = tuple[int, "int | None"]  # a parameter's position, and an element's in its `*args` tuple (or None)


def _signature(values: tuple, places: tuple[Place, ...]) -> tuple[VType, ...]:
    """The types of the parameter values, differentiated at `places`."""
    return tuple(
        Tup(tuple(of_value(e, (p, j) in places) for j, e in enumerate(v)))
        if any(q == p and j is not None for q, j in places)
        else of_value(v, (p, None) in places)
        for p, v in enumerate(values)
    )


def _user_ct(cts: tuple, sig: tuple[VType, ...], values: tuple, place: Place) -> Any:
    """The user's cotangent of the argument at `place`."""
    p, j = place
    ct = to_user(cts[p], sig[p], values[p])
    return ct if j is None else ct[j]


def _target(f: Callable) -> Target:
    """What chadpy differentiates for `f`."""
    fn = _unwrap(f)
    if inspect.ismethod(fn):
        inner = _target(fn.__func__)
        return inner._replace(bound=(*inner.bound, fn.__self__))
    if isinstance(fn, functools.partial):
        inner = _target(fn.func)
        return inner._replace(bound=(*inner.bound, *fn.args), keywords={**inner.keywords, **fn.keywords})
    if getattr(fn, _DERIVATIVE_ATTR, False) or (getattr(fn, "__module__", None) or "").startswith("chadpy."):
        raise ChadError(
            f"`{getattr(fn, '__name__', fn)}` here is a derivative chadpy made (or part of chadpy's API): "
            "differentiating a derivative (grad of grad) is not supported yet"
        )
    if isinstance(fn, types.FunctionType) or lookup(fn) is not None:
        return Target(fn)
    if not callable(fn):
        raise ChadError(f"chadpy differentiates functions; got the {type(fn).__name__} {fn!r}")
    raise ChadError(
        f"chadpy has no rule for {getattr(fn, '__name__', type(fn).__name__)} and no Python source to differentiate; "
        "register its derivative with chadpy.defvjp"
    )


def _derivative_function(f: Callable) -> Callable:
    """Mark a function chadpy returns, so that differentiating it is a clear error, not a wrong number."""
    setattr(f, _DERIVATIVE_ATTR, True)
    return f


_NUMBERS = frozenset({float, int, bool, complex, np.float64, np.float32, np.int64})  # their shape is their type
_FLOAT = frozenset({float})


def _shape(v: Any) -> Any:
    """What the type signature of a value depends on: its type, a tuple's shape, the kinds of a
    list's or dict's elements, an array's dtype kind (not its shape: derivatives are shape-generic)."""
    kind = type(v)
    if kind is float:
        return kind
    if kind is tuple:
        return tuple(map(_shape, v))
    if kind is list:
        kinds = frozenset(map(type, v))  # at C speed; elements that are not plain numbers are looked into
        return kind, kinds if kinds <= _NUMBERS else frozenset(map(_shape, v))
    if kind is dict:  # its keys are part of its type (each key's value has its own)
        return kind, tuple((k, _shape(x)) for k, x in v.items())
    if kind is np.ndarray:
        return kind, v.ndim, v.dtype.kind
    if callable(v) and kind is not type:
        return v  # a function argument: its code (and the constants it reads) is part of the derivative
    return kind


def _bind(fn: Callable, args: tuple, kwargs: dict) -> tuple:
    """All parameter values in order (defaults filled in)."""
    if not isinstance(fn, types.FunctionType):  # a primitive: its arguments by position
        if kwargs:
            raise ChadError(f"{fn.__name__}: differentiate a primitive with positional arguments only")
        return args
    code = fn.__code__
    stars = code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    if not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount and not stars:
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


class _Plan(NamedTuple):
    """A derivative ready for calls with one argument signature: a gradient function keeps one per
    argument shapes, so a repeated call skips binding, signature and cache-key work and rechecks
    only the outside values the derivative read (`watch`)."""

    forward: Callable  # (result, saved) of the parameters
    backward: Callable  # the parameters' cotangents of (saved, the result's)
    watch: Watch | None  # None if it read no outside value
    sig: tuple[VType, ...]
    result_type: VType
    result_active: bool
    seed_one: bool  # the result is a float: the seed 1.0 is passed as it is
    places: tuple[Place, ...]
    floats: bool  # the places are all the parameters, in order, each given a Python float
    loc: Loc
    cache: dict  # the function's derivative cache (its "last_sig" is what `source(f)` shows)


def _plan(fn: Callable, values: tuple, places: tuple[Place, ...], simplify: bool, stage: str) -> _Plan:
    """The cached derivative for these argument types, differentiated at `places` (built on first use)."""
    if isinstance(fn, types.FunctionType):
        cache: dict = fn.__dict__.setdefault(_CACHE_ATTR, {})
    else:
        cache = _PRIMITIVE_CACHES.setdefault(fn, {})
    key = (places, tuple(map(_shape, values)), simplify, stage)
    plan = cache.get(key)
    if plan is None or plan.watch and not plan.watch.still_valid():
        d = build(fn, _signature(values, places), stage_named(stage), simplify)
        rt = d.result_type
        every = places == tuple((p, None) for p in range(len(values)))
        floats = every and all(type(v) is float and t.active for v, t in zip(values, d.sig))
        plan = cache[key] = _Plan(
            d.forward,
            d.backward,
            d.watch if d.watch.entries else None,
            d.sig,
            rt,
            is_active(rt),
            type(rt) is Float and rt.active,
            places,
            floats,
            d.entry.fn.loc,
            cache,
        )
    cache["last_sig"] = plan.sig
    return plan


def _user_cts(plan: _Plan, cts: tuple, values: tuple) -> tuple:
    """The user's cotangents of the arguments at the plan's places."""
    return tuple([_user_ct(cts, plan.sig, values, place) for place in plan.places])


def _seed(plan: _Plan, ct: Any) -> Any:
    """The output cotangent in chadpy's sparse form."""
    return from_user(ct, plan.result_type) if plan.result_active else None


def _vjp(target: Target, args: tuple, kwargs: dict, places: tuple[Place, ...], simplify: bool, stage: str):
    """Run the forward pass of `target`; return (result, pullback at `places`, the function's location).
    The pullback is plain (the callers are entry points already, or wrap it as one)."""
    values = target.values(args, kwargs)
    plan = _plan(target.fn, values, places, simplify, stage)
    result, saved = plan.forward(*values)

    def pullback(ct: Any) -> tuple:
        return _user_cts(plan, plan.backward(saved, _seed(plan, ct)), values)

    return result, pullback, plan.loc


def _scalar_ct(fn: Callable, value: Any, loc: Loc) -> float:
    """The seed cotangent 1.0, after checking the output is a float (a Python float, a NumPy
    floating scalar or a 0-d float array)."""
    if (
        isinstance(value, (float, np.floating))
        or isinstance(value, np.ndarray)
        and value.shape == ()
        and (value.dtype.kind == "f")
    ):
        return 1.0
    raise ChadTypeError(
        f"grad of {getattr(_unwrap(fn), '__name__', fn)} needs a scalar float output, "
        f"got {type(value).__name__}; use vjp for others",
        loc,
    )


def _gradient_function(
    f: Callable, argnums: Any, has_aux: bool, simplify: bool, stage: str, with_value: bool
) -> Callable:
    """The function `value_and_grad` (`with_value`) or `grad` returns: an entry point itself
    (not wrapped in `_api`: a gradient call's fixed cost is part of the benchmark).

    A call with all parameters given by position (the common case) finds its plan by the
    shapes of its arguments alone; other calls bind their arguments first."""
    target = _target(f)  # once, here: a value chadpy cannot differentiate fails now, not at the first call
    fn, bound = target.fn, target.bound
    code = fn.__code__ if isinstance(fn, types.FunctionType) else None
    stars = code is not None and code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    # the number of positional arguments that gives every parameter (None: any; -1: no number does)
    positional = None if code is None else -1 if code.co_kwonlyargcount or stars else code.co_argcount - len(bound)
    single = isinstance(argnums, int)
    plans: dict[tuple, _Plan] = {}  # argument shapes -> plan, for calls of that form
    numbers: dict[tuple, _Plan] = {}  # the same for calls of numbers only, whose shapes are their types
    places_of: dict[int, tuple[Place, ...]] = {}  # where argnums land, for each number of positional arguments

    def slow_plan(args: tuple, kwargs: dict, keyed: bool) -> tuple[_Plan, tuple]:
        """The plan for a call not seen before (or whose derivative is stale), and its parameter values."""
        places = places_of.get(len(args))
        if places is None:  # after a bound method's instance; in `*args`
            places = places_of[len(args)] = target.places(_argnums(argnums, len(args)))
        values = target.values(args, kwargs)
        plan = _plan(fn, values, places, simplify, stage)
        if keyed:
            shapes = tuple(map(_shape, values))
            plans[shapes] = plan
            if _NUMBERS.issuperset(shapes):
                numbers[shapes] = plan
        return plan, values

    @functools.wraps(_unwrap(f), updated=())
    def gradient_function(*args: Any, **kwargs: Any) -> Any:
        try:
            values = (*bound, *args) if bound else args
            keyed = not kwargs and (positional is None or positional == len(args))
            plan = None
            if keyed:
                # numbers by their types, at C speed; anything else by its shapes
                plan = numbers.get(tuple(map(type, values))) or plans.get(tuple(map(_shape, values)))
            if plan is None or plan.watch and not plan.watch.still_valid():
                plan, values = slow_plan(args, kwargs, keyed)
            plan.cache["last_sig"] = plan.sig
            result, saved = plan.forward(*values)
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise ChadTypeError("has_aux=True needs the function to return a pair (output, aux)")
                cts = plan.backward(saved, _seed(plan, (_scalar_ct(f, result[0], plan.loc), None)))
            elif type(result) is float and plan.seed_one:
                cts = plan.backward(saved, 1.0)
            else:
                cts = plan.backward(saved, _seed(plan, _scalar_ct(f, result, plan.loc)))
            # floats as they are (a gradient call's fixed cost is part of the benchmark)
            grads = cts if plan.floats and _FLOAT.issuperset(map(type, cts)) else _user_cts(plan, cts, values)
            if single:
                grads = grads[0]
            if with_value:
                return result, grads
            return (grads, result[1]) if has_aux else grads
        except Exception as error:
            raise _leaving(error)  # noqa: B904  chadpy's frames are hidden; CHADPY_TRACEBACK=full shows them

    return _derivative_function(gradient_function)


@_api
def value_and_grad(
    f: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    simplify: bool = True,
    stage: str = "efficient",
) -> Callable:
    """`g(*args)` returns `(f(*args), gradient)`; with has_aux, `((value, aux), gradient)`."""
    return _gradient_function(f, argnums, has_aux, simplify, stage, with_value=True)


@_api
def grad(
    f: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    simplify: bool = True,
    stage: str = "efficient",
) -> Callable:
    """`g(*args)` returns the gradient of the scalar `f` w.r.t. the arguments in `argnums`;
    with has_aux, `(gradient, aux)`."""
    return _gradient_function(f, argnums, has_aux, simplify, stage, with_value=False)


@_api
def vjp(f: Callable, *primals: Any, has_aux: bool = False, simplify: bool = True, stage: str = "efficient") -> tuple:
    """`(f(*primals), pullback)`: `pullback(ct)` gives one cotangent per primal (a tuple)."""
    target = _target(f)
    result, pull, _ = _vjp(target, primals, {}, target.places(range(len(primals))), simplify, stage)
    pullback = _api(pull)
    if not has_aux:
        return result, pullback
    out, aux = result

    @_api
    def pullback_out(ct: Any) -> tuple:
        return pullback((ct, None))  # the aux output takes no cotangent

    return out, pullback_out, aux


@_api
def source(
    f: Callable,
    *args: Any,
    stage: str = "efficient",
    simplify: bool = True,
    annotate: bool = True,
    after: str | None = None,
    **kwargs: Any,
) -> str:
    """The generated derivative of `f`, as Python source; with `stage="ir"`, the typed core IR
    that CHAD transforms (`f` and every function it calls, specialised to their types); with
    `after="fuse"` (any name `python -m chadpy passes` lists), the program as it stands after
    that pass.

    With example arguments, for their types (all positional ones differentiated);
    otherwise for the types of the last differentiated call, or all-float parameters.
    `annotate` puts a comment on each part naming the CHAD rule that made it, and the
    environment's slot layout on each scope.
    """
    target = _target(f)
    fn = target.fn
    if args or kwargs:
        sig = _signature(target.values(args, kwargs), target.places(range(len(args))))
    else:
        cache = getattr(fn, "__dict__", {}).get(_CACHE_ATTR, {})
        sig = cache.get("last_sig") or tuple(REAL for _ in inspect.signature(fn).parameters)
    if stage == "ir":
        return typed_ir(fn, sig)
    if after is not None:
        return show(fn, sig, stage_named(stage), after, annotate)
    return generate_source(fn, sig, stage_named(stage), simplify, annotate).source


@dataclass(frozen=True)
class CostReport:
    """The cost (`chadpy.cost`) of running f, and of its derivative: the forward pass
    (primal values and backpropagators) plus the backward pass on a seed cotangent."""

    primal: cost.Cost
    derivative: cost.Cost

    @property
    def ratio(self) -> float:
        return self.derivative.total / self.primal.total


@_api
def cost_report(f: Callable, *args: Any, stage: str = "efficient", simplify: bool = True, ct: Any = None) -> CostReport:
    """Measure f(*args) and its derivative with respect to all positional arguments.

    The derivative is built (and run once) before measuring, so compilation is not
    counted, nor is converting its result to user-facing values (docs/design.md section 7).
    Arrays among the arguments are counted element-wise (`cost.counted`). `ct` is the
    output cotangent (default 1.0: f must then return a float; pass `ct` for other outputs).
    """
    target = _target(f)
    fn = target.fn
    values = cost.counted(target.values(args, {}))
    plan = _plan(fn, values, target.places(range(len(args))), simplify, stage)
    result, saved = plan.forward(*values)
    if ct is None:  # the seed 1.0, after checking the output is a float (grad's rule)
        ct = _scalar_ct(fn, result, plan.loc)
    seed = _seed(plan, ct)
    plan.backward(saved, seed)  # warm up: first-call effects (imports, caches) are not the program's cost
    _, primal = cost.measure(lambda: fn(*values))
    _, derivative = cost.measure(lambda: plan.backward(plan.forward(*values)[1], seed))
    return CostReport(primal, derivative)


class Reverse:
    """A function with derivatives attached: `f(x)`, `f.grad(x)`, `f.vjp(x)`, `f.source`."""

    def __init__(self, fn: types.FunctionType, stage: str = "efficient"):
        functools.update_wrapper(self, fn)
        self.__chad_wrapped__ = fn
        self.stage = stage_named(stage).name
        self._gradients: dict[tuple[int, bool], Callable] = {}  # (number of arguments, with value) -> grad function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__chad_wrapped__(*args, **kwargs)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """A method decorated with `@reverse`: bound to its instance like a plain function."""
        if instance is None:
            return self
        return Reverse(types.MethodType(self.__chad_wrapped__, instance), self.stage)

    def _gradient(self, nargs: int, with_value: bool) -> Callable:
        """The gradient function w.r.t. all `nargs` positional arguments (made once: its plans are kept)."""
        g = self._gradients.get((nargs, with_value))
        if g is None:
            nums: int | tuple[int, ...] = 0 if nargs == 1 else tuple(range(nargs))
            g = (value_and_grad if with_value else grad)(self.__chad_wrapped__, nums, stage=self.stage)
            self._gradients[nargs, with_value] = g
        return g

    def grad(self, *args: Any, **kwargs: Any) -> Any:
        """Gradients w.r.t. all positional arguments (a tuple; the bare gradient if there is one)."""
        return self._gradient(len(args), False)(*args, **kwargs)

    def value_and_grad(self, *args: Any, **kwargs: Any) -> tuple:
        return self._gradient(len(args), True)(*args, **kwargs)

    @_api
    def vjp(self, *args: Any) -> tuple:
        return vjp(self.__chad_wrapped__, *args, stage=self.stage)

    @property
    def source(self) -> str:
        return source(self.__chad_wrapped__, stage=self.stage)

    def __repr__(self) -> str:
        return f"<chadpy.reverse {self.__chad_wrapped__.__qualname__}>"


@_api
def reverse(fn: types.FunctionType | None = None, *, stage: str = "efficient") -> Any:
    """Decorator: `f` stays callable as before and gains `grad`, `value_and_grad`, `vjp`, `source`.

    `@reverse` or `@reverse(stage="naive")`: the stage its derivatives use.
    """
    stage_named(stage)  # an unknown stage fails here, not at the first call
    if fn is None:
        return lambda f: Reverse(f, stage)
    return Reverse(fn, stage)
