"""chadpy and closures: a lambda and a nested def reading the enclosing function's variables."""

import math

import chadpy as chad


@chad.reverse
def f(x, w):
    scale = lambda t: w * math.sin(t)  # captures w

    def poly(t):  # captures x and scale
        return scale(t) + x * t * t

    return poly(x)


print("f(0.5, 3.0)      =", f(0.5, 3.0))
dx, dw = f.grad(0.5, 3.0)
print("f.grad(0.5, 3.0) =", (dx, dw))

# the closed form, for comparison: f = w sin(x) + x**3
print("closed form      =", (3.0 * math.cos(0.5) + 3 * 0.5**2, math.sin(0.5)))
assert abs(dx - (3.0 * math.cos(0.5) + 3 * 0.5**2)) < 1e-12 and abs(dw - math.sin(0.5)) < 1e-12

print("\nThe derivative chadpy generated (simplified form):\n")
print(f.source)
