"""Forward mode through linear algebra beyond the registry walk (tests/rules/test_rules.py): `cho_solve`, whose
first argument is a tuple; the helpers tangent rules call (which no call in user code names); a stack of matrices
with a 1-D right-hand side; the tangents at the points the VJPs choose a value for (a singular matrix's
determinant, the non-unique columns of a full SVD); and second derivatives, reverse and forward mode over the
tangent code."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

import chadpy as chad
from chadpy.errors import ChadTypeError
from chadpy.runtime.linalg import as_matrices, as_vectors, cofactor, coupling
from tests.support.fd import assert_close, central_diff, inner, rand_array

_B = rand_array(21, (3, 3))
SPD = _B @ _B.T + np.eye(3)
SPD_STACK = np.stack([SPD, SPD + np.diag([0.3, 0.1, 0.2])])
TALL = rand_array(22, (4, 3))


def _moved(args: tuple, tangents: tuple, eps: float) -> list:
    return [a + eps * t for a, t in zip(args, tangents)]


def _difference(plus: object, minus: object, width: float) -> object:
    """The central difference of two results, componentwise (None for a discrete component)."""
    if isinstance(plus, tuple):
        return tuple(_difference(p, m, width) for p, m in zip(plus, minus))
    if isinstance(plus, (bool, int, np.integer, np.bool_)):
        return None
    return np.asarray((np.asarray(plus) - np.asarray(minus)) / width)


def _random_like(value: object, rng: np.random.Generator) -> object:
    if isinstance(value, tuple):
        return tuple(_random_like(v, rng) for v in value)
    return rng.standard_normal(np.shape(value))


def _plain(value: object) -> object:
    """A result with its tuples (NumPy's named ones) plain and its numbers 0-d arrays, for comparisons."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return None if value is None else np.asarray(value, dtype=float)


def assert_tangent(f, *args: np.ndarray, seed: int = 0) -> None:
    """chadpy's tangent of f along a random direction is within 1e-5 of central differences, and
    <jvp(v), w> = <v, vjp(w)> for a random cotangent w of the result (its discrete parts left out)."""
    rng = np.random.default_rng(seed)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    _, tangent = chad.jvp(f, args, tangents)
    eps = 1e-6
    expected = _difference(f(*_moved(args, tangents, eps)), f(*_moved(args, tangents, -eps)), 2 * eps)
    actual = _plain(tangent)
    if isinstance(expected, tuple):  # a discrete component has no tangent to compare
        actual = tuple(None if e is None else a for a, e in zip(actual, expected))
    assert_close(actual, expected, 1e-5, 1e-6, f"the tangent of {f.__name__}")
    value, pullback = chad.vjp(f, *args)
    w = _random_like(expected, rng)
    cts = pullback(tuple(np.zeros(()) if x is None else x for x in w) if isinstance(w, tuple) else w)
    lhs = inner(actual, w)
    rhs = sum(inner(t, ct) for t, ct in zip(tangents, cts) if ct is not None)
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs)), f"{f.__name__}: <jvp(v), w> = {lhs} but <v, vjp(w)> = {rhs}"


def assert_hvp(f, x: np.ndarray, seed: int = 0) -> None:
    """The Hessian-vector product (reverse mode over forward mode) against central differences of the gradient."""
    v = np.random.default_rng(seed).standard_normal(x.shape)
    eps = 1e-5
    grad = chad.grad(f)
    expected = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    assert_close(chad.hvp(f, (x,), (v,)), expected, 1e-5, 1e-6, f"the Hessian-vector product of {f.__name__}")


# ====================================================================== cho_solve


def solve_by_upper_factor(a, b):
    return sla.cho_solve(sla.cho_factor(a), b)


def solve_by_lower_factor(a, b):
    c, lower = sla.cho_factor(a, lower=True)
    return sla.cho_solve((c, lower), b)


def solve_by_given_factor(c, b):
    return sla.cho_solve((c, False), b)


def solve_by_constant_factor(b):
    return sla.cho_solve((np.linalg.cholesky(SPD), True), b)


@pytest.mark.parametrize("rhs", [(3,), (3, 2)])
def test_cho_solve(rhs):
    b = rand_array(23, rhs)
    assert_tangent(solve_by_upper_factor, SPD, b)
    assert_tangent(solve_by_lower_factor, SPD, b)
    assert_tangent(solve_by_given_factor, np.triu(np.linalg.cholesky(SPD).T) + np.tril(_B, -1), b)
    assert_tangent(solve_by_constant_factor, b)


# ====================================================================== the helpers, by name


def couple(w):
    return coupling(w)


def cofactors(a):
    return cofactor(a)


def columns(v, b):
    return as_matrices(v, b)


def vectors(v, b):
    return as_vectors(v, b)


@pytest.mark.parametrize(
    ("f", "args"),
    [
        (couple, (np.array([0.3, 1.2, -0.5]),)),
        (couple, (rand_array(24, (2, 3)),)),
        (cofactors, (SPD,)),
        (cofactors, (SPD_STACK,)),
        (columns, (rand_array(25, (2, 3)), rand_array(26, (3,)))),
        (columns, (rand_array(25, (3, 2)), rand_array(26, (3, 2)))),
        (vectors, (rand_array(27, (2, 3, 1)), rand_array(26, (3,)))),
        (vectors, (rand_array(27, (3, 2)), rand_array(26, (3, 2)))),
    ],
)
def test_helpers_of_tangent_rules(f, args):
    """Their tangents, and their VJPs against finite differences (the registry walk cannot write their calls)."""
    assert_tangent(f, *args)
    w = np.random.default_rng(1).standard_normal(np.shape(f(*args)))
    got = chad.vjp(f, *args)[1](w)
    for i in range(len(args)):
        assert_close(got[i], central_diff(lambda *a: inner(f(*a), w), args, i), 1e-5, 1e-6, f"{f.__name__}: d/d x{i}")


# ====================================================================== shapes and the choices of the VJPs


def numpy_solve(a, b):
    return np.linalg.solve(a, b)


def scipy_solve(a, b):
    return sla.solve(a, b, assume_a="pos")


def test_a_stack_of_matrices_with_one_right_hand_side():
    """A 1-D b is one vector for each matrix of the stack."""
    b = rand_array(28, (3,))
    assert_tangent(numpy_solve, SPD_STACK, b)
    assert_tangent(scipy_solve, SPD_STACK, b)


def pseudo_inverse(a):
    return np.linalg.pinv(a)


def orthogonal_triangular(a):
    return np.linalg.qr(a)


def three_factors(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c)


def test_stacks_and_three_operands():
    stack = rand_array(33, (2, 4, 3))
    assert_tangent(pseudo_inverse, stack)
    assert_tangent(orthogonal_triangular, stack)
    assert_tangent(three_factors, TALL, TALL.T, TALL)


def det(a):
    return np.linalg.det(a)


def test_det_at_a_singular_matrix():
    """The tangent is <cofactor(a), da>, exact where a is singular, as the gradient is."""
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    assert_tangent(det, singular)
    assert_tangent(det, np.zeros((3, 3)))


def powers(a):
    return np.linalg.matrix_power(a, 0) + np.linalg.matrix_power(a, 1)


def power(a, n):
    return np.linalg.matrix_power(a, n)


def test_matrix_power():
    assert_tangent(powers, SPD)
    with pytest.raises(ChadTypeError, match="exponent of `np.linalg.matrix_power` must be a constant"):
        chad.jvp(power, (SPD, 2), (SPD, None))


def full_svd(a):
    return np.linalg.svd(a)


def reduced_svd(a):
    return np.linalg.svd(a, full_matrices=False)


@pytest.mark.parametrize("a", [TALL, TALL.T, rand_array(29, (2, 4, 3)), np.diag([1.0, 1e-4, 1e-8]) @ TALL.T])
def test_svd_of_a_non_square_matrix_with_full_matrices(a):
    """The first min(m, n) columns of U (rows of Vt) and the singular values get their tangents, which are those of
    the reduced SVD (a singular value far below the others too); the other columns are not unique: theirs keep U
    orthogonal (U.T dU is antisymmetric)."""
    da = rand_array(30, a.shape)
    (u, s, vt), (du, ds, dvt) = chad.jvp(full_svd, (a,), (da,))
    _, (du_k, ds_k, dvt_k) = chad.jvp(reduced_svd, (a,), (da,))
    k = s.shape[-1]
    assert_close(ds, ds_k, 1e-6, 1e-9, "ds")
    assert_close(du[..., :k], du_k, 1e-6, 1e-9, "dU's first columns")
    assert_close(dvt[..., :k, :], dvt_k, 1e-6, 1e-9, "dVt's first rows")
    for q, dq in ((u, du), (np.swapaxes(vt, -1, -2), np.swapaxes(dvt, -1, -2))):
        rotation = np.swapaxes(q, -1, -2) @ dq
        scale = 1e-10 * max(1.0, np.abs(dq).max())
        assert_close(rotation + np.swapaxes(rotation, -1, -2), np.zeros(rotation.shape), 0.0, scale, "Q.T dQ")


@pytest.mark.parametrize("a", [TALL, TALL.T, rand_array(29, (2, 4, 3))])
def test_reduced_svd(a):
    assert_tangent(reduced_svd, a)


def lstsq(a, b):
    return np.linalg.lstsq(a, b, rcond=None)


def lstsq_of_data(b):
    return np.linalg.lstsq(TALL, b, rcond=None)


def test_lstsq():
    """Residuals given or not (a wide matrix), several right-hand sides, a constant matrix."""
    assert_tangent(lstsq, TALL.T, rand_array(31, (3, 2)))
    assert_tangent(lstsq, TALL, rand_array(31, (4, 2)))
    assert_tangent(lstsq_of_data, rand_array(32, (4,)))


# ====================================================================== Hessians: the tangent code differentiated


def log_det(a):
    return np.linalg.slogdet(a)[1] + np.log(np.linalg.det(a))


def gaussian_loglik(a):
    chol = np.linalg.cholesky(a @ a.T + np.eye(3))
    z = np.linalg.solve(chol, np.arange(3.0))
    return -0.5 * np.sum(z * z) - np.sum(np.log(np.einsum("ii->i", chol)))


def gaussian_loglik_scipy(a):
    factor = sla.cho_factor(a @ a.T + np.eye(3))
    x = sla.cho_solve(factor, np.arange(3.0))
    return np.sum(x) + np.sum(sla.cholesky(a @ a.T + np.eye(3), lower=True) ** 2 * _B)


def eigen(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w**3) + np.sum(v[:, 0] ** 2 * w[0]) + np.sum(np.linalg.eigvalsh(a) ** 3)


def singular(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s**3) + u[0, 0] * vt[1, 1] + np.sum(np.linalg.svd(a, compute_uv=False) ** 2)


def singular_full(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(u[:, :3] ** 3) + np.sum(s**3) + np.sum(vt**3)


def factors(a):
    q, r = np.linalg.qr(a)
    x, res, rank, sv = np.linalg.lstsq(a, np.arange(4.0), rcond=None)
    return np.sum(q**3) + np.sum(r**3) + np.sum(np.linalg.pinv(a) ** 3) + np.sum(x**3) + np.sum(res) + np.sum(sv**3)


def inverses(a):
    return (
        np.sum(np.linalg.inv(a) ** 3)
        + np.sum(np.linalg.matrix_power(a, -2) ** 2)
        + np.sum(sla.inv(a, assume_a="pos") ** 3)
        + np.sum(sla.solve(a, np.arange(3.0), assume_a="sym") ** 3)
        + np.sum(np.linalg.solve(a, a[:, 0] ** 2) ** 3)
    )


def products(a):
    return (
        np.sum(np.kron(a, a) ** 2)
        + np.sum(np.inner(a, a)) ** 2
        + np.vdot(a, a) ** 2
        + np.sum(np.cross(a, a[0]) ** 2)
        + np.sum(np.tensordot(a, a, axes=1) ** 2)
        + np.einsum("ij,jk,ki->", a, a, a) ** 2
    )


@pytest.mark.parametrize(
    ("f", "x"),
    [
        (log_det, SPD),
        (gaussian_loglik, _B),
        (gaussian_loglik_scipy, _B),
        (eigen, SPD),
        (singular, TALL),
        (singular_full, SPD),
        (factors, TALL),
        (inverses, SPD),
        (products, SPD),
    ],
)
def test_second_derivatives(f, x):
    """Reverse mode over the tangent code (a Hessian-vector product) against finite differences of the gradient,
    and forward mode over it (<u, H v>) against that."""
    assert_hvp(f, x)

    def tangent(y, v):
        return chad.jvp(f, (y,), (v,))[1]

    rng = np.random.default_rng(2)
    u, v = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    _, second = chad.jvp(tangent, (x, v), (u, np.zeros(x.shape)))
    assert_close(float(second), inner(u, chad.hvp(f, (x,), (v,))), 1e-9, 1e-9, f"<u, H v> of {f.__name__}")
