"""The rule of an attribute assignment on a record (`objects.py`): `obj.name = v` is the
functional update `setattr(obj, name, v)`, whose cotangent splits into v's (the new
record's component `name`) and the rest (the old record's)."""

from __future__ import annotations

from ..errors import ChadTypeError
from ..ir.types import Rec, VType, describe
from ..runtime import records as runtime
from ..runtime.cotangents import tuple_part
from ..target.expressions import call
from .registry import ZERO, Primitive


def _set_field_type(types: list[VType], consts: list[object]) -> VType:
    obj, _, value = types
    name = consts[1]
    if not isinstance(obj, Rec):
        raise ChadTypeError(f"assigning the attribute `{name}` of {describe(obj)} is not supported")
    if isinstance(getattr(obj.cls, name, None), property):
        raise ChadTypeError(f"assigning the property `{name}` of a {obj.cls.__name__} object is not supported")
    return obj.with_field(name, value)


SET_FIELD = Primitive(
    "setattr",
    lambda obj, name, value: call(runtime.with_field, obj, name, value),
    lambda d, y, obj, name, value: [
        call(runtime.without_field, d, name),
        None,
        call(tuple_part, d, name, ZERO),
    ],
    (3, 3),
    _set_field_type,
    containers=True,
)
