"""How a call finds its compiled derivative: what chadpy differentiates for a callable (`target_of`), the
types of the argument values (`signature`), and the `Plan` cached per argument shapes, with the
conversions of cotangents at its ends (`seed`, `user_cotangents`).

Derivatives are built at their first use and cached per argument signature and stage (on the function,
`CACHE_ATTR`); a cached derivative is rebuilt if a module constant or function it used was rebound.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import types
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..chad.stages import stage_named
from ..errors import ChadError, ChadTypeError, Loc, caller_loc
from ..ir.types import CODE_ATTR, Flag, Float, Tup, VType, is_active, of_value
from ..pipeline import build
from ..read.origin import carry, texts_of
from ..read.source import Watch
from ..rules.registry import lookup, written_in_python
from ..runtime.scalar import UNASSIGNED
from .conversions import check_floats, from_user, to_user
from .sharing import shared_derivative

CACHE_ATTR = "__chad_cache__"


DERIVATIVE_ATTR = "__chad_derivative__"  # marks the functions chadpy returns (grad(f), ...)


CACHE_SIZE = 32  # derivatives kept per function: the most recently used (`Cache`)


class Cache(dict):
    """A function's derivatives by argument signature: the `CACHE_SIZE` most recently used, the least recently used
    going first. Pickled empty: a function pickled by value (cloudpickle) carries its code, not its derivatives."""

    last_sig: tuple | None = None  # the signature of the last differentiated call: what `source(f)` shows

    def __reduce__(self) -> tuple:
        return (Cache, ())

    def recent(self, key: object) -> Any:
        """The entry for `key`, now the most recently used (None if there is none)."""
        value = self.pop(key, None)
        if value is not None:
            self[key] = value
        return value

    def keep(self, key: object, value: Any) -> Any:
        """`value` for `key`, the least recently used entry going if there are too many."""
        self[key] = value
        if len(self) > CACHE_SIZE:
            del self[next(iter(self))]
        return value


PRIMITIVE_CACHES: dict[object, Cache] = {}  # the derivative caches of primitives (which have no __dict__)


def unwrap(f: Callable) -> Callable:
    return getattr(f, "__chad_wrapped__", f)


def name_of(f: Callable) -> str:
    """What messages call a function chadpy was given."""
    return getattr(unwrap(f), "__name__", None) or type(f).__name__


class Target(NamedTuple):
    """What chadpy differentiates for a callable: a Python function or a primitive, and the values
    bound before the caller's arguments and as keywords (a bound method's instance, a
    `functools.partial`'s arguments: data, never differentiated)."""

    fn: Callable
    bound: tuple = ()
    keywords: dict = {}  # never mutated: a shared default is safe

    def values(self, args: tuple, kwargs: dict) -> tuple:
        """All parameter values of `fn` for a call with `args` and `kwargs`."""
        return bind(self.fn, (*self.bound, *args), {**self.keywords, **kwargs})

    def places(self, positions: range | tuple[int, ...]) -> tuple[Place, ...]:
        """Where the positional arguments at these positions of a call (as passed, like JAX's `argnums`)
        land among `fn`'s parameter values: a parameter, or an element of its `*args` tuple."""
        k = len(self.bound)
        named = self.fn.__code__.co_argcount if isinstance(self.fn, types.FunctionType) else None
        return tuple((k + i, None) if named is None or k + i < named else (named, k + i - named) for i in positions)


Place = tuple[int, "int | None"]  # a parameter's position, and an element's in its `*args` tuple (or None)


def signature(values: tuple, places: tuple[Place, ...]) -> tuple[VType, ...]:
    """The types of the parameter values, differentiated at `places`."""
    return tuple(
        Tup(tuple(of_value(e, (p, j) in places) for j, e in enumerate(v)))
        if any(q == p and j is not None for q, j in places)
        else Flag("bool", v)
        if type(v) is bool  # its value decides the specialisation (`if as_list:` may decide what kinds it returns)
        else of_value(v, (p, None) in places)
        for p, v in enumerate(values)
    )


def _user_ct(cts: tuple, sig: tuple[VType, ...], values: tuple, place: Place) -> Any:
    """The user's cotangent of the argument at `place`."""
    p, j = place
    ct = to_user(cts[p], sig[p], values[p])
    return ct if j is None else ct[j]


def target_of(f: Callable) -> Target:
    """What chadpy differentiates for `f`."""
    fn = unwrap(f)
    if inspect.ismethod(fn):
        inner = target_of(fn.__func__)
        return inner._replace(bound=(*inner.bound, fn.__self__))
    if isinstance(fn, functools.partial):
        inner = target_of(fn.func)
        return inner._replace(bound=(*inner.bound, *fn.args), keywords={**inner.keywords, **fn.keywords})
    code = getattr(fn, CODE_ATTR, None)
    if code is not None:  # a derivative chadpy made: the Python it is (`derivative_code`)
        return target_of(code)
    if getattr(fn, DERIVATIVE_ATTR, False) or (getattr(fn, "__module__", None) or "").startswith("chadpy."):
        raise ChadError(
            f"`{getattr(fn, '__name__', fn)}` here is a derivative chadpy made (or part of chadpy's API): "
            "differentiating a derivative (grad of grad) is not supported yet"
        )
    if isinstance(fn, types.FunctionType) or lookup(fn) is not None:
        return Target(fn)
    call = inspect.getattr_static(type(fn), "__call__", None)
    if not isinstance(fn, type) and isinstance(call, types.FunctionType):
        # an object with `__call__`: that method, the object bound to it (data, like a bound method's)
        return target_of(types.MethodType(call, fn))
    if not callable(fn):
        raise ChadError(f"chadpy differentiates functions; got the {type(fn).__name__} {fn!r}")
    raise ChadError(
        f"chadpy has no rule for {getattr(fn, '__name__', type(fn).__name__)} and no Python source to differentiate; "
        "register its derivative with chadpy.defvjp"
    )


def marked_derivative(
    f: Callable,
    operator: Callable | None = None,
    of: Callable | None = None,
    argnums: object = 0,
    made: tuple[Callable, dict] | None = None,
) -> Callable:
    """Mark a function chadpy returns. With `operator` (`grad`, `jacfwd`, ...), the function `of` and `argnums` it
    was made from, it is differentiable: its code is `operator(of, argnums)(*args)`, which chadpy reads
    (`derivative_code`); otherwise differentiating it is a clear error, not a wrong number. With `made`, the
    operator and its options: it is returned as a `Transformed`, which pickles."""
    setattr(f, DERIVATIVE_ATTR, True)
    if operator is not None and (isinstance(unwrap(of), types.FunctionType) or hasattr(of, CODE_ATTR)):
        setattr(f, CODE_ATTR, derivative_code(operator, unwrap(of), argnums))  # `of` may be one chadpy made
    if made is None:
        return f
    wrapper = Transformed(f)
    attributes = wrapper.__dict__
    attributes.update(f.__dict__)  # what chadpy reads of it, its `__wrapped__` (for its signature)
    attributes["__module__"], attributes["__name__"] = f.__module__, f.__name__
    attributes["__qualname__"], attributes["__doc__"] = f.__qualname__, f.__doc__
    attributes["__chad_made__"] = (*made, of)
    return wrapper


class Transformed(functools.partial):
    """A function chadpy returns (`grad(f)`, `jacfwd(f)`, ...): called, it is the function it wraps (at C speed);
    pickled, it is how it was made, `operator(f, **options)`. So it goes to another process by reference to f with
    pickle (the process imports f's module), or with f's code and the text of its file when cloudpickle sends f by
    value (f defined in `__main__` or a notebook), never with the derivatives it has cached."""

    def __reduce__(self) -> tuple:
        operator, options, of = self.__chad_made__
        return (remade, (operator, of, options, texts_of(unwrap(of))))

    def __repr__(self) -> str:
        operator, options, of = self.__chad_made__
        return f"<chadpy {operator.__name__} of {name_of(of)}>"


def remade(operator: Callable, of: Callable, options: dict, texts: dict[str, str]) -> Callable:
    """A pickled `Transformed` again: the texts of `of` readable here, then `operator(of, **options)`."""
    carry(texts)
    return operator(of, **options)


def derivative_code(operator: Callable, of: Callable, argnums: object) -> types.FunctionType:
    """`operator(of, argnums)(*args)` written as a Python function chadpy reads: a derivative chadpy made,
    differentiated again (inside, `lower/derivatives.py` takes the derivative in forward mode).

    Its text is compiled once per operator, name and argnums (`_DERIVATIVE_CODE`), and each function made
    from it gets its own globals: `grad(f)` of a closure made afresh costs no compilation."""
    name = f"{operator.__chad_operator__}_of_{of.__name__}".replace("<", "").replace(">", "")
    key = (name, repr(argnums))
    code = _DERIVATIVE_CODE.get(key)
    if code is None:
        if len(_DERIVATIVE_CODE) >= 256:  # a notebook's functions, each of its own name: the oldest's go
            del _DERIVATIVE_CODE[next(iter(_DERIVATIVE_CODE))]
        source = f"def {name}(*args):\n    return operator(of, argnums={argnums!r})(*args)\n"
        label = f"{name} argnums={argnums!r}"  # its own file name: chadpy reads the text again by it
        code = _DERIVATIVE_CODE[key] = written_in_python(source, label, {"operator": None, "of": None})[name].__code__
    return types.FunctionType(code, {"operator": operator, "of": of, "__builtins__": builtins}, name)


_DERIVATIVE_CODE: dict[tuple[str, str], types.CodeType] = {}  # (name, repr(argnums)) -> its compiled text


NUMBERS = frozenset({float, int, bool, complex, np.float64, np.float32, np.int64})  # their shape is their type


FLOAT = frozenset({float})


def shape_key(v: Any) -> Any:
    """What the type signature of a value depends on: its type, a tuple's shape, the kinds of a
    list's or dict's elements, an array's dtype kind (not its shape: derivatives are shape-generic)."""
    kind = type(v)
    if kind is float:
        return kind
    if kind is bool:  # a flag: its value is part of the signature (`Flag`)
        return v
    if kind is tuple:
        return tuple(map(shape_key, v))
    if kind is list:
        kinds = frozenset(map(type, v))  # at C speed; elements that are not plain numbers are looked into
        return kind, kinds if kinds <= NUMBERS else frozenset(map(shape_key, v))
    if kind is dict:  # its keys are part of its type (each key's value has its own)
        return kind, tuple((k, shape_key(x)) for k, x in v.items())
    if kind is np.ndarray:
        return kind, v.ndim, v.dtype.kind
    if callable(v) and kind is not type:
        return v  # a function argument: its code (and the constants it reads) is part of the derivative
    return kind


def bind(fn: Callable, args: tuple, kwargs: dict) -> tuple:
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
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError as e:
        raise ChadError(f"{fn.__name__}: {e}") from None
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def argument_positions(argnums: int | tuple[int, ...], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ChadError(f"argnums {i} out of range for {nargs} positional arguments")
    return tuple(i % nargs for i in nums)


class Plan(NamedTuple):
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


def cache_of(fn: Callable) -> Cache:
    """The derivative cache of a function (on it: it goes with the function) or a primitive."""
    if isinstance(fn, types.FunctionType):
        cache = fn.__dict__.get(CACHE_ATTR)
        return cache if cache is not None else fn.__dict__.setdefault(CACHE_ATTR, Cache())
    cache = PRIMITIVE_CACHES.get(fn)
    return cache if cache is not None else PRIMITIVE_CACHES.setdefault(fn, Cache())


def plan_for(
    fn: Callable, values: tuple, places: tuple[Place, ...], simplify: bool, stage: str, shapes: tuple | None = None
) -> Plan:
    """The cached derivative for these argument types, differentiated at `places` (built on first use);
    `shapes`: the values' `shape_key`s, if the caller has them."""
    cache = cache_of(fn)
    key = (places, shapes or tuple(map(shape_key, values)), simplify, stage)
    plan = cache.recent(key)
    if plan is None or plan.watch and not plan.watch.still_valid():
        d = shared_derivative(fn, key, lambda: build(fn, signature(values, places), stage_named(stage), simplify))
        rt = d.result_type
        every = places == _every_place(len(values))
        floats = every and FLOAT.issuperset(map(type, values)) and all(t.active for t in d.sig)
        plan = Plan(
            d.forward,
            d.backward,
            d.watch if d.watch.entries else None,
            d.sig,
            rt,
            is_active(rt),
            type(rt) is Float and rt.active,
            places,
            floats,
            d.loc,
        )
        cache.keep(key, plan)
    cache.last_sig = plan.sig
    return plan


@functools.lru_cache(maxsize=64)
def _every_place(n: int) -> tuple[Place, ...]:
    """The places of all n parameters, in order."""
    return tuple((p, None) for p in range(n))


def user_cotangents(plan: Plan, cts: tuple, values: tuple) -> tuple:
    """The user's cotangents of the arguments at the plan's places."""
    return tuple([_user_ct(cts, plan.sig, values, place) for place in plan.places])


def seed(plan: Plan, ct: Any) -> Any:
    """The output cotangent in chadpy's sparse form."""
    return from_user(ct, plan.result_type) if plan.result_active else None


def scalar_seed(fn: Callable, value: Any, loc: Loc) -> float:
    """The seed cotangent 1.0, after checking the output is a float (a Python float, a NumPy
    floating scalar or a 0-d float array)."""
    if (
        isinstance(value, (float, np.floating))
        or isinstance(value, np.ndarray)
        and value.shape == ()
        and (value.dtype.kind == "f")
    ):
        return 1.0
    if value is UNASSIGNED:  # the variable returned is not assigned on the path taken: as the plain call
        raise UnboundLocalError(f"{loc.function} returns a local variable not assigned on the path taken\n{loc}")
    raise ChadTypeError(
        f"grad of {name_of(fn)} needs a scalar float output, got {type(value).__name__}; use vjp for others",
        loc if not loc.filename.startswith("<chadpy") else caller_loc(),  # a primitive's: where the user called it
    )


class PlansByShape:
    """A gradient function's plans, found by the shapes of a call's arguments (`by_shape`), or by their
    types alone for a call of numbers (`by_type`, at C speed); `new` makes one for a call not seen before."""

    def __init__(
        self, target: Target, argnums: int | tuple[int, ...], simplify: bool, stage: str, what: str | None = None
    ):
        """`what` names the derivative for the error when an argument in argnums holds no floats; when argnums
        (a tuple) are all the arguments, or `what` is None (`f.grad`), such an argument's gradient is None."""
        self.target, self.argnums, self.simplify, self.stage, self.what = target, argnums, simplify, stage, what
        fn = target.fn
        code = fn.__code__ if isinstance(fn, types.FunctionType) else None
        stars = code is not None and code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        # the number of positional arguments that gives every parameter (None: any; -1: no number does)
        self.positional = (
            None if code is None else -1 if code.co_kwonlyargcount or stars else code.co_argcount - len(target.bound)
        )
        self.by_shape: dict[tuple, Plan] = {}  # argument shapes -> plan, for calls of that form
        self.by_type: dict[tuple, Plan] = {}  # the same for calls of numbers only, whose shapes are their types
        self.places_of: dict[int, tuple[Place, ...]] = {}  # where argnums land, per number of positional arguments

    def new(self, args: tuple, kwargs: dict, keyed: bool) -> tuple[Plan, tuple]:
        """The plan for a call not seen before (or whose derivative is stale), and its parameter values."""
        positions = argument_positions(self.argnums, len(args))
        if self.what is not None and (isinstance(self.argnums, int) or len(set(positions)) < len(args)):
            check_floats(args, positions, self.what, self.target.fn)  # some arguments asked for: floats
        places = self.places_of.get(len(args))
        if places is None:  # after a bound method's instance; in `*args`
            if len(self.places_of) >= CACHE_SIZE:
                self.places_of.clear()
            places = self.places_of[len(args)] = self.target.places(positions)
        values = self.target.values(args, kwargs)
        shapes = tuple(map(shape_key, values))
        plan = plan_for(self.target.fn, values, places, self.simplify, self.stage, shapes)
        if keyed:
            if len(self.by_shape) >= CACHE_SIZE:  # calls of many forms: the function's own cache keeps the recent
                self.by_shape.clear()
                self.by_type.clear()
            self.by_shape[shapes] = plan
            if NUMBERS.issuperset(shapes):
                self.by_type[shapes] = plan
        return plan, values
