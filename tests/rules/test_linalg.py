"""Linear algebra and products in user code: tuple results unpacked and indexed, the choices at points
without a derivative (repeated eigenvalues, singular matrices), and the clear errors. Each rule alone is
checked against finite differences by the registry walk (tests/test_rules.py)."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from chadpy.errors import ChadError
from tests.support.fd import assert_close, assert_grad_matches_fd, assert_vjp_matches_fd, rand_array

_B = rand_array(1, (3, 3))
SPD = _B @ _B.T + np.eye(3)


def eigen_energy(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * w) + np.sum(v[:, 0] ** 2 * w[0])


def logdet_and_solve(a, b):
    sign, logdet = np.linalg.slogdet(a)
    x = np.linalg.solve(a, b)
    return logdet * sign + np.sum(x * x) + np.linalg.det(a)


def svd_parts(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s) + np.sum(((u * s) @ vt) ** 2) + u[0, 0] * vt[0, 0]


def svd_full(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(u)


def svd_full_values(a):
    return np.sum(np.linalg.svd(a)[1])


def qr_result(a):
    return np.linalg.qr(a)


def gaussian_loglik(x, a):
    chol = np.linalg.cholesky(a @ a.T + np.eye(3))
    z = np.linalg.solve(chol, x)
    return -0.5 * np.sum(z * z) - np.sum(np.log(np.einsum("ii->i", chol)))


def products(a, b):
    c = np.einsum("ij,jk", a, b) + np.tensordot(a, b, axes=1)
    return np.sum(c * c) + np.vdot(a, b.T) + np.sum(np.kron(a, b)) + np.sum(np.cross(a[:, :3], b[0]))


def test_unpacked_tuple_results():
    assert_grad_matches_fd(eigen_energy, (SPD,))
    assert_grad_matches_fd(logdet_and_solve, (SPD, rand_array(2, (3, 2))), argnums=(0, 1))
    assert_grad_matches_fd(svd_parts, (rand_array(3, (4, 3)),))
    assert_grad_matches_fd(svd_full, (SPD,))  # square: full and reduced are the same
    assert_grad_matches_fd(svd_full_values, (rand_array(4, (4, 3)),))  # U's extra columns unused
    assert_grad_matches_fd(gaussian_loglik, (rand_array(5, (3,)), rand_array(6, (3, 3))), argnums=(0, 1))
    assert_grad_matches_fd(products, (rand_array(7, (3, 4)), rand_array(8, (4, 3))), argnums=(0, 1))


def test_tuple_result_returned():
    a = rand_array(9, (4, 3))
    assert_vjp_matches_fd(qr_result, (a,), (rand_array(10, (4, 3)), rand_array(11, (3, 3))))


def test_svd_full_matrices_of_a_non_square_matrix_is_a_clear_error():
    with pytest.raises(ChadError, match="full_matrices=False"):
        chad.grad(svd_full)(rand_array(12, (4, 3)))


def test_qr_mode_other_than_reduced_is_a_clear_error():
    def f(a):
        return np.sum(np.linalg.qr(a, mode="complete")[0])

    with pytest.raises(ChadError, match="mode"):
        chad.grad(f)(rand_array(13, (4, 3)))


def eig_values_sum(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w**2) + np.sum(((v * w) @ v.T) ** 2)


def test_repeated_eigenvalues_give_the_basis_free_gradient():
    """At a repeated eigenvalue the tied pair's coupling is zero: a function of the eigenvalues and of
    the eigenspaces (not of the basis inside them) gets its exact gradient, 4 A here."""
    q = np.linalg.qr(rand_array(14, (3, 3)))[0]
    a = q @ np.diag([1.0, 1.0, 2.0]) @ q.T
    g = chad.grad(eig_values_sum)(a)
    expected = 4.0 * a
    assert_close(np.tril(g), np.tril(2 * expected) - np.diag(np.diag(expected)), 1e-6, 1e-8, "gradient")


def det_of(a):
    return np.linalg.det(a)


def test_det_of_a_singular_matrix_is_its_cofactor_matrix():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    cof = np.array([[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0], [0.0, 0.0, 0.0]])
    assert_close(chad.grad(det_of)(a), cof, 1e-9, 1e-9, "gradient")
