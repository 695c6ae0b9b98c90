"""GradBench's `det` eval (cmpad's det_by_minor): the determinant by expansion in minors and
its gradient, the gradient from chadpy.

det M = sum_j (-1)^j M[0, j] det M_0j, where M_0j is M without its first row and column j,
recursively down to 1 x 1 minors: O(ell!) operations, which is the point of the eval.
"""

from __future__ import annotations

import numpy as np
from protocol import Function

import chadpy as chad


def det(A: np.ndarray) -> float:
    """The determinant of the square matrix A, each minor expanded along its first row."""

    def minor(i, cols):  # the determinant of the rows i, i+1, ... of A and the columns cols
        if len(cols) == 1:
            return A[i, cols[0]]
        total = 0.0
        sign = 1.0
        for j in range(len(cols)):
            total = total + sign * A[i, cols[j]] * minor(i + 1, cols[:j] + cols[j + 1 :])
            sign = -sign
        return total

    return minor(0, list(range(len(A))))


gradient = chad.grad(det)  # d det(A) / d A, an (ell, ell) array


def prepare(input: dict) -> tuple[np.ndarray]:
    """The eval's `{"A": [...row-major...], "ell": ell}` as an (ell, ell) float64 array."""
    ell = int(input["ell"])
    return (np.array(input["A"], dtype=np.float64).reshape(ell, ell),)


FUNCTIONS = {
    "primal": Function(det, prepare=prepare, encode=float),
    "gradient": Function(gradient, prepare=prepare, encode=lambda g: g.ravel().tolist()),
}
