"""The public API of reverse mode: `grad`, `value_and_grad`, `vjp`, `source` (JAX's conventions),
and `cost_report`, which measures a derivative against its primal (`chadpy.runtime.cost`).

Derivatives are built at their first use and cached per argument signature and stage (`plans`).
Every entry point takes `stage=` (`naive`, `sparse`, `monadic`, `efficient`, see
`stages.py`); the default is `efficient`, the only one `simplify` applies to.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..backend.build import origin
from ..chad.stages import stage_named
from ..errors import ChadError, ChadTypeError, caller_loc, without_internal_frames
from ..ir.types import REAL
from ..pipeline import generate_source, show, typed_ir
from ..runtime import cost
from .plans import (
    FLOAT,
    Place,
    PlansByShape,
    Target,
    cache_of,
    marked_derivative,
    plan_for,
    scalar_seed,
    seed,
    shape_key,
    signature,
    target_of,
    unwrap,
    user_cotangents,
)


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
    tb, loc = error.__traceback__, None
    while tb is not None:  # the innermost line of a generated derivative
        loc = origin(tb.tb_frame.f_code.co_filename, tb.tb_lineno) or loc
        tb = tb.tb_next
    if isinstance(error, ChadError):  # raised by chadpy's runtime: at the user's line the code comes from
        error.located(loc or caller_loc())
        return
    if getattr(error, "__chad_explained__", False):
        return
    error.__chad_explained__ = True
    if loc is not None:
        error.add_note(f"raised in the derivative chadpy made, at the part that comes from\n{loc}")


def _vjp(target: Target, args: tuple, kwargs: dict, places: tuple[Place, ...], simplify: bool, stage: str):
    """Run the forward pass of `target`; return (result, pullback at `places`, the function's location).
    The pullback is plain (the callers are entry points already, or wrap it as one)."""
    values = target.values(args, kwargs)
    plan = plan_for(target.fn, values, places, simplify, stage)
    result, saved = plan.forward(*values)

    def pullback(ct: Any) -> tuple:
        return user_cotangents(plan, plan.backward(saved, seed(plan, ct)), values)

    return result, pullback, plan.loc


def make_gradient_function(
    f: Callable, argnums: Any, has_aux: bool, simplify: bool, stage: str, with_value: bool, every: bool = False
) -> Callable:
    """The function `value_and_grad` (`with_value`) or `grad` returns: an entry point itself
    (not wrapped in `_api`: a gradient call's fixed cost is part of the benchmark). `every`: argnums are all the
    arguments (`f.grad`), and an int's gradient is None, not an error.

    A call with all parameters given by position (the common case) finds its plan by the
    shapes of its arguments alone; other calls bind their arguments first."""
    target = target_of(f)  # once, here: a value chadpy cannot differentiate fails now, not at the first call
    what = None if every else "value_and_grad" if with_value else "grad"
    plans = PlansByShape(target, argnums, simplify, stage, what)
    bound, positional, by_type, by_shape = target.bound, plans.positional, plans.by_type, plans.by_shape
    cache = cache_of(target.fn)  # held here, not by a plan: a plan in its own cache would be a reference cycle
    single = isinstance(argnums, int)

    @functools.wraps(unwrap(f), updated=())
    def gradient_function(*args: Any, **kwargs: Any) -> Any:
        try:
            values = (*bound, *args) if bound else args
            keyed = not kwargs and (positional is None or positional == len(args))
            plan = None
            if keyed:
                # numbers by their types, at C speed; anything else by its shapes
                plan = by_type.get(tuple(map(type, values))) or by_shape.get(tuple(map(shape_key, values)))
            if plan is None or plan.watch and not plan.watch.still_valid():
                plan, values = plans.new(args, kwargs, keyed)
            cache.last_sig = plan.sig
            result, saved = plan.forward(*values)
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise ChadTypeError("has_aux=True needs the function to return a pair (output, aux)")
                cts = plan.backward(saved, seed(plan, (scalar_seed(f, result[0], plan.loc), None)))
            elif type(result) is float and plan.seed_one:
                cts = plan.backward(saved, 1.0)
            else:
                cts = plan.backward(saved, seed(plan, scalar_seed(f, result, plan.loc)))
            # floats as they are (a gradient call's fixed cost is part of the benchmark)
            grads = cts if plan.floats and FLOAT.issuperset(map(type, cts)) else user_cotangents(plan, cts, values)
            if single:
                grads = grads[0]
            if with_value:
                return result, grads
            return (grads, result[1]) if has_aux else grads
        except Exception as error:
            raise _leaving(error)  # noqa: B904  chadpy's frames are hidden; CHADPY_TRACEBACK=full shows them

    operator = value_and_grad if with_value else grad
    made = (operator, {"argnums": argnums, "has_aux": has_aux, "simplify": simplify, "stage": stage})
    return marked_derivative(gradient_function, None if has_aux else operator, f, argnums, made)


@_api
def value_and_grad(
    f: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    simplify: bool = True,
    stage: str = "efficient",
) -> Callable:
    """`g(*args)` returns `(f(*args), gradient)`; with has_aux, `((value, aux), gradient)`."""
    return make_gradient_function(f, argnums, has_aux, simplify, stage, with_value=True)


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
    return make_gradient_function(f, argnums, has_aux, simplify, stage, with_value=False)


grad.__chad_operator__ = "grad"
value_and_grad.__chad_operator__ = "value_and_grad"


@_api
def vjp(f: Callable, *primals: Any, has_aux: bool = False, simplify: bool = True, stage: str = "efficient") -> tuple:
    """`(f(*primals), pullback)`: `pullback(ct)` gives one cotangent per primal (a tuple)."""
    target = target_of(f)
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
    mode: str = "reverse",
    **kwargs: Any,
) -> str:
    """The generated derivative of `f`, as Python source; with `stage="ir"`, the typed core IR
    that CHAD transforms (`f` and every function it calls, specialised to their types); with
    `after="fuse"` (any name `python -m chadpy passes` lists), the program as it stands after
    that pass.

    With example arguments, for their types (all positional ones differentiated);
    otherwise for the types of the last differentiated call, or all-float parameters.
    `annotate` puts a comment on each part naming the CHAD rule that made it, and the
    environment's slot layout on each scope. `mode="forward"`: the forward-mode derivative (`chad.jvp`'s
    code: each value with its tangent), the other half of CHAD.
    """
    if mode not in ("reverse", "forward"):
        raise ChadError(f"mode is 'reverse' or 'forward', not {mode!r}")
    forward = mode == "forward"
    target = target_of(f)
    fn = target.fn
    guessed = False
    if args or kwargs:
        sig = signature(target.values(args, kwargs), target.places(range(len(args))))
    else:
        sig = cache_of(fn).last_sig
        if sig is None:
            sig, guessed = tuple(REAL for _ in inspect.signature(fn).parameters), True
    try:
        if stage == "ir":
            return typed_ir(fn, sig, forward)
        if after is not None:
            return show(fn, sig, stage_named(stage), after, annotate, forward)
        return generate_source(fn, sig, stage_named(stage), simplify, annotate, forward).source
    except ChadError as e:
        if guessed:  # the error may be the guess's, not the function's
            e.message += (
                f"\n(with no example arguments and no call differentiated yet, every parameter of {fn.__name__} was "
                "taken to be a float: give examples, `chad.source(f, *args)`)"
            )
        raise


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
    target = target_of(f)
    fn = target.fn
    values = cost.counted(target.values(args, {}))
    plan = plan_for(fn, values, target.places(range(len(args))), simplify, stage)
    result, saved = plan.forward(*values)
    if ct is None:  # the seed 1.0, after checking the output is a float (grad's rule)
        ct = scalar_seed(fn, result, plan.loc)
    d = seed(plan, ct)
    plan.backward(saved, d)  # warm up: first-call effects (imports, caches) are not the program's cost
    _, primal = cost.measure(lambda: fn(*values))
    _, derivative = cost.measure(lambda: plan.backward(plan.forward(*values)[1], d))
    return CostReport(primal, derivative)
