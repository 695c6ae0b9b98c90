"""The function docs/teaching.md differentiates at each stage of the paper.

python -m chadpy show examples/teaching.py:f --stage naive
python -m chadpy cost examples/teaching.py:f 1.5 2.0 --stage all
"""

import math


def f(x, y):
    z = x * y
    w = math.sin(z)
    return w + x
