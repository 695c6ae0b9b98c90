"""The call of a statement chadpy runs as written (`rewrite/as_written.py`): a primitive of its own,
whose kind rule is where the types decide whether a derivative flows through the statement.

A statement that reads no differentiated value runs as it is. One that reads a differentiated value
may still run, on its primal value, where nothing it computes can come back into the derivative: it
assigns no variable and stores into no object (a `raise`, a message, a counter). Anything else is a
`ChadTypeError` at the statement's line naming the variable that carries the derivative there.
"""

from __future__ import annotations

import gast

from ..errors import ChadTypeError
from ..ir import nodes as ir
from ..ir.types import BOTTOM, NONE, OBJECT, Tup, VType, is_active
from ..rewrite.as_written import UNBOUND, AsWritten
from ..rules.registry import Primitive
from ..target.expressions import CallX, Obj
from .context import Lowering


def call(lw: Lowering, written: AsWritten, node: gast.Call, env: dict, lets: list) -> ir.Prim:
    """`written(inputs...)`: each input's current value, or unbound where the variable is not assigned yet."""
    args = [lw.read(n, env, node, lets) if n in env else ir.Ref("unbound", UNBOUND) for n in written.inputs]
    atoms = [
        a if isinstance(a, (ir.Var, ir.Const, ir.Ref)) else lw.let(a, lets, n) for a, n in zip(args, written.inputs)
    ]
    prim = Primitive(
        written.name,
        lambda *a: CallX(Obj(written.fn, written.name), list(a)),
        nargs=(0, None),
        kind=lambda types, consts: _kind(written, types),
        aliases="unknown",
        fn=written.fn,
        statement=written,
    )
    return ir.Prim(prim, atoms)


def _kind(written: AsWritten, types: list[VType]) -> VType:
    """What the call returns; an error if a derivative would have to flow through the statement."""
    active = [n for n, t in zip(written.inputs, types) if is_active(t)]
    if active and (written.outputs or written.stores and written.read_back or written.reads):
        does = (
            f"assigns `{written.outputs[0]}`"
            if written.outputs
            else "stores into an object read again later"
            if written.stores
            else "reads what a statement run as written stored"
        )
        value = f"`{written.shown[active[0]]}`" if active[0] in written.shown else f"`{active[0]}`"
        raise ChadTypeError(
            f"this {written.what} reads {value}, which carries a derivative here, and {does}: chadpy runs "
            "a statement it does not differentiate as Python runs it only where no derivative flows through it"
        )
    if written.raises:
        return BOTTOM  # it never returns: the path it is on ends here
    if written.reads:
        return OBJECT
    return Tup((OBJECT,) * len(written.outputs)) if written.outputs else NONE
