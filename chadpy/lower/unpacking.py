"""Starred assignment: `a, *b, c = xs` is `a = xs[0]`, `b = list(xs[1:-1])`, `c = xs[-1]`, after Python's check
that xs has at least the other targets' number of items (its ValueError). A tuple's items keep their own
types (an index or a slice of constants); a 1-d array's `b` is the list of its elements."""

from __future__ import annotations

import builtins

import gast

from ..ir import nodes as ir
from ..rules.registry import PRIMITIVES
from ..rules.sequences import UNPACKS
from .context import Lowering


def starred(lw: Lowering, target: gast.Tuple, value: ir.Atom, env: dict, lets: list) -> None:
    """`target = value` where one of target's items is starred."""
    k = next(i for i, t in enumerate(target.elts) if isinstance(t, gast.Starred))
    after = len(target.elts) - k - 1
    lets.append(ir.Let(lw.names.fresh("_"), ir.Prim(UNPACKS, [value, ir.Const(len(target.elts) - 1)]), lw.loc))
    for i, t in enumerate(target.elts):
        if i != k:
            item = lw.let(ir.Index(value, ir.Const(i if i < k else i - len(target.elts))), lets, "item")
            lw.assign(t, item, env, lets)
            continue
        bounds = [ir.Const(k), ir.Const(-after if after else None), ir.Const(None)]
        s = lw.let(ir.Prim(PRIMITIVES[builtins.slice], bounds), lets, "s")
        rest = lw.let(ir.Slice(value, s, slice(k, -after if after else None)), lets, "rest")
        lw.assign(t.value, lw.let(ir.Prim(PRIMITIVES[list], [rest]), lets, "rest"), env, lets)
