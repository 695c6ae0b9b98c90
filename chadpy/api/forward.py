"""Forward mode and what is built from it, with JAX's conventions: `jvp`, `jacfwd`, `jacrev`, `hessian`, `hvp`.

`jvp` runs a function's forward form (`forward/transform.py`): the primal result and its tangent in one
pass. A Jacobian is one pass per input element (`jacfwd`) or per output element (`jacrev`, over `vjp`);
a Hessian-vector product is reverse mode over forward mode, the gradient of <grad f(x), v> = the tangent
of f at x along v; a Hessian is one product per input element.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..backend.build import Derivative
from ..chad.stages import stage_named
from ..errors import ChadError, ChadTypeError, Loc
from ..ir.types import VType, is_active
from ..pipeline import build, hessian_vector_program
from ..read.source import Watch
from ..rules.registry import DERIVATIVE_HELPERS, written_in_python
from ..runtime.tangents import from_columns, from_parts, tangent_size, unit_tangents, zeros_like_tangent
from .conversions import check_floats, has_no_derivative, tangent_from_user, tangent_to_user, to_user
from .plans import (
    Place,
    Target,
    argument_positions,
    cache_of,
    marked_derivative,
    shape_key,
    signature,
    target_of,
)
from .sharing import shared_derivative
from .transforms import _api, vjp


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
    cache = cache_of(fn)
    key = ("forward", places, tuple(map(shape_key, values)))
    plan = cache.recent(key)
    if plan is None or plan.watch and not plan.watch.still_valid():
        sig = signature(values, places)
        d = shared_derivative(fn, key, lambda: build(fn, sig, stage_named("efficient"), forward=True))
        plan = cache.keep(key, ForwardPlan(d.forward, d.watch if d.watch.entries else None, sig, d.loc))
    return plan


def tangent_arguments(plan: ForwardPlan, values: tuple, places: tuple[Place, ...], tangents: tuple) -> list:
    """The tangent parameters of a forward form, from the user's tangents of the arguments at `places`."""
    given: dict[int, Any] = {}
    packed: dict[int, dict[int, Any]] = {}  # `*args`: the elements given tangents
    for (p, j), t in zip(places, tangents):
        if j is None:
            given[p] = t
        else:
            packed.setdefault(p, {})[j] = t
    for p, elements in packed.items():  # None for the elements given none
        given[p] = tuple(elements.get(j) for j in range(len(values[p])))
    return [tangent_from_user(given[p], t, v) for p, (t, v) in enumerate(zip(plan.sig, values)) if is_active(t)]


def forward_at(f: Callable, args: tuple, argnums: tuple[int, ...], tangents: tuple) -> tuple:
    """(f(*args), its tangent) along `tangents` of the arguments at positions `argnums` (the others constants)."""
    return _tangents_at(f, args, argnums)(tangents)


def _tangents_at(f: Callable, args: tuple, argnums: tuple[int, ...]) -> Callable[[tuple], tuple]:
    """`tangents -> forward_at(f, args, argnums, tangents)`, its plan found once (a Jacobian's columns)."""
    target = target_of(f)
    values = target.values(tuple(args), {})
    places = target.places(argnums)
    plan = forward_plan(target, values, places)

    def along(tangents: tuple) -> tuple:
        (out, dout), _ = plan.forward(*values, *tangent_arguments(plan, values, places, tangents))
        return out, dout

    return along


@_api
def jvp(f: Callable, primals: tuple | list, tangents: tuple | list, has_aux: bool = False) -> tuple:
    """`(f(*primals), the derivative of f at primals applied to tangents)`, in one forward pass.

    `primals` and `tangents` are tuples of the same structure, one tangent per argument (a float's a
    float, an array's an array of its shape, a container's the same container of its parts'); an
    integer argument's tangent is None or zero (JAX's float0), any other an error. With `has_aux`, f returns
    `(output, aux)` and jvp returns `(output, tangent, aux)`."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ChadError(f"jvp: {len(primals)} primals and {len(tangents)} tangents; give one tangent per argument")
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if has_no_derivative(p) and t is not None and np.any(t):
            check_floats(primals, (i,), "jvp", f)
    out, dout = forward_at(f, primals, tuple(range(len(primals))), tangents)
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ChadError("has_aux=True needs the function to return a pair (output, aux)")
        return out[0], tangent_to_user(None if dout is None else dout[0], out[0]), out[1]
    return out, tangent_to_user(dout, out)


class HessianVectorPlan(NamedTuple):
    """Reverse over forward, ready for calls with one argument signature: `forward(*params, *tangents)` gives
    the tangent of f and what `backward` reads; `backward(saved, 1.0)` the cotangent of each of them."""

    forward: Callable
    backward: Callable
    watch: Watch | None
    sig: tuple[VType, ...]  # the arguments' types, active where a tangent comes in
    outer: tuple[VType, ...]  # and active where the gradient is taken


def hessian_vector_plan(target: Target, values: tuple, places: tuple[Place, ...], wrt: tuple[int, ...]) -> Any:
    """The cached reverse-over-forward derivative of `target` (tangents at `places`, the gradient with respect to
    the parameters `wrt`)."""
    fn = target.fn
    cache = cache_of(fn)
    key = ("hvp", places, wrt, tuple(map(shape_key, values)))
    plan = cache.recent(key)
    if plan is None or plan.watch and not plan.watch.still_valid():
        sig = signature(values, places)

        def make() -> Derivative:
            watch = Watch()
            code, outer = hessian_vector_program(fn, sig, wrt, watch)
            return build(code, outer, stage_named("efficient"), watch=watch)

        d = shared_derivative(fn, key, make)
        watch = d.watch
        plan = cache.keep(key, HessianVectorPlan(d.forward, d.backward, watch if watch.entries else None, sig, d.sig))
    return plan


def _scalar(value: Any, what: str) -> None:
    if not (isinstance(value, (float, np.floating)) or isinstance(value, np.ndarray) and value.shape == ()):
        raise ChadTypeError(f"{what} needs a scalar float output, got {type(value).__name__}")


def hessian_vector_at(f: Callable, args: tuple, along: tuple[int, ...], tangents: tuple, wrt: tuple[int, ...]) -> tuple:
    """The Hessian of the scalar f at args, for the arguments at positions `wrt`, times `tangents` of the arguments
    at positions `along` (the others constants): reverse mode over forward mode, one tuple per `wrt`."""
    return _products_at(f, args, along, wrt)(tangents)


def _products_at(f: Callable, args: tuple, along: tuple[int, ...], wrt: tuple[int, ...]) -> Callable[[tuple], tuple]:
    """`tangents -> hessian_vector_at(f, args, along, tangents, wrt)`, its plan found once (a Hessian's columns)."""
    target = target_of(f)
    values = target.values(tuple(args), {})
    places = target.places(along)
    parameters = target.places(wrt)
    if any(j is not None for _, j in parameters):
        raise ChadError("a Hessian with respect to an element of `*args` is not supported; name the parameter")
    plan = hessian_vector_plan(target, values, places, tuple(p for p, _ in parameters))

    def products(tangents: tuple) -> tuple:
        tangent, saved = plan.forward(*values, *tangent_arguments(plan, values, places, tangents))
        if tangent is None:  # the tangent is constant along `tangents`: the product is zero
            return tuple(tangent_to_user(None, values[p]) for p, _ in parameters)
        _scalar(tangent, "a Hessian-vector product")
        cts = plan.backward(saved, 1.0)
        return tuple(_or_zeros(to_user(cts[p], plan.outer[p], values[p]), values[p]) for p, _ in parameters)

    return products


def _or_zeros(product: Any, value: Any) -> Any:
    """A product where none flowed (the gradient does not depend on that argument along the tangents): zeros."""
    return _zeros(value) if product is None else product


@_api
def hvp(f: Callable, primals: tuple | list, tangents: tuple | list, argnums: int | tuple[int, ...] = 0) -> Any:
    """The Hessian of the scalar `f` at `primals` times `tangents` (one per argument), for the arguments in
    `argnums` (JAX's `jvp(grad(f, argnums), primals, tangents)[1]`): reverse mode over forward mode, the
    cost of a constant number of evaluations of f; the Hessian is never formed."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ChadError(f"hvp: {len(primals)} primals and {len(tangents)} tangents; give one tangent per argument")
    nums = argument_positions(argnums, len(primals))
    check_floats(primals, nums, "hvp", f)
    out = hessian_vector_at(f, primals, tuple(range(len(primals))), tangents, nums)
    return out[0] if isinstance(argnums, int) else out


def _basis(value: Any) -> list[Any]:
    """The unit tangents of a float or an array, one per element, in NumPy's (C) order."""
    if isinstance(value, (float, int)):
        return [1.0]
    a = np.asarray(value)
    if a.dtype.kind not in "fc":
        raise ChadTypeError(f"a Jacobian with respect to a {type(value).__name__} of {a.dtype}: give floats")
    out = []
    for k in range(a.size):
        e = np.zeros(a.size, a.dtype)
        e[k] = 1.0
        out.append(e.reshape(a.shape) if isinstance(value, np.ndarray) else type(value)(e[k]))
    return out


def _zeros(value: Any) -> Any:
    return tangent_to_user(None, value)


def _stacked(columns: list[Any], out: Any, inp: Any, last: bool) -> Any:
    """A Jacobian block of output `out` with respect to input `inp` from its columns (`last`: each column is the
    derivative along one input element, laid on the input's axes after the output's) or rows (one per output
    element, laid on the output's axes before the input's)."""
    if isinstance(out, (tuple, list)):
        parts = [_stacked([c[k] for c in columns], o, inp, last) for k, o in enumerate(out)]
        return type(out)(parts) if not hasattr(out, "_fields") else type(out)(*parts)
    out_shape, in_shape = np.shape(out), np.shape(inp)
    stack = np.stack([np.asarray(c, dtype=float) for c in columns], axis=-1 if last else 0)
    return stack.reshape(out_shape + in_shape)


@_api
def jacfwd(f: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of f by forward mode, one `jvp` per input element: shape `out.shape + in.shape` (a tuple of
    them for a tuple `argnums`); with has_aux, `(jacobian, aux)`."""
    target_of(f)  # a value chadpy cannot differentiate fails now

    def jacobian(*args: Any) -> Any:
        nums = argument_positions(argnums, len(args))
        check_floats(args, nums, "jacfwd", f)
        blocks, out, aux = [], None, None
        for i in nums:
            columns, along = [], _tangents_at(f, args, (i,))
            for e in _basis(args[i]):
                out, column = along((e,))
                if has_aux:
                    out, column, aux = out[0], None if column is None else column[0], out[1]
                columns.append(tangent_to_user(column, out))
            blocks.append(_stacked(columns, out, args[i], last=True))
        jac = blocks[0] if isinstance(argnums, int) else tuple(blocks)
        return (jac, aux) if has_aux else jac

    return marked_derivative(
        jacobian, None if has_aux else jacfwd, f, argnums, (jacfwd, {"argnums": argnums, "has_aux": has_aux})
    )


@_api
def jacrev(f: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of f by reverse mode, one pullback per output element: shape `out.shape + in.shape` (a tuple
    of them for a tuple `argnums`); with has_aux, `(jacobian, aux)`."""
    target_of(f)

    def jacobian(*args: Any) -> Any:
        nums = argument_positions(argnums, len(args))
        check_floats(args, nums, "jacrev", f)
        if has_aux:
            out, pullback, aux = vjp(f, *args, has_aux=True)
        else:
            (out, pullback), aux = vjp(f, *args), None
        rows = [pullback(e) for e in _output_basis(out)]
        blocks = tuple(_rows_of(rows, out, args[i], i) for i in nums)
        jac = blocks[0] if isinstance(argnums, int) else blocks
        return (jac, aux) if has_aux else jac

    return marked_derivative(
        jacobian, None if has_aux else jacrev, f, argnums, (jacrev, {"argnums": argnums, "has_aux": has_aux})
    )


jacobian = jacrev


def _output_basis(out: Any) -> list[Any]:
    """Unit cotangents of an output, one per element (a tuple's or list's in order of its parts)."""
    if isinstance(out, (tuple, list)):
        basis = []
        for k, part in enumerate(out):
            for e in _output_basis(part):
                basis.append(type(out)(e if j == k else _zeros(p) for j, p in enumerate(out)))
        return basis
    return _basis(out)


def _rows_of(rows: list[tuple], out: Any, inp: Any, i: int) -> Any:
    """The block of input i from the pullbacks of the output's unit cotangents."""
    if isinstance(out, (tuple, list)):
        parts, start = [], 0
        for part in out:
            n = len(_output_basis(part))
            parts.append(_rows_of(rows[start : start + n], part, inp, i))
            start += n
        return type(out)(parts)
    return _stacked([_or_zeros(r[i], inp) for r in rows], out, inp, last=False)


@_api
def hessian(f: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of the scalar f: one Hessian-vector product (reverse over forward) per input element, shape
    `in.shape + in.shape` (for a tuple `argnums`, the blocks as a tuple of tuples)."""
    target_of(f)

    def hess(*args: Any) -> Any:
        nums = argument_positions(argnums, len(args))
        check_floats(args, nums, "hessian", f)
        rows: list[list[Any]] = [[] for _ in nums]  # rows[a]: the blocks of input nums[a] against each input
        for j in nums:
            products = _products_at(f, args, (j,), nums)
            columns = [products((e,)) for e in _basis(args[j])]
            for a, i in enumerate(nums):
                rows[a].append(_stacked([c[a] for c in columns], args[i], args[j], last=True))
        if isinstance(argnums, int):
            return rows[0][0]
        return tuple(tuple(r) for r in rows)

    return marked_derivative(hess, hessian, f, argnums, (hessian, {"argnums": argnums}))


# Derivatives taken inside differentiated code (`lower/derivatives.py`), written in Python that chadpy reads: the
# gradient one tangent per element of the argument, by `jvp`; one function per argument position K (so that
# `args[K]` of a tuple of mixed kinds has its own kind)
_AT_POSITION = """
def gradient_at_K(f, args):
    x = args[K]
    parts = []
    for i in range(tangent_size(x)):
        parts.append(jvp(f, args, unit_tangents(args, K, i))[1])
    return from_parts(x, parts)


def jacobian_at_K(f, args):
    x = args[K]
    columns = []
    for i in range(tangent_size(x)):
        columns.append(jvp(f, args, unit_tangents(args, K, i))[1])
    return from_columns(value(f, args), x, columns)


def hessian_at_K(f, args):
    x = args[K]
    columns = []
    for i in range(tangent_size(x)):
        columns.append(jvp(gradient_at_K, (f, args), (None, unit_tangents(args, K, i)))[1])
    return from_columns(x, x, columns)
"""
_IN_CODE = """
def value(f, args):
    return jvp(f, args, zeros_like_tangent(args))[0]


def hvp(f, primals, tangents):
    return jvp(gradient_at_0, (f, primals), (None, tangents))[1]
"""
_NAMESPACE = {
    "jvp": jvp,
    "tangent_size": tangent_size,
    "unit_tangents": unit_tangents,
    "from_parts": from_parts,
    "from_columns": from_columns,
    "zeros_like_tangent": zeros_like_tangent,
}


@functools.cache
def _at_position(k: int) -> dict[str, Callable]:
    """The helpers of argument position k (`gradient_at_k`, `jacobian_at_k`, `hessian_at_k`), made at first use."""
    made = written_in_python(_AT_POSITION.replace("K", str(k)), f"derivatives at position {k}", _NAMESPACE)
    _NAMESPACE.update(made)  # `hessian_at_k` calls `gradient_at_k`; `hvp` calls `gradient_at_0`
    return {name.removesuffix(f"_at_{k}"): fn for name, fn in made.items()}


_NAMESPACE.update(written_in_python(_IN_CODE, "derivatives", _NAMESPACE))
_at_position(0)
DERIVATIVE_HELPERS.update(
    value=_NAMESPACE["value"],
    hvp=_NAMESPACE["hvp"],
    grad=lambda k: _at_position(k)["gradient"],
    jacobian=lambda k: _at_position(k)["jacobian"],
    hessian=lambda k: _at_position(k)["hessian"],
)
for _name, _operator in {"jvp": jvp, "jacfwd": jacfwd, "jacrev": jacrev, "hessian": hessian, "hvp": hvp}.items():
    _operator.__chad_operator__ = _name
