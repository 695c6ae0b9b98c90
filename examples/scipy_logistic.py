"""chadpy with SciPy: a logistic regression whose loss reads module-level data, minimised by
scipy.optimize.minimize with chadpy's gradient as the jacobian (needs SciPy: pip install scipy)."""

import numpy as np
import scipy.optimize

import chadpy as chad

# the data: module-level names, read by the loss (never copied into its derivative)
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3))
true_w = np.array([1.5, -2.0, 0.5])
y = (X @ true_w + 0.5 * rng.normal(size=200) > 0).astype(float)


def loss(w):
    """Mean negative log-likelihood, with a small L2 penalty."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) + 0.001 * np.sum(w * w)


w0 = np.zeros(3)
fitted = scipy.optimize.minimize(loss, w0, jac=chad.grad(loss), method="BFGS")
by_differences = scipy.optimize.minimize(loss, w0, method="BFGS")  # SciPy's finite-difference jacobian

print("with chadpy's gradient:", fitted.x, f"loss {fitted.fun:.6f}, {fitted.njev} gradient calls")
print(
    "with finite differences:", by_differences.x, f"loss {by_differences.fun:.6f}, {by_differences.nfev} calls of loss"
)
assert fitted.success and abs(fitted.fun - by_differences.fun) < 1e-6
assert np.linalg.norm(chad.grad(loss)(fitted.x)) < 1e-5

# the data change: the next gradient reads them as they are now
y[:] = 1.0 - y
print("gradient at the fit, labels flipped:", chad.grad(loss)(fitted.x))
