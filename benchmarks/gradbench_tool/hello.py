"""GradBench's `hello` eval: `square` is x², `double` its derivative, from chadpy."""

from __future__ import annotations

from protocol import Function

import chadpy as chad


def square(x):
    return x * x


FUNCTIONS = {
    "square": Function(square, prepare=lambda x: (float(x),)),
    "double": Function(chad.grad(square), prepare=lambda x: (float(x),)),
}
