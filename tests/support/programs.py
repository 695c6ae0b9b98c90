"""Example programs more than one test file differentiates (chadpy reads their source here)."""


def horner(coeffs, x):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y
