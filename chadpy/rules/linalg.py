"""Rules for linear algebra (`np.linalg`, and `scipy.linalg` when SciPy imports) and the products
(`np.kron`, `np.einsum`, ...).

Each function takes its parameters by the names of NumPy's own signature; any other
parameter must be left at its default (`np.linalg.qr(a, mode="complete")` is an error).
Matrices may be stacked (`(..., n, n)`). A tuple result (`slogdet`, `eigh`, `svd`, `qr`, `lstsq`)
is a tuple of arrays: `w, v = np.linalg.eigh(a)` unpacks it. The transposed derivatives
are runtime functions in `runtime/linalg.py`, whose docstring says what they return where
no derivative exists (repeated eigenvalues or singular values, a singular matrix). The
tangent rules (forward mode) make the same choices, written with primitives; the few pieces
NumPy has no function for (the eigenvalue coupling, the cofactor matrix, a right-hand side
as matrices) are primitives registered here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..errors import ChadError, ChadTypeError
from ..ir import nodes as ir
from ..ir.types import BOOL, INT, Tup, VType, arr, scalar
from ..runtime import linalg as runtime
from ..target.expressions import Expr, call
from .kinds import UNKNOWN, KindRule, as_array, broadcast
from .registry import PRIMITIVES, REALS, ZERO, Primitive, Vjp, function, numpy_function, written_in_python
from .tangents import ZEROS, Term, apply, linear, multilinear, python, total, tuple_of

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


# ====================================================================== tangent rules
# Written with primitives (`rules/tangents.py`), so that forward-mode code is differentiated again (a Hessian of a
# log-determinant): matrices may be stacked, so a transpose swaps the last two axes and a trace is an einsum.


def _T(x: Term) -> Term:
    """The transpose of a (stack of) matrices."""
    return apply(np.swapaxes, x, -1, -2)


def _diagonal(x: Term) -> Term:
    """The diagonal of a (stack of) square matrices."""
    return apply(np.einsum, "...ii->...i", x)


def _value(t: Term) -> object:
    """The value of an argument written in the code (a constant), else UNKNOWN."""
    atom = t.atom
    return atom.value if isinstance(atom, (ir.Const, ir.Ref)) else UNKNOWN


def _constant(t: Term, what: str) -> object:
    """The value of an argument a tangent's formula depends on, which must be written in the code."""
    value = _value(t)
    if value is UNKNOWN:
        raise ChadTypeError(f"forward mode: {what} must be a constant")
    return value


def _helper(fn: Callable, vjp: Vjp, nargs: int, kind: KindRule, samples: tuple, jvp: Callable) -> Primitive:
    """A primitive tangent rules call (registered, so that their code is differentiated again)."""
    PRIMITIVES[fn] = p = function(fn, vjp, (nargs, nargs), kind=kind, samples=samples, jvp=jvp)
    return p


def _as_matrices_kind(by: int) -> KindRule:
    """v's rank plus `by` where b is 1-D (unknown where b's rank is)."""

    def kind(types: list[VType], consts: list[object]) -> VType:
        b = as_array(types[1]).rank
        return arr(None, "f", True) if b is None else _shifted(types[0], by if b == 1 else 0)

    return kind


def _cofactor_jvp(ts: list, c: Term, a: Term) -> Term:
    """c = det(a) inv(a).T: with M = inv(a) da, dc = tr(M) c - c M.T (a invertible)."""
    m = apply(np.linalg.solve, a, ts[0])
    return apply(np.einsum, "...ii,...jk->...jk", m, c) - c @ _T(m)


# the eigenvalue coupling F[i, j] = 1 / (w_j - w_i) (0 on the diagonal and at ties): dF = F^2 (dw_i - dw_j)
COUPLING = _helper(
    runtime.coupling,
    lambda d, f, w: [call(runtime.coupling_ct, d, f)],
    1,
    _like(1),
    ((REALS.of(3),), (REALS.of(2, 3),)),
    lambda ts, f, w: f * f * (apply(np.expand_dims, ts[0], -1) - apply(np.expand_dims, ts[0], -2)),
)
# det(a)'s gradient, exact at a singular matrix (`runtime.det_ct`); its own derivative needs an invertible a
COFACTOR = _helper(
    runtime.cofactor,
    lambda d, c, a: [call(runtime.cofactor_ct, d, c, a)],
    1,
    _like(0),
    ((_SQUARE,), (_STACK,)),
    _cofactor_jvp,
)
# a solve's right-hand side as matrices (a 1-D b, one vector for each matrix of a stack, as a column) and back
AS_MATRICES = _helper(
    runtime.as_matrices,
    lambda d, y, v, b: [call(runtime.as_vectors, d, b), ZERO],  # b gives its shape
    2,
    _as_matrices_kind(1),
    ((REALS.of(3), REALS.of(3)), (REALS.of(2, 3), REALS.of(3)), (REALS.of(3, 2), REALS.of(3, 2))),
    linear(0),
)
AS_VECTORS = _helper(
    runtime.as_vectors,
    lambda d, y, v, b: [call(runtime.as_matrices, d, b), ZERO],
    2,
    _as_matrices_kind(-1),
    ((REALS.of(3, 1), REALS.of(3)), (REALS.of(2, 3, 1), REALS.of(3)), (REALS.of(3, 2), REALS.of(3, 2))),
    linear(0),
)


def _lower_read(x: Term) -> Term:
    """The symmetric matrix made of x's lower triangle: what `cholesky` and `eigh` read of their argument."""
    return apply(np.tril, x) + _T(apply(np.tril, x, -1))


def _oriented(x: Term, lower: Term) -> Term:
    """x where `lower`, else its transpose (SciPy's upper factor as a lower one); picked at run time where
    `lower` is a value (`cho_solve`'s `(c, lower)`)."""
    flag = _value(lower)
    if flag is UNKNOWN:
        return apply(np.where, lower, x, _T(x))
    return x if flag else _T(x)


def _scipy_read(x: Term, assume_a: object, lower: Term) -> Term:
    """The matrix SciPy's solver for `assume_a` reads in x (`runtime._structured`)."""
    if assume_a in runtime.SYMMETRIC:
        return _lower_read(_oriented(x, lower))
    if assume_a in ("upper triangular", "lower triangular"):
        return apply(np.triu if assume_a[0] == "u" else np.tril, x)
    if assume_a in ("diagonal", "tridiagonal"):
        width = 0 if assume_a == "diagonal" else 1
        return apply(np.tril, apply(np.triu, x, -width), width)
    return x


def _cholesky_tangent(chol: Term, ds: Term) -> Term:
    """dL = L Φ(L^-1 dS L^-T) for S = L L.T and a symmetric dS; Φ takes the lower triangle and halves the diagonal."""
    x = apply(np.linalg.solve, chol, _T(apply(np.linalg.solve, chol, ds)))
    return chol @ (0.5 * (apply(np.tril, x) + apply(np.tril, x, -1)))


def _solve_tangent(solve: Callable[[Term], Term], da: Term | None, db: Term | None, x: Term, b: Term) -> Term:
    """The tangent of x = solve(a, b) from those of a and b: solve(db - da x), `solve` solving with a for another
    right-hand side, given as matrices (a stack of matrices reads a 1-D b as a vector for each)."""
    parts = [
        None if db is None else apply(AS_MATRICES, db, b),
        None if da is None else -(da @ apply(AS_MATRICES, x, b)),
    ]
    return apply(AS_VECTORS, solve(total(parts)), b)


def _matrix_power_jvp(ts: list, y: Term, a: Term, n: Term) -> Term | None:
    """Y_k = Y_(k-1) B: dY_k = dY_(k-1) B + Y_(k-1) dB, from B = a, or inv(a) (dB = -B da B) for n < 0."""
    k = _constant(n, "the exponent of `np.linalg.matrix_power`")
    if k == 0:
        return None
    b = a if k > 0 else apply(np.linalg.inv, a)
    db = ts[0] if k > 0 else -(b @ ts[0] @ b)
    power, tangent = b, db
    for _ in range(abs(k) - 1):
        tangent, power = tangent @ b + power @ db, power @ b
    return tangent


def _eigh_jvp(ts: list, y: Term, a: Term) -> Term:
    """With M = V.T dS V (dS the symmetric tangent NumPy reads): dw = diag(M), dV = V (F * M)."""
    w, v = y[0], y[1]
    m = _T(v) @ _lower_read(ts[0]) @ v
    return tuple_of(_diagonal(m), v @ (apply(COUPLING, w) * m))


def _eigvalsh_jvp(ts: list, w: Term, a: Term) -> Term:
    """eigh's dw, diag(V.T dS V), with V computed again."""
    v = apply(np.linalg.eigh, a)[1]
    return apply(np.einsum, "...ji,...jk,...ki->...i", v, _lower_read(ts[0]), v)


def _svd_reduced(da: Term, u: Term, s: Term, v: Term) -> tuple[Term, Term, Term]:
    """The tangents of the reduced U, s, V (Townsend 2016): with P = U.T dA V and F the coupling of s^2,
    dU = U (F * (P S + S P.T)) + (I - U U.T) dA V / S, ds = diag(P), dV likewise."""
    p = _T(u) @ da @ v
    f = apply(COUPLING, s * s)
    rows, cols = apply(np.expand_dims, s, -2), apply(np.expand_dims, s, -1)  # S on the right, on the left
    du = u @ (f * (p * rows + cols * _T(p))) + (da @ v - u @ p) / rows
    dv = v @ (f * (cols * p + _T(p) * rows)) + (_T(da) @ u - v @ _T(p)) / rows
    return du, _diagonal(p), dv


def _completed(dpart: Term, part: Term, whole: Term, first: Term) -> Term:
    """The tangent of an orthogonal `whole` whose first columns `part` = whole E (E = `first`, the identity's first
    columns) have the tangent `dpart`: dpart on them, -part dpart.T whole on the others (which are not unique:
    their rotation among themselves is taken as 0)."""
    return (dpart - part @ (_T(part) @ dpart)) @ _T(first) - part @ (_T(dpart) @ whole)


def _svd_jvp(ts: list, y: Term, a: Term, full_matrices: Term, compute_uv: Term) -> Term:
    """The reduced SVD's tangents (`_svd_reduced`); with `full_matrices`, those of the first min(m, n) columns of U
    and V, completed (`_completed`)."""
    if not _constant(compute_uv, "`compute_uv` of `np.linalg.svd`"):
        usv = apply(np.linalg.svd, a, False, True)
        return apply(np.einsum, "...ji,...jk,...ik->...i", usv[0], ts[0], usv[2])
    u, s, v = y[0], y[1], _T(y[2])
    if not _constant(full_matrices, "`full_matrices` of `np.linalg.svd`"):
        du, ds, dv = _svd_reduced(ts[0], u, s, v)
        return tuple_of(du, ds, _T(dv))
    shape, k = apply(np.shape, a), apply(np.shape, s)[-1]
    first_u, first_v = apply(np.eye, shape[-2], k), apply(np.eye, shape[-1], k)
    part_u, part_v = u @ first_u, v @ first_v
    du, ds, dv = _svd_reduced(ts[0], part_u, s, part_v)
    return tuple_of(_completed(du, part_u, u, first_u), ds, _T(_completed(dv, part_v, v, first_v)))


# QR's tangent, written in Python chadpy reads (differentiable again), so that a wide matrix gets reverse mode's
# ChadError, not NumPy's error from solving with a non-square R
_IN_PYTHON = written_in_python(
    """
def qr_tangent(q, r, da):
    if r.shape[-1] > q.shape[-2]:
        raise ChadError("the derivative of `np.linalg.qr` is supported for matrices with at least as many rows")
    x = np.swapaxes(np.linalg.solve(np.swapaxes(r, -1, -2), np.swapaxes(da, -1, -2)), -1, -2)
    c = np.swapaxes(q, -1, -2) @ x
    low = np.tril(c, -1)
    upper = c - low + np.swapaxes(low, -1, -2)
    return (x - q @ upper, upper @ r)
""",
    "the tangent of np.linalg.qr",
    {"np": np, "ChadError": ChadError},
)


def _qr_jvp(ts: list, y: Term, a: Term) -> Term:
    """With X = dA R^-1 and C = Q.T X = Q.T dQ + dR R^-1 (antisymmetric plus upper triangular): Q.T dQ = L - L.T for
    L the strictly lower triangle of C, dR = (C - L + L.T) R, dQ = X - Q (C - L + L.T)."""
    return python(_IN_PYTHON["qr_tangent"], y[0], y[1], ts[0])


def _pinv_jvp(ts: list, p: Term, a: Term) -> Term:
    """Golub and Pereyra, right where the rank is locally constant: -P dA P + P P.T dA.T (I - A P) +
    (I - P A) dA.T P.T P."""
    dat = _T(ts[0])
    return -(p @ ts[0] @ p) + p @ (_T(p) @ (dat - dat @ a @ p)) + (dat - p @ (a @ dat)) @ (_T(p) @ p)


def _lstsq_jvp(ts: list, y: Term, a: Term, b: Term, rcond: Term) -> Term:
    """x = P b for P the pseudo-inverse lstsq applies (its rcond): dx = P (db - dA x) + P P.T dA.T r +
    (I - P A) dA.T P.T x with r = b - A x (`_pinv_jvp`). The residuals |r|^2 (where given: then A.T r = 0)
    get 2 <r, db - dA x>, the singular values U.T dA V's diagonal; the rank is discrete."""
    x, da = y[0], ts[0]
    p = apply(np.linalg.lstsq, a, apply(np.eye, apply(len, a)), rcond)[0]
    r = b - a @ x
    step = total([ts[1], None if da is None else -(da @ x)])
    # the residuals are empty where lstsq gives none: the sums' first len(residuals) entries, all or none
    dres = apply(np.take, apply(np.sum, 2.0 * r * step, 0), apply(np.arange, apply(len, y[1])))
    if da is None:
        return tuple_of(p @ step, dres, None, apply(ZEROS, y[3]))
    dat = _T(da)
    back = dat @ (_T(p) @ x)
    usv = apply(np.linalg.svd, a, False, True)
    dsv = apply(np.einsum, "ji,jk,ik->i", usv[0], da, usv[2])
    return tuple_of(p @ (step + _T(p) @ (dat @ r)) + back - p @ (a @ back), dres, None, dsv)


def _einsum_jvp(ts: list, y: Term, subscripts: Term, *operands: Term, op: Primitive) -> Term | None:
    """Linear in each operand."""
    return multilinear(*range(1, len(operands) + 1))(ts, y, subscripts, *operands, op=op)


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
            jvp=lambda ts, y, a, b: _solve_tangent(functools.partial(apply, np.linalg.solve, a), ts[0], ts[1], y, b),
        ),
        np.linalg.inv: _np(
            np.linalg.inv,
            lambda d, y, a: [call(runtime.inv_ct, d, y)],
            ("a",),
            kind=_like(0),
            samples=((_SQUARE,), (_STACK,)),
            jvp=lambda ts, y, a: -(y @ ts[0] @ y),
        ),
        np.linalg.det: _np(
            np.linalg.det,
            lambda d, y, a: [call(runtime.det_ct, d, a)],
            ("a",),
            kind=_like(-2),
            samples=((_SQUARE,), (_STACK,)),
            # <cofactor(a), da>, exact at a singular matrix as the VJP
            jvp=lambda ts, y, a: apply(np.einsum, "...ij,...ij->...", apply(COFACTOR, a), ts[0]),
        ),
        np.linalg.slogdet: _np(
            np.linalg.slogdet,
            lambda d, y, a: [call(runtime.slogdet_ct, d, a)],
            ("a",),
            kind=_slogdet,
            samples=((_SQUARE,), (_STACK,)),
            jvp=lambda ts, y, a: tuple_of(None, apply(np.einsum, "...ii->...", apply(np.linalg.solve, a, ts[0]))),
        ),
        np.linalg.matrix_power: _np(
            np.linalg.matrix_power,
            lambda d, y, a, n: [call(runtime.matrix_power_ct, d, a, n), None],
            ("a", "n"),
            kind=_like(0),
            samples=((_SQUARE, 3), (_SQUARE, -2), (_STACK, 2)),
            jvp=_matrix_power_jvp,
        ),
        np.linalg.cholesky: _np(
            np.linalg.cholesky,
            lambda d, y, a: [call(runtime.cholesky_ct, d, y)],
            ("a",),
            kind=_like(0),
            samples=((_SQUARE,), (_STACK,)),
            jvp=lambda ts, y, a: _cholesky_tangent(y, _lower_read(ts[0])),
        ),
        np.linalg.eigh: _np(
            np.linalg.eigh,
            lambda d, y, a: [call(runtime.eigh_ct, d, y)],
            ("a",),
            kind=_eigh,
            samples=((_SQUARE,), (_STACK,)),
            jvp=_eigh_jvp,
        ),
        np.linalg.eigvalsh: _np(
            np.linalg.eigvalsh,
            lambda d, y, a: [call(runtime.eigvalsh_ct, d, a)],
            ("a",),
            kind=_like(-1),
            samples=((_SQUARE,), (_STACK,), (_M3,)),
            jvp=_eigvalsh_jvp,
        ),
        np.linalg.lstsq: _np(
            np.linalg.lstsq,
            lambda d, y, a, b, rcond: [call(runtime.lstsq_ct, d, y, a, b, rcond, k) for k in range(2)] + [None],
            ("a", "b", "rcond"),
            (None,),
            kind=_lstsq,
            samples=((_TALL, REALS.of(4), None), (_TALL, REALS.of(4, 2), None), (_WIDE, REALS.of(3), None)),
            jvp=_lstsq_jvp,
        ),
        np.linalg.svd: _np(
            np.linalg.svd,
            lambda d, y, a, full, uv: [call(runtime.svd_ct, d, y, a, full, uv), None, None],
            ("a", "full_matrices", "compute_uv"),
            (True, True),
            kind=_svd,
            samples=((_TALL, False, True), (_WIDE, False, True), (_SQUARE, True, True), (_TALL, True, False)),
            jvp=_svd_jvp,
        ),
        np.linalg.qr: _np(
            np.linalg.qr,
            lambda d, y, a: [call(runtime.qr_ct, d, y)],
            ("a",),
            kind=_qr,
            samples=((_TALL,), (_SQUARE,)),
            jvp=_qr_jvp,
        ),
        np.linalg.pinv: _np(
            np.linalg.pinv,
            lambda d, y, a: [call(runtime.pinv_ct, d, y, a)],
            ("a",),
            kind=_like(0),
            samples=((_TALL,), (_WIDE,)),
            jvp=_pinv_jvp,
        ),
        # products
        np.kron: _np(
            np.kron,
            _each(runtime.kron_ct),
            ("a", "b"),
            kind=_widest,
            samples=((_WIDE, REALS.of(2, 2)),),
            jvp=multilinear(0, 1),
        ),
        np.inner: _np(
            np.inner,
            _each(runtime.inner_ct),
            ("a", "b"),
            kind=_inner,
            samples=((_WIDE, REALS.of(2, 4)), (REALS.of(3), REALS.of(3)), (REALS, _WIDE)),
            jvp=multilinear(0, 1),
        ),
        np.vdot: _np(
            np.vdot,
            _each(runtime.vdot_ct),
            ("a", "b"),
            kind=lambda t, c: scalar("f", True),
            samples=((_TALL, _WIDE),),
            jvp=multilinear(0, 1),
        ),
        np.tensordot: _np(
            np.tensordot,
            _each(runtime.tensordot_ct),
            ("a", "b", "axes"),
            (2,),
            kind=_tensordot,
            samples=((REALS.of(2, 3, 4), REALS.of(3, 4, 2), 2), (_WIDE, REALS.of(2, 4, 3), ([0, 1], [2, 1]))),
            jvp=multilinear(0, 1),
        ),
        np.cross: _np(
            np.cross,
            _each(runtime.cross_ct),
            ("a", "b"),
            kind=_widest,
            samples=((_SQUARE, REALS.of(3)),),
            jvp=multilinear(0, 1),
        ),
        np.einsum: Primitive(
            "np.einsum",
            lambda *a: call(np.einsum, *a),
            _einsum_vjp,
            (1, None),
            _einsum,
            params=("operands",),
            fn=np.einsum,
            samples=_EINSUM_SAMPLES,
            jvp=_einsum_jvp,
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


def _scipy_inv_jvp(ts: list, y: Term, a: Term, check: Term, assume_a: Term, lower: Term) -> Term:
    """-Y dS Y for S the matrix the solver reads and Y its inverse: y, but with assume_a="diagonal" only y's
    diagonal, its other entries a's passed on (or zeros: `runtime.scipy_inv_ct`)."""
    kind = _constant(assume_a, "`assume_a` of `scipy.linalg.inv`")
    inverse = _scipy_read(y, kind, lower) if kind == "diagonal" else y
    read = _scipy_read(ts[0], kind, lower)
    out = -(inverse @ read @ inverse)
    return out + (ts[0] - read) if kind == "diagonal" and runtime.inverted_diagonal_keeps_the_rest() else out


def _scipy_solve_jvp(ts: list, x: Term, a: Term, b: Term, lower: Term, check: Term, assume_a: Term) -> Term:
    """NumPy's, with the matrix the solver reads (the same solver for the tangent)."""
    kind = _constant(assume_a, "`assume_a` of `scipy.linalg.solve`")
    da = None if ts[0] is None else _scipy_read(ts[0], kind, lower)
    return _solve_tangent(lambda r: apply(sla.solve, a, r, lower, check, assume_a), da, ts[1], x, b)


def _cho_factor_jvp(ts: list, y: Term, a: Term, lower: Term, check: Term) -> Term:
    """c holds the factor in one triangle (`lower`'s, the other one's transposed: L read oriented) and a's own
    entries in the other one, or zeros (SciPy 1.18 on: `runtime.cho_factor_keeps_a`)."""
    da = _oriented(ts[0], lower)
    chol = apply(np.tril, _oriented(y[0], lower))
    factor = _cholesky_tangent(chol, _lower_read(da))
    return tuple_of(_oriented(factor + apply(np.triu, da, 1) if runtime.cho_factor_keeps_a() else factor, lower), None)


def _cho_solve_jvp(ts: list, x: Term, factor: Term, b: Term, check: Term) -> Term:
    """`solve`'s with a = L L.T, L the lower factor c holds (`lower` is a value here, picked at run time):
    da = dL L.T + L dL.T."""
    da = None
    if ts[0] is not None:
        chol, dchol = (apply(np.tril, _oriented(c, factor[1])) for c in (factor[0], ts[0][0]))
        half = dchol @ _T(chol)
        da = half + _T(half)
    return _solve_tangent(lambda r: apply(sla.cho_solve, factor, r, check), da, ts[1], x, b)


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
                jvp=_scipy_inv_jvp,
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
                jvp=_scipy_solve_jvp,
            ),
            sla.cholesky: _scipy(
                sla.cholesky,
                lambda d, y, a, lower, check: [call(runtime.scipy_cholesky_ct, d, y, lower), None, None],
                ("a", "lower", "check_finite"),
                (False, True),
                kind=_like(0),
                samples=((_LOPSIDED, False, True), (_LOPSIDED, True, True), (_STACK, False, True)),
                jvp=lambda ts, c, a, lower, check: _oriented(
                    _cholesky_tangent(_oriented(c, lower), _lower_read(_oriented(ts[0], lower))), lower
                ),
            ),
            sla.cho_factor: _scipy(
                sla.cho_factor,
                lambda d, y, a, lower, check: [call(runtime.cho_factor_ct, d, y, lower), None, None],
                ("a", "lower", "check_finite"),
                (False, True),
                kind=_cho_factor,
                samples=((_LOPSIDED, False, True), (_LOPSIDED, True, True)),
                jvp=_cho_factor_jvp,
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
                jvp=_cho_solve_jvp,
            ),
        }
    )
