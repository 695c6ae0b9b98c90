"""Programs whose forward-mode code calls each helper of `rules/tangents.py` (module-level: chadpy reads them)."""

from __future__ import annotations

import math

import numpy as np

import chadpy as chad

SHIFTS = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def attempted(x):
    """An attempt's result taken apart where it completed (`part_or_none`)."""
    try:
        y = math.sqrt(x)
    except ValueError:
        y = 0.0
    return y * x


def gradient_inside(x):
    """An array's gradient taken inside differentiated code (`from_parts`): sum(3 x^3)."""
    g = chad.grad(lambda v: np.sum(v**3))(x)
    return np.sum(g * x)


def hypotenuse(x, y):
    """`safe_divisor` and `where_nonzero` in hypot's tangent."""
    return np.sum(np.hypot(x, y))


def shifted(x):
    """A number's tangent given an array's shape (`broadcast_like`)."""
    return np.sum((x + SHIFTS) ** 2)


def roots(x):
    """sqrt at 0 with a zero tangent there: exactly 0, not 0 * inf (`strong_zero`)."""
    return np.sum(np.sqrt(x))


def keyed(a, b):
    """`dict(pairs)`'s tangent under the pairs' keys (`rekeyed`)."""
    d = dict(zip(["a", "b"], [a * b, a + b]))
    return d["a"] * d["b"]


def filled(x):
    """`d['a'][1] = x` into a part that had no tangent (`filled_at`)."""
    d = {"a": np.zeros(3), "c": [x, 2.0]}
    d["a"][1] = x * x
    return np.sum(d["a"]) * d["c"][0]
