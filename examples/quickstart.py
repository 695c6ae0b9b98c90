"""chadpy quickstart: a gradient, checked, and the derivative chadpy wrote for it."""

import math

import numpy as np

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


# Loops, lists and NumPy: a least-squares loss over a list of (x, y) pairs,
# gradient with respect to an array of weights.
def loss(w, data):
    total = 0.0
    for x, y in data:
        pred = np.dot(w, x)
        total = total + (pred - y) ** 2
    return total / len(data)


w = np.array([0.5, -1.0])
data = [(np.array([1.0, 2.0]), 0.5), (np.array([-1.0, 0.5]), 1.0)]
g = chad.grad(loss)(w, data)
# closed form: 2/n * sum (w.x - y) x
expected = sum(2.0 * (np.dot(w, x) - y) * x for x, y in data) / len(data)
print("\nloss gradient    =", g, " closed form:", expected)
assert np.allclose(g, expected)
