"""Forward-pass memory: an array the backward pass reads only for its shape is not kept.

Vectorised code makes a fresh array per operation. The primal lets go of each one after its
next use, so NumPy reuses the memory; a backpropagator that keeps every intermediate alive makes
the forward pass touch fresh memory at each operation (page faults: the forward pass of a
vectorised Rosenbrock at n = 1e5 took 3.4x its primal). Many of those arrays are read back only
for their shape and dtype (`dense(d, x)`, `unbroadcast(d, x)`, `sum_ct(d, x)`, `mean_ct(d, x)`):
the backward pass reads a stand-in instead (`x_like = like(x)`: zero strides over 16 bytes), and
the forward pass deletes x after its last use there (`del x`), as the primal would. An array the
backward pass does not read at all is deleted the same way.

Only arrays an operation made (arithmetic, a NumPy function: not a view, a parameter or a
buffer written in place), bound once at the top level of the function, are released.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from . import arrays, buffers, reduction_rules
from .expressions import BinOp, CallX, Expr, Name, Obj, UnaryOp, call
from .names import NameSupply
from .target import Assign, Def, Del, Stmt, expr_names, iter_exprs, local_names, map_exprs, mentioned, replace, walk
from .vtypes import Arr, VType

# the functions that read only the shape and dtype of the argument at this position
SHAPE_ONLY = {arrays.dense: 1, arrays.unbroadcast: 1, reduction_rules.sum_ct: 1, reduction_rules.mean_ct: 1}


def release(fn: Def, types: dict[str, VType]) -> Def:
    shape_reads: Counter[str] = Counter()
    value_reads: Counter[str] = Counter()
    for d in _defs(fn.body):
        _count_reads(d.body, shape_reads, value_reads)
    bound = Counter(n for s in walk(fn.body) for n in s.binds())
    arrays_bound = [
        s.targets[0]
        for s in fn.body
        if isinstance(s, Assign)
        and len(s.targets) == 1
        and bound[s.targets[0]] == 1
        and _array(types.get(s.targets[0]))
        and _made(s.value)
    ]
    written = {e.args[0].id for e in iter_exprs(fn.body) if _writes_into(e)}  # the same object lives on
    free = [n for n in arrays_bound if not value_reads[n] and n not in written]
    if not free:
        return fn
    names = NameSupply(local_names([fn]) | expr_names([fn]))
    stand_in = {n: names.fresh(n + "_like") for n in free if shape_reads[n]}
    old = [replace(s, body=_read_stand_ins(s.body, stand_in)) if isinstance(s, Def) else s for s in fn.body]
    mentions = [mentioned(s) for s in old]
    last = {n: max(i for i, names in enumerate(mentions) if n in names) for n in free}
    body: list[Stmt] = []
    for i, s in enumerate(old):
        body.append(s)
        if isinstance(s, Assign) and s.targets[:1] and s.targets[0] in stand_in:
            n = s.targets[0]
            why = "for its shape: the array is let go"
            body.append(Assign([stand_in[n]], call(arrays.like, Name(n)), comment=why, loc=s.loc))
        done = [n for n in free if last[n] == i < len(old) - 1]  # read by the return: kept anyway
        if done:
            body.append(Del(done, loc=s.loc))
    return replace(fn, body=body)


def _made(e: Expr) -> bool:
    """e makes a new array (arithmetic, a NumPy function): not a view, not a buffer written in place."""
    if isinstance(e, (BinOp, UnaryOp)):
        return True
    if isinstance(e, CallX) and isinstance(e.func, Obj):
        f = e.func.obj
        return isinstance(f, np.ufunc) or (getattr(f, "__module__", None) or "").startswith("numpy")
    return False


def _writes_into(e: Expr) -> bool:
    """e writes into its first argument and returns it (`store(out, k, v)`, a view's write-back)."""
    return (
        isinstance(e, CallX)
        and isinstance(e.func, Obj)
        and e.func.obj in (buffers.store, buffers.written_back, buffers.viewed_again)
        and bool(e.args)
        and isinstance(e.args[0], Name)
    )


def _array(t: VType | None) -> bool:
    return isinstance(t, Arr) and t.rank is not None and t.rank >= 1


def _defs(stmts: list[Stmt]) -> list[Def]:
    """The backpropagators: every function defined in the forward pass (their bodies hold no more)."""
    out: list[Def] = []
    for s in stmts:
        if isinstance(s, Def):
            out.append(s)
        else:
            for b in s.bodies():
                out += _defs(b)
    return out


def _count_reads(stmts: list[Stmt], shape: Counter, value: Counter) -> None:
    for s in walk(stmts):
        value.update(s.reads())
        for e in s.exprs():
            _count_expr(e, shape, value)


def _count_expr(e: Expr, shape: Counter, value: Counter) -> None:
    at = _shape_position(e)
    for k, part in enumerate(e.parts()):
        if isinstance(part, Name):
            (shape if at is not None and k == at + 1 else value)[part.id] += 1  # parts: the function first
        else:
            _count_expr(part, shape, value)


def _shape_position(e: Expr) -> int | None:
    if isinstance(e, CallX) and isinstance(e.func, Obj) and not e.keywords:
        at = SHAPE_ONLY.get(e.func.obj)
        if at is not None and len(e.args) > at:
            return at
    return None


def _read_stand_ins(stmts: list[Stmt], stand_in: dict[str, str]) -> list[Stmt]:
    def read(e: Expr) -> Expr:
        at = _shape_position(e)
        if at is not None and isinstance(e.args[at], Name) and e.args[at].id in stand_in:
            args = list(e.args)
            args[at] = Name(stand_in[args[at].id])
            return CallX(e.func, args)
        return e

    def mapped(body: list[Stmt]) -> list[Stmt]:
        return [s.map(lambda n: n, lambda e: map_exprs(e, read), mapped) for s in body]

    return mapped(stmts)
