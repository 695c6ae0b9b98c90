"""The functions whose derivatives `test_golden.py` keeps as golden files (tests/golden/<case>.py).

Their source lines appear in the generated comments (`# line 12: ...`): add new cases at the
end, so the existing goldens keep their line numbers.
"""

from __future__ import annotations

import math

import numpy as np


def scalar(x, y):
    z = x * y + math.sin(x)
    return z / y


def loop_with_if(x, scale):
    s = 0.0
    for i in range(3):
        if x > i:
            s = s + scale * math.sin(x) ** 2
    return s


def mlp(W1, b1, W2, x):
    h = np.tanh(W1 @ x + b1)
    y = W2 @ h
    return np.sum(y * y)


def list_append(x, n):
    ys = []
    for i in range(n):
        ys.append(x * i)
    return sum(ys)


def closure(x, a):
    g = lambda t: a * t * t
    return g(x) + g(2.0)


def early_return(x):
    for i in range(5):
        if x > 3.0:
            return x * i
        x = x * 1.5
    return x


def dictionary(x, y):
    d = {"a": x, "b": y * y}
    s = 0.0
    for k in d:
        s = s + d[k] * d["a"]
    return s


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def sorted_squares(xs):
    return sum([v * v for v in sorted(xs)])


def while_loop(x):
    y = x
    while y < 10.0:
        y = y * 2.0 + x
    return y


def builtin_names(x, y):
    total = sum([x, y])
    pow = x**y
    return abs(total) + pow + max(x, y)


# case name -> (function, example arguments, which arguments are differentiated)
CASES = {
    "scalar": (scalar, (0.7, 1.3), (0, 1)),
    "loop_with_if": (loop_with_if, (1.3, 2.0), (0, 1)),
    "mlp": (
        mlp,
        (
            np.linspace(-1.0, 1.0, 12).reshape(4, 3),
            np.linspace(0.1, 0.4, 4),
            np.linspace(1.0, -1.0, 8).reshape(2, 4),
            np.array([0.5, -0.2, 0.3]),
        ),
        (0, 1, 2),
    ),
    "list_append": (list_append, (0.7, 4), 0),
    "closure": (closure, (0.7, 1.3), (0, 1)),
    "early_return": (early_return, (1.1,), 0),
    "dictionary": (dictionary, (0.7, 1.3), (0, 1)),
    "power": (power, (1.3, 3), 0),
    "sorted_squares": (sorted_squares, ([0.3, -1.2, 0.7],), 0),
    "while_loop": (while_loop, (0.7,), 0),
    "builtin_names": (builtin_names, (0.7, 1.3), (0, 1)),
}
