"""Rules for linear algebra (`np.linalg`, and `scipy.linalg` when SciPy imports) and the products
(`np.kron`, `np.einsum`, ...).

Each function takes its parameters by the names of NumPy's own signature; any other
parameter must be left at its default (`np.linalg.qr(a, mode="complete")` is an error).
Matrices may be stacked (`(..., n, n)`). A tuple result (`slogdet`, `eigh`, `svd`, `qr`, `lstsq`)
is a tuple of arrays: `w, v = np.linalg.eigh(a)` unpacks it. The transposed derivatives
are runtime functions in `runtime/linalg.py`, whose docstring says what they return where
no derivative exists (repeated eigenvalues or singular values, a singular matrix).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ChadTypeError
from ..ir.types import BOOL, INT, Tup, VType, arr, scalar
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
_M3 = REALS.of(3, 3)  # not symmetric: `eigvalsh` reads its lower triangle


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


def _lstsq(types: list[VType], consts: list[object]) -> VType:
    """`x, residuals, rank, sv = np.linalg.lstsq(a, b)`: x has b's rank (a vector or a matrix)."""
    return Tup((_shifted(types[1], 0), arr(1, "f", True), INT, arr(1, "f", True)))


def _cho_factor(types: list[VType], consts: list[object]) -> VType:
    return Tup((_shifted(types[0], 0), BOOL))


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
        np.linalg.eigvalsh: _np(
            np.linalg.eigvalsh,
            lambda d, y, a: [call(runtime.eigvalsh_ct, d, a)],
            ("a",),
            kind=_like(-1),
            samples=((_SQUARE,), (_STACK,), (_M3,)),
        ),
        np.linalg.lstsq: _np(
            np.linalg.lstsq,
            lambda d, y, a, b, rcond: [call(runtime.lstsq_ct, d, y, a, b, rcond, k) for k in range(2)] + [None],
            ("a", "b", "rcond"),
            (None,),
            kind=_lstsq,
            samples=((_TALL, REALS.of(4), None), (_TALL, REALS.of(4, 2), None), (_WIDE, REALS.of(3), None)),
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


# ====================================================================== scipy.linalg, when SciPy imports

try:
    import scipy.linalg as sla
except ImportError:  # SciPy is optional: its functions are run as data (an error if a derivative flows into one)
    sla = None


def _scipy(fn: Callable, vjp: Vjp, params: tuple[str, ...], defaults: tuple[object, ...], **more) -> Primitive:
    p = _np(fn, vjp, params, defaults, **more)
    p.name = "scipy.linalg." + fn.__name__
    return p


_ASSUMED = ("sym", "pos", "her", "upper triangular", "lower triangular", "diagonal", "gen", None)
# not symmetric, and positive definite read by either triangle (`assume_a="pos"`): its lower one is nudged
_LOPSIDED = _SQUARE + np.tril(_RNG.uniform(-0.2, 0.2, (3, 3)), -1)

if sla is not None:
    PRIMITIVES.update(
        {
            # check_finite only checks: taken, and left out of the derivative
            sla.inv: _scipy(
                sla.inv,
                lambda d, y, a, check, assume_a, lower: (
                    [call(runtime.scipy_inv_ct, d, y, assume_a, lower)] + [None] * 3
                ),
                ("a", "check_finite", "assume_a", "lower"),
                (True, None, False),
                kind=_like(0),
                samples=(
                    *((_LOPSIDED, True, assumed, False) for assumed in _ASSUMED),
                    (_LOPSIDED, True, "pos", True),
                    (_STACK, True, None, False),
                ),
            ),
            sla.solve: _scipy(
                sla.solve,
                lambda d, y, a, b, lower, check, assume_a: (
                    [call(runtime.scipy_solve_ct, d, y, a, b, lower, assume_a, k) for k in range(2)] + [None] * 3
                ),
                ("a", "b", "lower", "check_finite", "assume_a"),
                (False, True, None),
                kind=lambda types, consts: _solve(types[:2], consts[:2]),
                samples=(
                    *((_LOPSIDED, REALS.of(3, 2), False, True, assumed) for assumed in _ASSUMED),
                    (_LOPSIDED, REALS.of(3), True, True, "pos"),
                    (_LOPSIDED, REALS.of(3), False, True, "tridiagonal"),
                    (_LOPSIDED, REALS.of(3), False, True, "banded"),
                    (_STACK, REALS.of(3, 2), False, True, None),
                ),
            ),
            sla.cholesky: _scipy(
                sla.cholesky,
                lambda d, y, a, lower, check: [call(runtime.scipy_cholesky_ct, d, y, lower), None, None],
                ("a", "lower", "check_finite"),
                (False, True),
                kind=_like(0),
                samples=((_LOPSIDED, False, True), (_LOPSIDED, True, True), (_STACK, False, True)),
            ),
            sla.cho_factor: _scipy(
                sla.cho_factor,
                lambda d, y, a, lower, check: [call(runtime.cho_factor_ct, d, y, lower), None, None],
                ("a", "lower", "check_finite"),
                (False, True),
                kind=_cho_factor,
                samples=((_LOPSIDED, False, True), (_LOPSIDED, True, True)),
            ),
            sla.cho_solve: _scipy(
                sla.cho_solve,
                lambda d, y, factor, b, check: (
                    [call(runtime.cho_solve_ct, d, y, factor, b, k) for k in range(2)] + [None]
                ),
                ("c_and_lower", "b", "check_finite"),
                (True,),
                kind=lambda types, consts: _shifted(types[1], 0),
                containers=True,
            ),
        }
    )
