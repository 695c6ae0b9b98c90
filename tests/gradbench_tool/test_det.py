"""The `det` eval through the protocol: the determinant by minors and its gradient, the
cofactor matrix, both row-major as GradBench passes them."""

import itertools

import det
import numpy as np
import pytest
from protocol import evaluate

from tests.support import fd


def run(function: str, A: np.ndarray) -> object:
    ell = len(A)
    return evaluate(det.FUNCTIONS[function], {"A": A.ravel().tolist(), "ell": ell, "min_runs": 1, "min_seconds": 0})[
        "output"
    ]


def cofactors(A: np.ndarray) -> np.ndarray:
    """C[i, j] = (-1)^(i+j) det(A without row i and column j): d det(A) / d A[i, j]."""
    ell = len(A)
    C = np.ones((ell, ell))
    for i, j in itertools.product(range(ell), repeat=2):
        M = np.delete(np.delete(A, i, axis=0), j, axis=1)
        C[i, j] = (-1) ** (i + j) * (np.linalg.det(M) if ell > 1 else 1.0)
    return C


@pytest.mark.parametrize("ell", [1, 2, 3, 4, 5, 6])
def test_primal_is_the_determinant(ell):
    A = fd.rand_array(ell, (ell, ell))
    out = run("primal", A)
    assert type(out) is float
    assert out == pytest.approx(np.linalg.det(A), rel=1e-10, abs=1e-13)


def test_primal_of_known_matrices():
    assert run("primal", np.array([[1.0, 2.0], [3.0, 4.0]])) == -2.0
    assert run("primal", np.diag([2.0, 3.0, 5.0, 7.0])) == 210.0
    assert run("primal", np.eye(5)[[1, 0, 2, 3, 4]]) == -1.0  # a transposition
    assert run("primal", np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [5.0, 7.0, 9.0]])) == 0.0


@pytest.mark.parametrize("ell", [1, 2, 3, 4, 5, 6])
def test_gradient_is_the_cofactor_matrix(ell):
    A = fd.rand_array(10 + ell, (ell, ell))
    out = run("gradient", A)
    assert type(out) is list and len(out) == ell * ell and all(type(v) is float for v in out)
    np.testing.assert_allclose(np.reshape(out, (ell, ell)), cofactors(A), rtol=1e-10, atol=1e-13)


def test_gradient_is_row_major():
    A = np.array([[1.0, 2.0], [3.0, 4.0]])  # det = a d - b c: gradient (d, -c, -b, a)
    assert run("gradient", A) == [4.0, -3.0, -2.0, 1.0]


def test_gradient_is_det_times_inverse_transpose():
    A = fd.rand_array(20, (5, 5)) + 2 * np.eye(5)
    np.testing.assert_allclose(
        np.reshape(run("gradient", A), (5, 5)), np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-10
    )


def test_gradient_matches_finite_differences():
    A = fd.rand_array(21, (4, 4))
    expected = fd.central_diff(det.det, (A,), 0)
    np.testing.assert_allclose(np.reshape(run("gradient", A), (4, 4)), expected, rtol=1e-7, atol=1e-9)
