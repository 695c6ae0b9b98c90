"""The run-time halves of the linear algebra and product rules (`rules/linalg.py`).

Matrices may be stacked (`(..., n, n)`), as NumPy's `linalg` functions take them. A
function with a tuple result (`slogdet`, `eigh`, `svd`, `qr`) gets its cotangent as
`Zero` or a dict of the parts that are not zero (`parts` reads it).

Where a derivative does not exist the rule says what it returns:

- `eigh` and `svd` at repeated eigenvalues / singular values (equal up to a relative
  `_TIE` of the largest): the coupling term of a tied pair is taken as 0. That is the
  gradient of every function of the result that does not depend on the choice of basis
  inside the tied subspace (the eigenvalues, `V @ diag(g(w)) @ V.T`, `U @ diag(s) @ Vt`);
  eigenvectors themselves are not differentiable there.
- `cholesky` and `eigh` read only the lower triangle of their argument, as NumPy does:
  the cotangent is that of the function NumPy computes (zero above the diagonal).
- `det` is differentiated through the SVD (the adjugate), so a singular matrix has its
  exact gradient; `slogdet` and `inv` raise NumPy's error at a singular matrix.
- `lstsq`'s solution is differentiated through the pseudo-inverse, right where the rank
  is locally constant (as `pinv`).

SciPy's `inv`, `solve`, `cholesky`, `cho_factor` and `cho_solve` are here too (NumPy's
rules on the matrix SciPy's solver reads: `assume_a=` and `lower=` say which entries), and
the primitives the tangent rules call (`coupling`, `cofactor`, `as_matrices`, `as_vectors`)
with their cotangents.
"""

from __future__ import annotations

import functools
import string
from typing import Any

import numpy as np

from ..errors import ChadError
from .array_cotangents import ndarray_of, unbroadcast
from .arrays import python_scalar
from .cotangents import Zero
from .numpy import _t, linear
from .reductions import _others_product

_TIE = 1e-10  # eigenvalues / singular values closer than this (relative to the largest) are ties


def parts(d: Any, n: int) -> list[np.ndarray | None]:
    """The cotangent of a tuple result of n parts, each an ndarray or None (zero)."""
    if d is Zero or d is None:
        return [None] * n
    return [None if d.get(k, Zero) is Zero else ndarray_of(d[k]) for k in range(n)]


def _summed_to(g: np.ndarray, x: Any) -> Any:
    """g as the cotangent of x, summed over batch axes x was broadcast along."""
    g = unbroadcast(g, x)
    return g if isinstance(x, np.ndarray) else python_scalar(g)


def _mT(a: np.ndarray) -> np.ndarray:
    return _t(np.asarray(a))


def _lower_read(gs: np.ndarray) -> np.ndarray:
    """The cotangent of a matrix of which only the lower triangle is read (it stands for the
    symmetric matrix `tril(A) + tril(A, -1).T`), given `gs`, the symmetric one."""
    gs = 0.5 * (gs + _mT(gs))
    return np.tril(2.0 * gs) - gs * np.eye(gs.shape[-1])


def coupling(w: Any) -> np.ndarray:
    """F[..., i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it and at ties."""
    w = np.asarray(w)
    gap = w[..., None, :] - w[..., :, None]
    scale = np.max(np.abs(w), axis=-1, keepdims=True)[..., None]
    tied = np.abs(gap) <= _TIE * np.maximum(scale, 1e-300)
    return np.where(tied, 0.0, 1.0 / np.where(tied, 1.0, gap))


@linear
def coupling_ct(d: Any, f: Any) -> Any:
    """Cotangent of `w` in `f = coupling(w)`: df[i, j] = f[i, j]^2 (dw_i - dw_j), so with g = d f^2, w_k gets
    the sum of g's row k less that of its column k (0 at ties, where f is)."""
    g = ndarray_of(d) * np.asarray(f) ** 2
    return g.sum(-1) - g.sum(-2)


# ====================================================================== square matrices


@linear
def solve_ct_a(d: Any, x: Any, a: Any, b: Any) -> Any:
    """Cotangent of `a` in `x = np.linalg.solve(a, b)`: -solve(a.T, d) x.T."""
    g = _solve_ct(d, a, b)
    x = np.asarray(x)
    if np.ndim(b) == 1:
        return _summed_to(-g[..., :, None] * x[..., None, :], a)
    return _summed_to(-(g @ _mT(x)), a)


@linear
def solve_ct_b(d: Any, x: Any, a: Any, b: Any) -> Any:
    """Cotangent of `b` in `x = np.linalg.solve(a, b)`: solve(a.T, d)."""
    return _summed_to(_solve_ct(d, a, b), b)


@linear
def as_matrices(v: Any, b: Any) -> Any:
    """v, a right-hand side or a solution of `np.linalg.solve(a, b)`, as matrices: with a trailing axis of
    length 1 where b is 1-D (which solve reads as one vector for each matrix of a stack)."""
    v = ndarray_of(v)
    return v[..., None] if np.ndim(b) == 1 else v


@linear
def as_vectors(v: Any, b: Any) -> Any:
    """`as_matrices`' inverse (and transpose): v with that axis dropped again."""
    v = ndarray_of(v)
    return v[..., 0] if np.ndim(b) == 1 else v


def _solve_ct(d: Any, a: Any, b: Any) -> np.ndarray:
    d = ndarray_of(d)
    if np.ndim(b) == 1:  # a vector right-hand side (NumPy 2: only a 1-D b is one)
        return np.linalg.solve(_mT(a), d[..., None])[..., 0]
    return np.linalg.solve(_mT(a), d)


@linear
def inv_ct(d: Any, y: Any) -> Any:
    """Cotangent of `a` in `y = np.linalg.inv(a)`: -y.T d y.T."""
    yt = _mT(y)
    return -(yt @ ndarray_of(d) @ yt)


def cofactor(a: Any) -> np.ndarray:
    """The cofactor matrix of `a` (det(a) inv(a).T where a is invertible), through the SVD a = U S Vt:
    det(U) det(Vt) U diag(prod of the other s) Vt (exact when a is singular)."""
    u, s, vt = np.linalg.svd(np.asarray(a, dtype=float))
    sign = np.linalg.det(u) * np.linalg.det(vt)
    return np.asarray(sign)[..., None, None] * ((u * _others_product(s, (s.ndim - 1,))[..., None, :]) @ vt)


@linear
def cofactor_ct(d: Any, c: Any, a: Any) -> Any:
    """Cotangent of `a` in `c = cofactor(a)` (a invertible: c = det(a) inv(a).T, whose tangent is
    tr(inv(a) da) c - c (inv(a) da).T): <d, c> inv(a).T - inv(a).T d.T c."""
    d, c = ndarray_of(d), np.asarray(c)
    inv_t = _mT(np.linalg.inv(a))
    return np.sum(d * c, axis=(-2, -1))[..., None, None] * inv_t - inv_t @ _mT(d) @ c


@linear
def det_ct(d: Any, a: Any) -> Any:
    """Cotangent of `a` in `np.linalg.det(a)`: d times the cofactor matrix (exact when a is singular)."""
    return np.asarray(ndarray_of(d))[..., None, None] * cofactor(a)


@linear
def slogdet_ct(d: Any, a: Any) -> Any:
    """Cotangent of `a` in `sign, logabsdet = np.linalg.slogdet(a)` (the sign is discrete): inv(a).T."""
    g = parts(d, 2)[1]
    if g is None:
        return Zero
    return g[..., None, None] * _mT(np.linalg.inv(a))


@linear
def matrix_power_ct(d: Any, a: Any, n: int) -> Any:
    """Cotangent of `a` in `np.linalg.matrix_power(a, n)`: sum over k of (a.T)^k d (a.T)^(n-1-k)."""
    a, d = np.asarray(a, dtype=float), ndarray_of(d)
    if n < 0:
        b = np.linalg.inv(a)
        return inv_ct(matrix_power_ct(d, b, -n), b)
    powers = [np.broadcast_to(np.eye(a.shape[-1]), a.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ _mT(a))
    return sum((powers[k] @ d @ powers[n - 1 - k] for k in range(n)), np.zeros_like(a))


@linear
def cholesky_ct(d: Any, chol: Any) -> Any:
    """Cotangent of `a` in `L = np.linalg.cholesky(a)`: with P = L.T d (its lower triangle, the diagonal
    halved), the symmetric L^-T P L^-1, read as NumPy reads `a` (the lower triangle)."""
    lt, d = _mT(chol), ndarray_of(d)
    p = np.tril(lt @ d)
    p = p - 0.5 * p * np.eye(lt.shape[-1])
    x = np.linalg.solve(lt, p)  # L^-T P
    return _lower_read(_mT(np.linalg.solve(lt, _mT(x))))  # (L^-T (L^-T P).T).T = L^-T P L^-1


@linear
def eigh_ct(d: Any, y: Any) -> Any:
    """Cotangent of `a` in `w, v = np.linalg.eigh(a)`: v (diag(dw) + F * (v.T dv)) v.T, symmetrised and read
    as NumPy reads `a` (the lower triangle); F couples distinct eigenvalues (0 at ties)."""
    w, v = np.asarray(y[0]), np.asarray(y[1])
    dw, dv = parts(d, 2)
    inner = np.zeros(v.shape)
    if dw is not None:
        inner = inner + dw[..., None] * np.eye(w.shape[-1])
    if dv is not None:
        inner = inner + coupling(w) * (_mT(v) @ dv)
    return _lower_read(v @ inner @ _mT(v))


@linear
def svd_ct(d: Any, y: Any, a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """Cotangent of `a` in `np.linalg.svd(a, full_matrices, compute_uv)` (Townsend 2016). With
    `full_matrices` and a non-square `a`, the extra columns of U or rows of Vt are not unique: their
    cotangent must be zero. Ties of singular values couple with 0 (see the module's docstring)."""
    if not compute_uv:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        return (u * ndarray_of(d)[..., None, :]) @ vt
    u, s, vt = (np.asarray(p) for p in y)
    du, ds, dvt = parts(d, 3)
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    if full_matrices and m != n:
        extra = [
            du[..., k:] if du is not None and m > k else None,
            dvt[..., k:, :] if dvt is not None and n > k else None,
        ]
        if any(e is not None and np.any(e) for e in extra):
            raise ChadError(
                "`np.linalg.svd` with `full_matrices=True`: the extra columns of U (rows of Vt) of a non-square "
                "matrix are not unique and have no derivative; pass `full_matrices=False`"
            )
        u, vt = u[..., :k], vt[..., :k, :]
        du = None if du is None else du[..., :k]
        dvt = None if dvt is None else dvt[..., :k, :]
    v = _mT(vt)
    dv = None if dvt is None else _mT(dvt)
    core = np.zeros(s.shape + (k,))
    if ds is not None:
        core = core + ds[..., None] * np.eye(k)
    f = coupling(s * s)
    if du is not None:
        j = _mT(u) @ du
        core = core + (f * (j - _mT(j))) * s[..., None, :]
    if dv is not None:
        j = _mT(v) @ dv
        core = core + s[..., :, None] * (f * (j - _mT(j)))
    g = u @ core @ vt
    if du is not None and m > k:
        g = g + ((du - u @ (_mT(u) @ du)) / s[..., None, :]) @ vt
    if dv is not None and n > k:
        g = g + u @ (_mT(dv - v @ (_mT(v) @ dv)) / s[..., :, None])
    return g


@linear
def qr_ct(d: Any, y: Any) -> Any:
    """Cotangent of `a` in `q, r = np.linalg.qr(a)` (mode 'reduced', m >= n): with
    M = r dr.T - dq.T q, (dq + q copyltu(M)) r^-T."""
    q, r = np.asarray(y[0]), np.asarray(y[1])
    if r.shape[-1] > q.shape[-2]:
        raise ChadError("the derivative of `np.linalg.qr` is supported for matrices with at least as many rows")
    dq, dr = parts(d, 2)
    dq = np.zeros(q.shape) if dq is None else dq
    dr = np.zeros(r.shape) if dr is None else dr
    m = r @ _mT(dr) - _mT(dq) @ q
    low = np.tril(m, -1)
    b = dq + q @ (low + _mT(low) + m * np.eye(m.shape[-1]))
    return _mT(np.linalg.solve(r, _mT(b)))


@linear
def pinv_ct(d: Any, p: Any, a: Any) -> Any:
    """Cotangent of `a` in `p = np.linalg.pinv(a)` (Golub and Pereyra; right where the rank is locally
    constant): -p.T d p.T + (I - a p) d.T p p.T + p.T p d.T (I - p a)."""
    a, p, d = np.asarray(a), np.asarray(p), ndarray_of(d)
    pt, dt = _mT(p), _mT(d)
    out_left = np.eye(a.shape[-2]) - a @ p
    out_right = np.eye(a.shape[-1]) - p @ a
    return -(pt @ d @ pt) + out_left @ dt @ p @ pt + pt @ p @ dt @ out_right


# ====================================================================== products


def _pad(x: Any, nd: int) -> np.ndarray:
    x = np.asarray(x)
    return x.reshape((1,) * (nd - x.ndim) + x.shape)


@linear
def kron_ct(d: Any, a: Any, b: Any, which: int) -> Any:
    """Cotangent of `a` (which=0) or `b` (which=1) in `np.kron(a, b)`: the result at
    (i0*nb0 + j0, i1*nb1 + j1, ...) is a[i] * b[j]."""
    nd = max(np.ndim(a), np.ndim(b))
    ap, bp = _pad(a, nd), _pad(b, nd)
    pairs = [s for pair in zip(ap.shape, bp.shape) for s in pair]
    d4 = ndarray_of(d).reshape(pairs)
    a_axes, b_axes = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
    d4 = np.transpose(d4, a_axes + b_axes)  # a's axes, then b's
    if which == 0:
        g = np.tensordot(d4, bp, axes=(list(range(nd, 2 * nd)), list(range(nd))))
    else:
        g = np.tensordot(ap, d4, axes=(list(range(nd)), list(range(nd))))
    return _summed_to(g.reshape(np.shape((a, b)[which])), (a, b)[which])


def _tensordot_axes(axes: Any, na: int, nb: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, int):
        return list(range(na - axes, na)), list(range(axes))
    xa, xb = axes
    xa = [xa] if isinstance(xa, int) else list(xa)
    xb = [xb] if isinstance(xb, int) else list(xb)
    return [k % na for k in xa], [k % nb for k in xb]


@linear
def tensordot_ct(d: Any, a: Any, b: Any, axes: Any, which: int) -> Any:
    """Cotangent of `a` (which=0) or `b` (which=1) in `np.tensordot(a, b, axes)`: d contracted with the
    other operand over its free axes, the result's axes put back in the operand's order."""
    a, b, d = np.asarray(a), np.asarray(b), ndarray_of(d)
    xa, xb = _tensordot_axes(axes, a.ndim, b.ndim)
    free_a = [k for k in range(a.ndim) if k not in xa]
    free_b = [k for k in range(b.ndim) if k not in xb]
    if which == 0:  # d's trailing axes against b's free ones: left with free_a, then b's contracted axes in order
        g = np.tensordot(d, b, axes=(list(range(len(free_a), d.ndim)), free_b))
        return _summed_to(np.transpose(g, np.argsort(free_a + [xa[xb.index(j)] for j in sorted(xb)])), a)
    g = np.tensordot(a, d, axes=(free_a, list(range(len(free_a)))))  # a's contracted axes in order, then free_b
    return _summed_to(np.transpose(g, np.argsort([xb[xa.index(i)] for i in sorted(xa)] + free_b)), b)


@linear
def inner_ct(d: Any, a: Any, b: Any, which: int) -> Any:
    """Cotangent of an operand of `np.inner(a, b)` (a product when either is a scalar, else the
    tensordot over the last axes)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _summed_to(ndarray_of(d) * np.asarray((b, a)[which]), (a, b)[which])
    return tensordot_ct(d, a, b, ([-1], [-1]), which)


@linear
def vdot_ct(d: Any, a: Any, b: Any, which: int) -> Any:
    """Cotangent of an operand of `np.vdot(a, b)` (real: the sum of the products of the raveled operands)."""
    x = (a, b)[which]
    return _summed_to((ndarray_of(d) * np.ravel((b, a)[which])).reshape(np.shape(x)), x)


@linear
def cross_ct(d: Any, a: Any, b: Any, which: int) -> Any:
    """Cotangent of an operand of `np.cross(a, b)` (3-vectors along the last axis, broadcasting):
    b x d for a, d x a for b."""
    if np.shape(a)[-1:] != (3,) or np.shape(b)[-1:] != (3,):
        raise ChadError("the derivative of `np.cross` is supported for 3-vectors (along the last axis)")
    d = ndarray_of(d)
    g = np.cross(b, d) if which == 0 else np.cross(d, a)
    return _summed_to(g, (a, b)[which])


# ====================================================================== einsum


def einsum_parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """The operands' subscripts and the output's, with `...` spelled as letters (right-aligned, as
    broadcasting aligns them) and an implicit output made explicit (NumPy's: the letters seen once,
    sorted, after the ellipsis' ones)."""
    spec = subscripts.replace(" ", "")
    ins, arrow, out = spec.partition("->")
    inputs = ins.split(",")
    if len(inputs) != len(shapes):
        raise ChadError(f"`np.einsum('{subscripts}', ...)` with {len(shapes)} operands")
    free = [c for c in string.ascii_letters if c not in spec]
    width = max((len(s) - len(i.replace("...", "")) for i, s in zip(inputs, shapes) if "..." in i), default=0)
    dots = "".join(free[:width])
    inputs = [i.replace("...", dots[width - (len(s) - len(i.replace("...", ""))) :]) for i, s in zip(inputs, shapes)]
    if arrow:
        return inputs, out.replace("...", dots)
    counts = "".join(inputs)
    return inputs, dots + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c not in dots))


@linear
def einsum_ct(d: Any, subscripts: str, which: int, *operands: Any) -> Any:
    """Cotangent of operand `which` in `np.einsum(subscripts, *operands)`: the einsum of the other operands
    and d, with the output's subscripts in place of the operand's. Letters the operand alone has (summed
    there) are broadcast; a repeated letter (a diagonal) is written into the diagonal; axes the operand
    broadcast (length 1 against longer ones) are summed."""
    ops = [np.asarray(o) for o in operands]
    inputs, out = einsum_parse(subscripts, [o.shape for o in ops])
    mine = inputs[which]
    elsewhere = set(out).union(*(set(s) for k, s in enumerate(inputs) if k != which))
    unique = "".join(dict.fromkeys(mine))
    kept = "".join(c for c in unique if c in elsewhere)
    others = [s for k, s in enumerate(inputs) if k != which]
    rest = [o for k, o in enumerate(ops) if k != which]
    g = np.einsum(",".join([out, *others]) + "->" + kept, ndarray_of(d), *rest, optimize=len(rest) > 1)
    sizes = dict(zip(mine, ops[which].shape))
    # put back the letters only this operand has (as length-1 axes), in the order of `unique`
    g = np.expand_dims(g, [k for k, c in enumerate(unique) if c not in kept]) if len(kept) < len(unique) else g
    target = tuple(sizes[c] for c in unique)
    wide = [k for k, (n, m) in enumerate(zip(target, g.shape)) if n == 1 and m != 1]
    if wide:
        g = np.sum(g, axis=tuple(wide), keepdims=True)
    full = np.zeros(ops[which].shape, np.result_type(ops[which].dtype, g.dtype, np.float64))
    view = np.einsum(f"{mine}->{unique}", full) if len(unique) < len(mine) else full
    view += g
    return _summed_to(full, operands[which])


# ====================================================================== eigvalsh, lstsq


@linear
def eigvalsh_ct(d: Any, a: Any) -> Any:
    """Cotangent of `a` in `w = np.linalg.eigvalsh(a)`: v diag(dw) v.T (eigh's with no eigenvector part, so
    exact at ties too), read as NumPy reads `a` (the lower triangle)."""
    _, v = np.linalg.eigh(a)
    return _lower_read((v * ndarray_of(d)[..., None, :]) @ _mT(v))


def _lstsq_pinv(a: np.ndarray, rcond: Any) -> np.ndarray:
    """The pseudo-inverse `np.linalg.lstsq(a, b, rcond)` solves with: singular values below rcond times the
    largest are zeros (rcond None: the machine epsilon times max(m, n), as NumPy's default; negative: the
    machine epsilon)."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    eps = np.finfo(np.float64).eps  # NumPy computes in float64
    ratio = eps * max(a.shape) if rcond is None else eps if rcond < 0 else rcond
    keep = s > ratio * (s[0] if s.size else 0.0)
    return (_mT(vt[keep]) / s[keep]) @ _mT(u[:, keep])


@linear
def lstsq_ct(d: Any, y: Any, a: Any, b: Any, rcond: Any, which: int) -> Any:
    """Cotangent of `a` (which=0) or `b` (1) in `x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond)`.
    x = pinv(a) b: b gets pinv(a).T dx, and a the pseudo-inverse's rule (`pinv_ct`) of dx b.T, right where
    the rank is locally constant. The residuals (given when a has full column rank and more rows) are
    min ||b - a x||^2 per column: with r = b - a x, b gets 2 r dres and a -2 r dres x.T. sv, the singular
    values, gives a u diag(dsv) vt (`svd_ct`). The rank is discrete."""
    a = np.asarray(a, dtype=float)
    b2 = np.asarray(b, dtype=float).reshape(len(a), -1)
    x = np.asarray(y[0]).reshape(a.shape[1], -1)
    dx, dres, _, dsv = parts(d, 4)
    g = np.zeros(a.shape if which == 0 else b2.shape)
    if dx is not None:
        p = _lstsq_pinv(a, rcond)
        dx = dx.reshape(x.shape)
        g = g + (pinv_ct(dx @ b2.T, p, a) if which == 0 else p.T @ dx)
    if dres is not None and dres.size:
        r = (b2 - a @ x) * dres
        g = g + (-2.0 * r @ x.T if which == 0 else 2.0 * r)
    if dsv is not None and which == 0:
        g = g + svd_ct(dsv, None, a, False, False)
    return g if which == 0 else g.reshape(np.shape(b))


# ====================================================================== scipy.linalg (registered with SciPy)

SYMMETRIC = ("symmetric", "sym", "hermitian", "her", "positive definite", "pos")  # one triangle read, by `lower`


def _structured(a: Any, assume_a: str | None, lower: bool) -> np.ndarray:
    """The matrix SciPy's solver for `assume_a` reads in `a`: one triangle mirrored (symmetric, Hermitian,
    positive definite), a triangle, the diagonal, the three middle diagonals; all of it otherwise (general,
    banded, whose band SciPy finds from the matrix, and None, where SciPy picks the solver by looking)."""
    a = np.asarray(a, dtype=float)
    if assume_a in SYMMETRIC:
        part = np.tril(a) if lower else np.triu(a)
        return part + _mT(part) - a * np.eye(a.shape[-1])
    if assume_a in ("upper triangular", "lower triangular"):
        return np.triu(a) if assume_a[0] == "u" else np.tril(a)
    if assume_a in ("diagonal", "tridiagonal"):
        return a * _band(a.shape[-1], 0 if assume_a == "diagonal" else 1)
    return a


def _band(n: int, width: int) -> np.ndarray:
    k = np.arange(n)
    return (np.abs(k[:, None] - k[None, :]) <= width).astype(float)


def _read_as(g: Any, assume_a: str | None, lower: bool) -> Any:
    """The cotangent of `a` from `g`, that of the matrix `_structured` makes of it."""
    if g is Zero:
        return Zero
    if assume_a in SYMMETRIC:
        return _lower_read(g) if lower else _mT(_lower_read(g))
    return _structured(g, assume_a, lower)  # a triangle, the diagonal, a band: the rest is not read


@functools.cache
def inverted_diagonal_keeps_the_rest() -> bool:
    """Whether SciPy's `inv(a, assume_a="diagonal")` returns a's off-diagonal entries as they are (SciPy 1.17
    inverts the diagonal in place) rather than zeros: asked once of the installed SciPy."""
    from scipy.linalg import inv

    return bool(inv(np.array([[2.0, 1.0], [1.0, 2.0]]), assume_a="diagonal")[0, 1] != 0.0)


@linear
def scipy_inv_ct(d: Any, y: Any, assume_a: str | None, lower: bool) -> Any:
    """Cotangent of `a` in `y = scipy.linalg.inv(a, assume_a=, lower=)`: inv's, -y.T d y.T, read as the
    solver reads `a`. With assume_a="diagonal", y's diagonal is 1 / a's (-y^2 d there), and its other
    entries are whatever SciPy put there (a's, passed through, or zeros)."""
    if assume_a != "diagonal":
        return _read_as(inv_ct(d, y), assume_a, lower)
    d, eye = ndarray_of(d), np.eye(np.shape(y)[-1])
    rest = d * (1.0 - eye) if inverted_diagonal_keeps_the_rest() else 0.0
    return -(d * np.asarray(y) ** 2) * eye + rest


@linear
def scipy_solve_ct(d: Any, x: Any, a: Any, b: Any, lower: bool, assume_a: str | None, which: int) -> Any:
    """Cotangent of `a` (which=0) or `b` (1) in `x = scipy.linalg.solve(a, b, lower=, assume_a=)`: those of
    `np.linalg.solve` with the matrix the solver reads (`_structured`), read back into `a`."""
    s = _structured(a, assume_a, lower)
    if which == 1:
        return solve_ct_b(d, x, s, b)
    return _read_as(solve_ct_a(d, x, s, b), assume_a, lower)


@linear
def scipy_cholesky_ct(d: Any, c: Any, lower: bool) -> Any:
    """Cotangent of `a` in `c = scipy.linalg.cholesky(a, lower=)`: NumPy's rule for the lower factor; the
    upper one (the default) is its transpose, read from the upper triangle."""
    if lower:
        return cholesky_ct(d, c)
    return _mT(cholesky_ct(_mT(ndarray_of(d)), _mT(c)))


@functools.cache
def cho_factor_keeps_a() -> bool:
    """Whether `scipy.linalg.cho_factor` leaves a's own entries in the triangle its factor is not in (SciPy before
    1.18, as LAPACK does) rather than zeros (1.18 on)."""
    from scipy.linalg import cho_factor

    return bool(cho_factor(np.array([[1.0, 0.5], [0.5, 1.0]]))[0][1, 0] == 0.5)


@linear
def cho_factor_ct(d: Any, y: Any, lower: bool) -> Any:
    """Cotangent of `a` in `c, lower = scipy.linalg.cho_factor(a, lower=)`: c holds the factor in one
    triangle (its cotangent goes through `scipy_cholesky_ct`) and, in the other one, a's own entries (theirs go
    back as they came) or zeros (`cho_factor_keeps_a`)."""
    dc = parts(d, 2)[0]
    if dc is None:
        return Zero
    c = np.asarray(y[0])
    kept = cho_factor_keeps_a()
    if lower:
        return cholesky_ct(np.tril(dc), np.tril(c)) + (np.triu(dc, 1) if kept else 0.0)
    return scipy_cholesky_ct(np.triu(dc), np.triu(c), False) + (np.tril(dc, -1) if kept else 0.0)


@linear
def cho_solve_ct(d: Any, x: Any, c_and_lower: Any, b: Any, which: int) -> Any:
    """Cotangent of `(c, lower)` (which=0, a tuple's: {0: that of c}) or `b` (1) in `x = scipy.linalg.cho_solve(
    (c, lower), b)`, which solves with a = L L.T (L the lower triangle of c) or U.T U (U the upper one): b
    gets g = a^-1 d (a cho_solve), a gets -g x.T, and the factor M L or U M with M that plus its transpose,
    in its triangle (the other one is not read)."""
    from scipy.linalg import cho_solve

    c, lower = c_and_lower
    g = cho_solve((c, lower), ndarray_of(d))
    if which == 1:
        return _summed_to(g, b)
    x = np.asarray(x)
    ga = -(g[..., :, None] * x[..., None, :]) if np.ndim(b) == 1 else -(g @ _mT(x))
    m = ga + _mT(ga)
    return {0: np.tril(m @ np.tril(c)) if lower else np.triu(np.triu(c) @ m)}
