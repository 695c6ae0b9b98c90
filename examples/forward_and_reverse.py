"""CHAD's two halves for one function: the forward derivative pairs each value with a tangent, the linear map of
the derivative applied to the input's tangent; the reverse derivative pairs it with a backpropagator, that map's
transpose applied to the output's cotangent. Run it: `python examples/forward_and_reverse.py`."""

import math

import chadpy as chad


def f(x, y):
    z = x * y
    w = math.sin(z)
    return w + x


forward = chad.source(f, 1.5, 2.0, mode="forward")
reverse = chad.source(f, 1.5, 2.0)

if __name__ == "__main__":
    print("# forward mode: chad.jvp runs this (tangents dx, dy in, the tangent of f out)\n")
    print(forward)
    print("# reverse mode: chad.grad runs this (the cotangent d in, those of x and y out)\n")
    print(reverse)
    value, tangent = chad.jvp(f, (1.5, 2.0), (1.0, 0.0))
    gradient = chad.grad(f, argnums=(0, 1))(1.5, 2.0)
    print(f"jvp along x: {tangent:.6f}; the gradient's x part: {gradient[0]:.6f} (the same number)")
