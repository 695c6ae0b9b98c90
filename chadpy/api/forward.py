"""Forward mode and what is built from it, with JAX's conventions: `jvp`, `jacfwd`, `jacrev`, `hessian`, `hvp`.

`jvp` runs a function's forward form (`forward/transform.py`): the primal result and its tangent in one
pass. A Jacobian is one pass per input element (`jacfwd`) or per output element (`jacrev`, over `vjp`);
a Hessian-vector product is reverse mode over forward mode, the gradient of <grad f(x), v> = the tangent
of f at x along v; a Hessian is one product per input element.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..chad.stages import stage_named
from ..errors import ChadError, Loc
from ..ir.types import VType, is_active
from ..pipeline import build
from ..read.source import Watch
from .conversions import tangent_from_user, tangent_to_user
from .plans import CACHE_ATTR, PRIMITIVE_CACHES, Place, Target, shape_key, signature, target_of


class ForwardPlan(NamedTuple):
    """A function's forward form ready for calls with one argument signature: `forward(*params, *tangents)`
    returns ((result, tangent), saved)."""

    forward: Callable
    watch: Watch | None
    sig: tuple[VType, ...]
    loc: Loc


def forward_plan(target: Target, values: tuple, places: tuple[Place, ...]) -> ForwardPlan:
    """The cached forward form of `target` for these argument values, with tangents at `places`."""
    fn = target.fn
    cache = fn.__dict__.setdefault(CACHE_ATTR, {}) if isinstance(fn, types.FunctionType) else None
    if cache is None:
        cache = PRIMITIVE_CACHES.setdefault(fn, {})
    key = ("forward", places, tuple(map(shape_key, values)))
    plan = cache.get(key)
    if plan is None or plan.watch and not plan.watch.still_valid():
        sig = signature(values, places)
        d = build(fn, sig, stage_named("efficient"), forward=True)
        plan = cache[key] = ForwardPlan(d.forward, d.watch if d.watch.entries else None, sig, d.entry.fn.loc)
    return plan


def tangent_arguments(plan: ForwardPlan, values: tuple, places: tuple[Place, ...], tangents: tuple) -> list:
    """The tangent parameters of a forward form, from the user's tangents of the arguments at `places`."""
    given: dict[int, Any] = {}
    for (p, j), t in zip(places, tangents):
        if j is None:
            given[p] = t
        else:  # an element of the `*args` tuple
            given.setdefault(p, {})[j] = t
    out = []
    for p, (t, v) in enumerate(zip(plan.sig, values)):
        if not is_active(t):
            continue
        d = given[p]
        if isinstance(d, dict):  # `*args`: the elements given tangents, None for the others
            d = tuple(d.get(j) for j in range(len(v)))
        out.append(tangent_from_user(d, t, v))
    return out


def jvp(f: Callable, primals: tuple | list, tangents: tuple | list, has_aux: bool = False) -> tuple:
    """`(f(*primals), the derivative of f at primals applied to tangents)`, in one forward pass.

    `primals` and `tangents` are tuples of the same structure, one tangent per argument (a float's a
    float, an array's an array of its shape, a container's the same container of its parts'); an
    integer argument's tangent is ignored. With `has_aux`, f returns `(output, aux)` and jvp returns
    `(output, tangent, aux)`."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ChadError(f"jvp: {len(primals)} primals and {len(tangents)} tangents; give one tangent per argument")
    target = target_of(f)
    values = target.values(primals, {})
    places = target.places(range(len(primals)))
    plan = forward_plan(target, values, places)
    (out, dout), _ = plan.forward(*values, *tangent_arguments(plan, values, places, tangents))
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ChadError("has_aux=True needs the function to return a pair (output, aux)")
        return out[0], tangent_to_user(None if dout is None else dout[0], out[0]), out[1]
    return out, tangent_to_user(dout, out)


def _basis(value: Any) -> list[Any]:
    """The unit tangents of a value, one per element, in NumPy's (C) order."""
    if isinstance(value, (float, int, np.floating)):
        return [1.0]
    a = np.asarray(value, dtype=float)
    out = []
    for k in range(a.size):
        e = np.zeros(a.size)
        e[k] = 1.0
        out.append(e.reshape(a.shape))
    return out


__all__ = ["jvp"]
