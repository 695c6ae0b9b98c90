"""chadpy quickstart: a gradient, checked, and the derivative chadpy wrote for it."""

import math

import chadpy as chad


@chad.reverse
def f(x, y):
    z = x * y
    if z > 1.0:
        w = math.sin(z)
    else:
        w = z * z
    return w + x


print("f(1.5, 2.0)      =", f(1.5, 2.0))
dx, dy = f.grad(1.5, 2.0)
print("f.grad(1.5, 2.0) =", (dx, dy))

# the closed form, for comparison: z = x*y > 1, so f = sin(xy) + x
cz = math.cos(1.5 * 2.0)
print("closed form      =", (2.0 * cz + 1.0, 1.5 * cz))
assert abs(dx - (2.0 * cz + 1.0)) < 1e-12 and abs(dy - 1.5 * cz) < 1e-12

print("\nThe derivative chadpy generated (simplified form):\n")
print(f.source)
