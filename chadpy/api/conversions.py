"""Cotangents across the API boundary: chadpy's sparse forms <-> values in the user's structure.

Inside generated code a cotangent is sparse (`runtime.Zero`, dicts of the parts that
are not zero, `array_cotangents.Scatter`); a user gives and receives one in the structure of
the primal value it belongs to (a float, an array, a tuple, list or dict of them).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ChadTypeError
from ..ir.records import PYTREES, new_record
from ..ir.types import Arr, Dct, Float, Lst, Rec, Tup, VType, is_active
from ..runtime.array_cotangents import LAZY, Scatter, ndarray_of
from ..runtime.arrays import float_dtype, python_scalar
from ..runtime.cotangents import Zero, tuple_part


def to_user(ct: object, t: VType, value: object) -> object:
    """A cotangent in the structure of the primal value it belongs to (None if discrete)."""
    if type(t) is Float and t.active:  # the common case first: a float's cotangent
        return ct if type(ct) is float and type(value) is float else scalar_like(ct, value)
    if not is_active(t):
        return None
    if isinstance(t, Float):
        return scalar_like(ct, value)
    if isinstance(t, Arr):
        return to_user_array(ct, value)
    if isinstance(t, Tup):
        items = [_part(ct, k, it, v) for k, (it, v) in enumerate(zip(t.items, value))]
        return t.cls(*items) if t.cls is not None else tuple(items)
    if isinstance(t, Rec) and t.cls in PYTREES:
        return _pytree_ct(ct, t, value)
    if isinstance(t, Rec):  # an object of the same class; an attribute without a derivative keeps its value
        parts = {k: _part(ct, k, f, getattr(value, k)) if is_active(f) else getattr(value, k) for k, f in t.fields}
        return new_record(t.cls, parts)
    if isinstance(t, Lst) and isinstance(t.item, Float):
        parts = {} if ct is Zero else ct
        out = list(map(parts.get, range(len(value)), itertools.repeat(0.0)))
        if set(map(type, out)) | set(map(type, value)) <= {float}:  # the common list of floats, at C speed
            return out
        return [scalar_like(c, v) for c, v in zip(out, value)]
    if isinstance(t, Lst):
        return [_part(ct, k, t.item, v) for k, v in enumerate(value)]
    if isinstance(t, Dct):
        fields = dict(t.fields) if t.fields is not None else dict.fromkeys(value, t.item)
        return {k: _part(ct, k, fields[k], v) for k, v in value.items()}
    return None


def from_user(ct: object, t: VType) -> object:
    """A user-given cotangent (same structure as the value; None for a zero one) in chadpy's sparse form."""
    if ct is None or not is_active(t):
        return _zero(t)
    if isinstance(t, Float):
        return float(ct)
    if isinstance(t, Arr):
        return np.asarray(ct, dtype=float_dtype(ct.dtype)) if isinstance(ct, np.ndarray) else ct  # float32 stays
    if isinstance(t, Tup):
        if not isinstance(ct, tuple) or len(ct) != len(t.items):
            raise ChadTypeError(f"expected a cotangent tuple of length {len(t.items)}, got {ct!r}")
        return {k: from_user(c, it) for k, (c, it) in enumerate(zip(ct, t.items)) if is_active(it) and c is not None}
    if isinstance(t, Rec):
        if not isinstance(ct, t.cls):
            raise ChadTypeError(f"expected a cotangent of class {t.cls.__name__}, got {ct!r}")
        parts = {k: from_user(getattr(ct, k, None), f) for k, f in t.fields if is_active(f)}
        return {k: c for k, c in parts.items() if c is not Zero}
    if isinstance(t, Lst):  # a tuple of run-time length (`tuple(xs)`) is typed as a list
        if not isinstance(ct, (list, tuple)):
            raise ChadTypeError(f"expected a cotangent list, got {ct!r}")
        return {k: from_user(c, t.item) for k, c in enumerate(ct) if c is not None}
    if isinstance(t, Dct):
        if not isinstance(ct, dict):
            raise ChadTypeError(f"expected a cotangent dict, got {ct!r}")
        fields = dict(t.fields) if t.fields is not None else dict.fromkeys(ct, t.item)
        return {k: from_user(c, fields[k]) for k, c in ct.items() if c is not None}
    return None


def _part(ct: object, key: object, t: VType, value: object) -> object:
    """The user's cotangent of component `key` (of type t, value `value`) of a container or record's `ct`."""
    return to_user(tuple_part(ct, key, _zero(t)), t, value)


def _pytree_ct(ct: object, t: Rec, value: object) -> object:
    """The gradient of an object of a registered pytree class: `unflatten(aux, children's cotangents)`."""
    flatten, unflatten = PYTREES[t.cls]
    children, aux = flatten(value)
    fields = dict(t.fields)
    cts = []
    for child in children:
        name = next((k for k in fields if getattr(value, k) is child), None)
        if name is None:
            raise ChadTypeError(
                f"the pytree flatten of {t.cls.__name__} returned a child that is none of its attributes: "
                "chadpy differentiates attributes, so children must be attributes of the object"
            )
        cts.append(_part(ct, name, fields[name], child))
    return unflatten(aux, type(children)(cts) if isinstance(children, (tuple, list)) else cts)


def _zero(t: VType) -> object:
    return 0.0 if isinstance(t, Float) else Zero


# ------------------------------------------------------------------ what a derivative can be asked of


def _no_derivative(value: object) -> str | None:
    """Why an int, a bool (Python's or NumPy's) or an array of them has no derivative, and what to pass instead."""
    if isinstance(value, (bool, np.bool_)):
        return f"a bool ({value!r}) has no derivative"
    if isinstance(value, (int, np.integer)):
        return f"an int ({value!r}) has no derivative: pass the float {float(value)!r}"
    if type(value) is np.ndarray and value.dtype.kind in "iub":
        return f"an array of {value.dtype} has no derivative: pass x.astype(float)"
    return None


def has_no_derivative(value: object) -> bool:
    """An int or a bool (Python's or NumPy's), or an array of them."""
    return _no_derivative(value) is not None


def check_floats(args: tuple, positions: tuple[int, ...], what: str, of: Callable) -> None:
    """A derivative asked for with respect to arguments (by `argnums`) needs them to hold floats: an int, a bool, an
    array of them or a list of ints is an error that says what to pass instead, as JAX's is (differentiating all
    arguments, as `f.grad` and `vjp` do, gives None for them instead)."""
    for i in positions:
        value = args[i]
        problem = _no_derivative(value)
        if problem is None and isinstance(value, (list, tuple)) and value:
            if all(isinstance(v, (int, np.integer)) for v in value):
                problem = f"a {type(value).__name__} of ints has no derivative: pass floats"
        if problem is not None:
            name = getattr(of, "__name__", None) or type(of).__name__
            raise ChadTypeError(f"{what} of {name} with respect to argument {i}: {problem}")


# ------------------------------------------------------------------ arrays and scalars


def scalar_like(v: Any, x: Any) -> Any:
    """The cotangent of the scalar primal `x` at the API: a NumPy scalar of x's type for a float32 (or
    any non-float64 NumPy float) x, so float32 in gives float32 out; else a Python float."""
    if isinstance(x, np.floating) and not isinstance(x, np.float64):
        return type(x)(0.0 if v is Zero or v is None else ndarray_of(v).sum())
    return 0.0 if v is Zero or v is None else python_scalar(ndarray_of(v))


def to_user_array(ct: Any, x: Any) -> Any:
    """The user-facing gradient for primal `x`: a fresh writable array of x's shape and float dtype
    (float32 stays float32), or a scalar (`scalar_like`) for a scalar primal."""
    if not isinstance(x, np.ndarray):
        return scalar_like(ct, x)
    dtype = float_dtype(x.dtype)
    if ct is Zero or ct is None:
        return np.zeros(x.shape, dtype)
    if isinstance(ct, LAZY) and ct.shape == x.shape and ct.dtype == dtype:
        if type(ct) is Scatter and _unshared(ct):  # its last use: the items go into the base, not a copy
            ct.fold()
            return ct.base
        return ct.densify()  # already fresh
    # always copy: a dense cotangent may be shared with another slot, or be a read-only view
    if type(ct) is np.ndarray and ct.shape == x.shape:
        return ct.astype(dtype)  # the common case, without broadcast_to's Python-level cost (6 us of 20)
    return np.array(np.broadcast_to(ndarray_of(ct), x.shape), dtype=dtype)


def _references(a: Any) -> int:
    return sys.getrefcount(a)


# what `_references(s.base)` counts when the Scatter s is all that refers to its base (CPython
# versions count the call's own references differently: measured here, not assumed)
_probe = Scatter((1,))
_probe.base = np.empty(1)
_ALONE = _references(_probe.base)
del _probe


def _unshared(s: Scatter) -> bool:
    """Nothing but `s` refers to its base (a view of it would too), which owns its memory and can
    be written: adding into it changes no value anybody else can see."""
    base = s.base
    if type(base) is not np.ndarray or base.shape != s.shape or base.dtype != s.dtype:
        return False
    if not (base.flags.owndata and base.flags.writeable):
        return False
    del base  # the count below must not include this name's own reference
    return _references(s.base) == _ALONE


def tangent_from_user(tangent: object, t: VType, value: object) -> object:
    """A user-given tangent (the primal value's structure) as forward-mode code takes it: floats, new float
    arrays (the code may update them in place), the same containers; None where no derivative flows (0.0 for a
    float part of a container: `types.component_tangent`)."""
    if isinstance(t, Float) and not t.active:
        return 0.0
    if not is_active(t):
        return None
    if isinstance(t, Float):
        return float(tangent)
    if isinstance(t, Arr):
        return np.array(tangent, dtype=float_dtype(value.dtype) if isinstance(value, np.ndarray) else float)
    if isinstance(t, Tup):
        items = [tangent_from_user(d, it, v) for d, it, v in zip(tangent, t.items, value)]
        return t.cls(*items) if t.cls is not None else tuple(items)
    if isinstance(t, Lst):
        return [tangent_from_user(d, t.item, v) for d, v in zip(tangent, value)]
    if isinstance(t, Dct):
        fields = dict(t.fields) if t.fields is not None else dict.fromkeys(value, t.item)
        return {k: tangent_from_user(tangent[k], fields[k], v) for k, v in value.items()}
    if isinstance(t, Rec):
        return new_record(t.cls, {k: tangent_from_user(getattr(tangent, k), f, getattr(value, k)) for k, f in t.fields})
    raise ChadTypeError(f"a tangent for {t!r} is not supported")


def tangent_to_user(tangent: object, value: object) -> object:
    """A tangent from forward-mode code in the structure of the value it belongs to: zeros where none flowed
    (JAX's convention), numbers as the value's kind of number."""
    if tangent is None:
        return _zero_tangent(value)
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return (
            np.asarray(tangent, dtype=float_dtype(value.dtype))
            if isinstance(value, np.ndarray)
            else type(value)(tangent)
        )
    if isinstance(value, float):
        return float(tangent)
    if isinstance(value, tuple):
        items = [tangent_to_user(d, v) for d, v in zip(tangent, value)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [tangent_to_user(d, v) for d, v in zip(tangent, value)]
    if isinstance(value, dict):
        return {k: tangent_to_user(tangent.get(k) if isinstance(tangent, dict) else None, v) for k, v in value.items()}
    if hasattr(value, "__dict__") and not callable(value):
        parts = {k: tangent_to_user(getattr(tangent, k, None), v) for k, v in vars(value).items()}
        return new_record(type(value), parts)
    return tangent


def _zero_tangent(value: object) -> object:
    if isinstance(value, np.ndarray):
        return np.zeros(value.shape, float_dtype(value.dtype))
    if isinstance(value, (float, np.floating)):
        return type(value)(0.0) if isinstance(value, np.floating) else 0.0
    if isinstance(value, tuple):
        items = [_zero_tangent(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_zero_tangent(v) for v in value]
    if isinstance(value, dict):
        return {k: _zero_tangent(v) for k, v in value.items()}
    return None
