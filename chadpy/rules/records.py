"""The rule of an attribute assignment on a record (`objects.py`): `obj.name = v` is the
functional update `setattr(obj, name, v)`, whose cotangent splits into v's (the new
record's component `name`) and the rest (the old record's)."""

from __future__ import annotations

from ..errors import ChadTypeError
from ..ir.types import NONE, OBJECT, Rec, VType, describe
from ..runtime import records as runtime
from ..runtime.cotangents import tuple_part
from ..target.expressions import DictX, call
from .registry import PRIMITIVES, SPELLINGS, ZERO, Primitive
from .tangents import linear


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
    jvp=linear(0, 2),
)

# `rewrite/local_state.py`: an attribute of an object the function was given, which it writes and reads again, is a
# variable of the call: copied in where first used (if updated in place), put back at every return
PRIMITIVES[runtime.copied_in] = Primitive(
    "copied_in",
    lambda x: call(runtime.copied_in, x),
    lambda d, y, x: [d],
    kind=lambda types, consts: types[0],
    containers=True,
    fn=runtime.copied_in,
    jvp=linear(0),
)
PUT_BACK = Primitive(
    "put_back",
    lambda obj, name, value, in_place: call(runtime.put_back, obj, name, value, in_place),
    nargs=(4, 4),
    kind=lambda types, consts: NONE,
    aliases="unknown",
    fn=runtime.put_back,
)
PRIMITIVES[runtime.put_back] = PUT_BACK

# `super().__init__(...)` in a constructor runs the parent's `__init__` on a copy of the object made so far
# (`objects.ParentInit`): a new object, so the parent's updates are the constructor's own
COPIED = Primitive(
    "copied",
    lambda obj: call(runtime.copied, obj),
    lambda d, y, obj: [d],
    (1, 1),
    lambda types, consts: types[0],
    containers=True,
    jvp=linear(0),
)

# A parameter of a frozen distribution the function made (`d.loc` of `scipy.stats.norm(mu, 1.0)`, a record's
# field), read also from one SciPy froze where the code that made it ran as it is (`rules/stats.py`)
SPELLINGS[runtime.frozen_parameter] = FROZEN_PARAMETER = Primitive(
    "parameter",
    lambda d, name, params: call(runtime.frozen_parameter, d, name, params),
    lambda ct, y, d, name, params: [DictX([name], [ct]), None, None],
    (3, 3),
    lambda types, consts: types[0].field(consts[1]) if isinstance(types[0], Rec) else OBJECT,
    containers=True,
    jvp=linear(0),
)
