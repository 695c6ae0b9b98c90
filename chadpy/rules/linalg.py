"""Rules for linear algebra (`np.linalg`) and the products (`np.kron`, `np.einsum`, ...).

Each function takes its parameters by the names of NumPy's own signature; any other
parameter must be left at its default (`np.linalg.qr(a, mode="complete")` is an error).
Matrices may be stacked (`(..., n, n)`). A tuple result (`slogdet`, `eigh`, `svd`, `qr`)
is a tuple of arrays: `w, v = np.linalg.eigh(a)` unpacks it. The transposed derivatives
are runtime functions in `runtime/linalg.py`, whose docstring says what they return where
no derivative exists (repeated eigenvalues or singular values, a singular matrix).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ChadTypeError
from ..ir.types import Tup, VType, arr, scalar
from ..runtime import linalg as runtime
from ..target.expressions import Expr, call
from .kinds import UNKNOWN, as_array, broadcast
from .registry import PRIMITIVES, REALS, Primitive, Vjp, numpy_function

_np = numpy_function
_TALL = REALS.of(4, 3)
_WIDE = REALS.of(3, 4)
_RNG = np.random.default_rng(15)
# The rule test's square matrices, given as arrays: symmetric positive definite (`cholesky`, `eigh`: distinct
# eigenvalues) and so well conditioned (`inv`, `solve`), one and a stack of two.
_SQUARE = (lambda m: m @ m.T + np.eye(3))(_RNG.uniform(-1.0, 1.0, (3, 3)))
_STACK = (lambda m: m @ np.swapaxes(m, -1, -2) + np.eye(3))(_RNG.uniform(-1.0, 1.0, (2, 3, 3)))


# ====================================================================== kind rules


def _shifted(t: VType, by: int, active: bool = True) -> VType:
    """A float array of t's rank plus `by` (a number at rank 0), or of unknown rank."""
    rank = as_array(t).rank
    if rank is None:
        return arr(None, "f", active)
    return scalar("f", active) if rank + by == 0 else arr(rank + by, "f", active)


def _like(by: int) -> Callable[[list[VType], list[object]], VType]:
    return lambda types, consts: _shifted(types[0], by)


def _solve(types: list[VType], consts: list[object]) -> VType:
    a, b = (as_array(t) for t in types)
    if b.rank == 1:  # a vector right-hand side
        return _shifted(a, -1)
    return arr(None if a.rank is None or b.rank is None else max(a.rank, b.rank), "f", True)


def _slogdet(types: list[VType], consts: list[object]) -> VType:
    return Tup((_shifted(types[0], -2, False), _shifted(types[0], -2)))


def _eigh(types: list[VType], consts: list[object]) -> VType:
    return Tup((_shifted(types[0], -1), _shifted(types[0], 0)))


def _svd(types: list[VType], consts: list[object]) -> VType:
    if consts[2] is UNKNOWN:
        raise ChadTypeError("`np.linalg.svd`: `compute_uv` must be a constant (it decides the kind of result)")
    s = _shifted(types[0], -1)
    return Tup((_shifted(types[0], 0), s, _shifted(types[0], 0))) if consts[2] else s


def _qr(types: list[VType], consts: list[object]) -> VType:
    return Tup((_shifted(types[0], 0), _shifted(types[0], 0)))


def _widest(types: list[VType], consts: list[object]) -> VType:
    """`np.kron`, `np.cross`: an array of the larger rank."""
    ranks = [as_array(t).rank for t in types[:2]]
    return arr(None if None in ranks else max(ranks), "f", True)


def _inner(types: list[VType], consts: list[object]) -> VType:
    a, b = (as_array(t) for t in types)
    if a.rank == 0 or b.rank == 0:
        return broadcast("np.inner", types)
    return arr(None, "f", True) if a.rank is None or b.rank is None else _shifted(a, b.rank - 2)


def _tensordot(types: list[VType], consts: list[object]) -> VType:
    a, b = (as_array(t) for t in types[:2])
    axes = consts[2]
    if axes is UNKNOWN or a.rank is None or b.rank is None:
        return arr(None, "f", True)
    n = axes if isinstance(axes, int) else len(runtime._tensordot_axes(axes, a.rank, b.rank)[0])
    return _shifted(a, b.rank - 2 * n)


def _einsum(types: list[VType], consts: list[object]) -> VType:
    subscripts = consts[0]
    if not isinstance(subscripts, str):
        raise ChadTypeError("`np.einsum`: the subscripts must be a constant string (the first argument)")
    ranks = [as_array(t).rank for t in types[1:]]
    if None in ranks and "..." in subscripts:
        return arr(None, "f", True)
    shapes = [(1,) * (r if r is not None else len(s)) for r, s in zip(ranks, subscripts.split("->")[0].split(","))]
    rank = len(runtime.einsum_parse(subscripts, shapes)[1])
    return scalar("f", True) if rank == 0 else arr(rank, "f", True)


# ====================================================================== rules


def _each(ct: Callable) -> Vjp:
    """The rule of a product of two operands (and constant parameters after them) whose operand k's
    cotangent is `ct(d, *arguments, k)`."""
    return lambda d, y, *xs: [call(ct, d, *xs, 0), call(ct, d, *xs, 1)] + [None] * (len(xs) - 2)


def _einsum_vjp(d: Expr, y: Expr, subscripts: Expr, *operands: Expr) -> list[Expr | None]:
    return [None] + [call(runtime.einsum_ct, d, subscripts, k, *operands) for k in range(len(operands))]


_SOLVE_SAMPLES = ((_SQUARE, REALS.of(3)), (_SQUARE, REALS.of(3, 2)), (_STACK, REALS.of(3, 2)))
_EINSUM_SAMPLES = (
    ("ij,jk->ik", _WIDE, _TALL),
    ("ij,j", _TALL, REALS.of(3)),
    ("ii", _SQUARE),
    ("...ij,...jk", _STACK, _SQUARE),
    ("i,i->", REALS.of(3), REALS.of(3)),
)

PRIMITIVES.update(
    {
        np.linalg.solve: _np(
            np.linalg.solve,
            lambda d, y, a, b: [call(runtime.solve_ct_a, d, y, a, b), call(runtime.solve_ct_b, d, y, a, b)],
            ("a", "b"),
            kind=_solve,
            samples=_SOLVE_SAMPLES,
        ),
        np.linalg.inv: _np(
            np.linalg.inv,
            lambda d, y, a: [call(runtime.inv_ct, d, y)],
            ("a",),
            kind=_like(0),
            samples=((_SQUARE,), (_STACK,)),
        ),
        np.linalg.det: _np(
            np.linalg.det,
            lambda d, y, a: [call(runtime.det_ct, d, a)],
            ("a",),
            kind=_like(-2),
            samples=((_SQUARE,), (_STACK,)),
        ),
        np.linalg.slogdet: _np(
            np.linalg.slogdet,
            lambda d, y, a: [call(runtime.slogdet_ct, d, a)],
            ("a",),
            kind=_slogdet,
            samples=((_SQUARE,), (_STACK,)),
        ),
        np.linalg.matrix_power: _np(
            np.linalg.matrix_power,
            lambda d, y, a, n: [call(runtime.matrix_power_ct, d, a, n), None],
            ("a", "n"),
            kind=_like(0),
            samples=((_SQUARE, 3), (_SQUARE, -2), (_STACK, 2)),
        ),
        np.linalg.cholesky: _np(
            np.linalg.cholesky,
            lambda d, y, a: [call(runtime.cholesky_ct, d, y)],
            ("a",),
            kind=_like(0),
            samples=((_SQUARE,), (_STACK,)),
        ),
        np.linalg.eigh: _np(
            np.linalg.eigh,
            lambda d, y, a: [call(runtime.eigh_ct, d, y)],
            ("a",),
            kind=_eigh,
            samples=((_SQUARE,), (_STACK,)),
        ),
        np.linalg.svd: _np(
            np.linalg.svd,
            lambda d, y, a, full, uv: [call(runtime.svd_ct, d, y, a, full, uv), None, None],
            ("a", "full_matrices", "compute_uv"),
            (True, True),
            kind=_svd,
            samples=((_TALL, False, True), (_WIDE, False, True), (_SQUARE, True, True), (_TALL, True, False)),
        ),
        np.linalg.qr: _np(
            np.linalg.qr, lambda d, y, a: [call(runtime.qr_ct, d, y)], ("a",), kind=_qr, samples=((_TALL,), (_SQUARE,))
        ),
        np.linalg.pinv: _np(
            np.linalg.pinv,
            lambda d, y, a: [call(runtime.pinv_ct, d, y, a)],
            ("a",),
            kind=_like(0),
            samples=((_TALL,), (_WIDE,)),
        ),
        # products
        np.kron: _np(np.kron, _each(runtime.kron_ct), ("a", "b"), kind=_widest, samples=((_WIDE, REALS.of(2, 2)),)),
        np.inner: _np(
            np.inner,
            _each(runtime.inner_ct),
            ("a", "b"),
            kind=_inner,
            samples=((_WIDE, REALS.of(2, 4)), (REALS.of(3), REALS.of(3)), (REALS, _WIDE)),
        ),
        np.vdot: _np(
            np.vdot, _each(runtime.vdot_ct), ("a", "b"), kind=lambda t, c: scalar("f", True), samples=((_TALL, _WIDE),)
        ),
        np.tensordot: _np(
            np.tensordot,
            _each(runtime.tensordot_ct),
            ("a", "b", "axes"),
            (2,),
            kind=_tensordot,
            samples=((REALS.of(2, 3, 4), REALS.of(3, 4, 2), 2), (_WIDE, REALS.of(2, 4, 3), ([0, 1], [2, 1]))),
        ),
        np.cross: _np(np.cross, _each(runtime.cross_ct), ("a", "b"), kind=_widest, samples=((_SQUARE, REALS.of(3)),)),
        np.einsum: Primitive(
            "np.einsum",
            lambda *a: call(np.einsum, *a),
            _einsum_vjp,
            (1, None),
            _einsum,
            params=("operands",),
            fn=np.einsum,
            samples=_EINSUM_SAMPLES,
        ),
    }
)
