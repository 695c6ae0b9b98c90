"""GradBench's gradient descent, which particle's and saddle's references both use: the step eta starts at 1e-5,
doubles after 10 successful steps in a row and halves after a step that does not decrease f; the descent stops
when the gradient or the step is at most 1e-5 long. It runs on a number or a NumPy vector alike."""

from __future__ import annotations

import numpy as np


def argmin(value_and_gradient, x):
    """The minimum found from x, given x -> (f(x), ∇f(x)). (A candidate's value comes with its gradient, which the
    reference computes only once the candidate is taken: the same numbers.)"""
    fx, gx = value_and_gradient(x)
    eta, successes = 1e-5, 0
    while True:
        if np.linalg.norm(gx) <= 1e-5:
            return x
        if successes == 10:
            eta, successes = 2.0 * eta, 0
            continue
        x_next = x - eta * gx
        if np.linalg.norm(x - x_next) <= 1e-5:
            return x
        fx_next, gx_next = value_and_gradient(x_next)
        if fx_next < fx:
            x, fx, gx = x_next, fx_next, gx_next
            successes += 1
        else:
            eta, successes = eta / 2.0, 0


def argmax(value_and_gradient, x):
    """The maximum found from x: the descent on -f."""

    def negated(x):
        fx, gx = value_and_gradient(x)
        return -fx, -gx

    return argmin(negated, x)
