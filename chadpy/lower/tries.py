"""The call `attempt(classes, fn, *args)` that a statement of a `try` body becomes (`rewrite/tries.py`):
a call of the function value `fn` that catches the exceptions of `classes` (`Apply` with `catch`)."""

from __future__ import annotations

import gast

from ..ir import nodes as ir
from ..runtime.scalar import UNASSIGNED
from .context import Lowering


def attempt(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Apply:
    """`attempt(classes, fn, *args)`: each argument a variable's value (`unassigned` where it is not assigned
    on this path: the statement fails reading it, as in Python)."""
    classes, fn, *args = node.args
    unassigned = ir.Ref("unassigned", UNASSIGNED)  # a local not assigned here (an outside name is read as one)
    atoms = [unassigned if a.id not in env and a.id in lw.locals else lw.atom(a, env, lets) for a in args]
    return ir.Apply(lw.atom(fn, env, lets), atoms, catch=lw.atom(classes, env, lets))
