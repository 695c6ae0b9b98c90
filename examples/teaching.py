"""The function docs/teaching.md differentiates at each stage of the paper.

python -m chadpy show examples/teaching.py:f --stage naive
python -m chadpy cost examples/teaching.py:f 1.5 2.0 --stage all
"""

import math

import numpy as np


def f(x, y):
    z = x * y
    w = math.sin(z)
    return w + x


def fill(x, w):
    """A buffer filled element by element (docs/teaching.md, "Writes in place")."""
    out = np.zeros(x.shape[0])
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * w + x[i]
    return np.sum(out * x)
