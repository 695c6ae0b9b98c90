"""GradBench's `particle` eval: the control w that makes a charged particle, accelerated by two fixed
charges at (10, 10 - w) and (10, 0), hit the origin, by gradient descent on w.

Each step of the particle's Euler integration takes the gradient of the electric potential in the
position (the inner derivative); the descent on w takes the derivative of the whole integration in w
(the outer one), so the outer derivative differentiates code that takes a derivative itself. `ff`, `fr`,
`rf` and `rr` name the outer mode, then the inner one: f is forward mode (`chad.jvp`, one per input
coordinate), r reverse mode (`chad.grad`).
"""

from __future__ import annotations

import math

from descent import argmin
from protocol import Function

import chadpy as chad

DT = 0.1  # Euler's time step


def potential(x, w):
    """The electric potential at the position x = (x0, x1) of the unit charges at (10, 10 - w) and (10, 0)."""
    x0, x1 = x
    return 1.0 / math.sqrt((x0 - 10.0) ** 2 + (x1 - (10.0 - w)) ** 2) + 1.0 / math.sqrt((x0 - 10.0) ** 2 + x1**2)


def force_forward(x, w):
    """The force -∇ₓp at x, by forward mode: one jvp per coordinate."""
    _, dp0 = chad.jvp(potential, (x, w), ((1.0, 0.0), 0.0))
    _, dp1 = chad.jvp(potential, (x, w), ((0.0, 1.0), 0.0))
    return -dp0, -dp1


potential_gradient = chad.grad(potential)  # ∇ₓp, a pair, made once


def force_reverse(x, w):
    """The force -∇ₓp at x, by reverse mode."""
    dp0, dp1 = potential_gradient(x, w)
    return -dp0, -dp1


def miss(w, force):
    """x0(t_f)²: the squared distance from the origin at which the particle, starting at (0, 8) with velocity
    (0.75, 0) and mass 1, crosses the x axis (Euler steps of DT until it would cross, then a straight line)."""
    x0, x1 = 0.0, 8.0
    v0, v1 = 0.75, 0.0
    while True:
        x0_next, x1_next = x0 + DT * v0, x1 + DT * v1
        if x1_next <= 0.0:
            break
        a0, a1 = force((x0, x1), w)  # unit mass and charge: the acceleration
        x0, x1 = x0_next, x1_next
        v0, v1 = v0 + DT * a0, v1 + DT * a1
    t_f = -x1 / v1  # the time left until the line through the last position crosses the x axis
    return (x0 + t_f * v0) ** 2


def miss_forward(w):
    """`miss` with the inner derivative in forward mode."""
    return miss(w, force_forward)


def miss_reverse(w):
    """`miss` with the inner derivative in reverse mode."""
    return miss(w, force_reverse)


def forward(f):
    """w -> (f(w), f'(w)) by forward mode: the jvp along 1.0."""
    return lambda w: chad.jvp(f, (w,), (1.0,))


# the outer derivatives, made once: of the whole integration in w, which takes the inner derivatives
VALUE_AND_DERIVATIVE = {
    "ff": forward(miss_forward),
    "fr": forward(miss_reverse),
    "rf": chad.value_and_grad(miss_forward),
    "rr": chad.value_and_grad(miss_reverse),
}


def optimise(mode):
    """The function of GradBench's variant `mode` (outer mode, inner mode): the w gradient descent finds from w0."""
    value_and_derivative = VALUE_AND_DERIVATIVE[mode]
    return lambda w0: argmin(value_and_derivative, w0)


FUNCTIONS = {
    mode: Function(optimise(mode), prepare=lambda input: (float(input["w"]),), encode=float)
    for mode in VALUE_AND_DERIVATIVE
}
