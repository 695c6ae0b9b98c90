"""GradBench's `saddle` eval: the saddle point of f(x, y) = |x|² - |y|² on 2-vectors, by nested gradient
descent: x = argmin_x max_y f(x, y), then y = argmax_y f(x, y), each descent from the input's start.

The inner ascent (max_y) runs inside the function the outer descent differentiates, so the outer
derivative differentiates through the inner solver and the inner derivatives it takes. `ff`, `fr`, `rf`
and `rr` name the outer mode, then the inner one: f is forward mode (`chad.jvp`, one per coordinate),
r reverse mode (`chad.value_and_grad`). The final ascent in y uses the outer mode.
"""

from __future__ import annotations

import functools

import numpy as np
from descent import argmax, argmin
from protocol import Function

import chadpy as chad


def objective(x, y):
    """f(x, y) = |x|² - |y|²: GradBench's objective(x1, y1, x2, y2) = (x1² + y1²) - (x2² + y2²) as its
    reference tools call it, with x's coordinates first (x = (x1, y1), y = (x2, y2)); 0 at the saddle point."""
    return (x[0] ** 2 + x[1] ** 2) - (y[0] ** 2 + y[1] ** 2)


def value_and_gradient_forward(f, x):
    """(f(x), ∇f(x)) at the 2-vector x by forward mode: one jvp per coordinate."""
    fx, d0 = chad.jvp(f, (x,), (np.array([1.0, 0.0]),))
    _, d1 = chad.jvp(f, (x,), (np.array([0.0, 1.0]),))
    return fx, np.array([d0, d1])


def value_and_gradient_reverse(f, x):
    """(f(x), ∇f(x)) at x by reverse mode."""
    return chad.value_and_grad(f)(x)


def max_over_y(x, start, value_and_gradient):
    """max_y f(x, y), by gradient ascent from start, the gradients in y by `value_and_gradient` (the inner
    derivative: forward or reverse mode)."""

    def cost(y):
        return objective(x, y)

    y = argmax(lambda y: value_and_gradient(cost, y), start)
    return objective(x, y)


def saddle(start, outer, inner):
    """The saddle point (x, y) found from start, with the outer derivatives by `outer` and the inner ones by
    `inner` (each `value_and_gradient_forward` or `value_and_gradient_reverse`)."""
    max_f = functools.partial(max_over_y, start=start, value_and_gradient=inner)
    x = argmin(lambda x: outer(max_f, x), start)
    y = argmax(lambda y: outer(functools.partial(objective, x), y), start)
    return x, y


MODES = {"f": value_and_gradient_forward, "r": value_and_gradient_reverse}


def variant(mode):
    """The function of GradBench's variant `mode` (outer mode, inner mode)."""
    outer, inner = MODES[mode[0]], MODES[mode[1]]
    return lambda start: saddle(start, outer, inner)


def prepare(input):
    """The start as a float64 2-vector."""
    return (np.array(input["start"], dtype=np.float64),)


def encode(output):
    """x and y concatenated, as four floats."""
    x, y = output
    return [float(v) for v in (*x, *y)]


FUNCTIONS = {mode: Function(variant(mode), prepare=prepare, encode=encode) for mode in ("ff", "fr", "rf", "rr")}
