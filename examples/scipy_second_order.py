"""chadpy's forward mode and second derivatives with SciPy (needs SciPy: pip install scipy):

1. a Newton method, `minimize(method="trust-ncg")`, given chadpy's gradient and Hessian-vector product;
2. `least_squares` given chadpy's Jacobian of the residuals;
3. a stiff ODE, `solve_ivp(method="BDF")`, given chadpy's Jacobian of the right-hand side.

Each is solved again with derivatives written by hand, and the two answers agree.
"""

import numpy as np
import scipy.integrate
import scipy.optimize

import chadpy as chad

# ---------------------------------------------------------------- 1. Newton-CG on the Rosenbrock function


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def hessp(x, p):
    """H(x) p by reverse mode over forward mode: a few evaluations of rosenbrock, no Hessian formed."""
    return chad.hvp(rosenbrock, (x,), (p,))


x0 = np.array([-1.2, 1.0, -0.5, 0.8, 1.3])
tight = {"gtol": 1e-10}
newton = scipy.optimize.minimize(
    rosenbrock, x0, jac=chad.grad(rosenbrock), hessp=hessp, method="trust-ncg", options=tight
)
by_hand = scipy.optimize.minimize(
    rosenbrock, x0, jac=scipy.optimize.rosen_der, hessp=scipy.optimize.rosen_hess_prod, method="trust-ncg", options=tight
)
print(f"trust-ncg: {newton.nit} iterations, x = {np.round(newton.x, 6)} (by hand: {by_hand.nit} iterations)")
assert newton.success and np.allclose(newton.x, 1.0) and np.allclose(newton.x, by_hand.x, atol=1e-8)

# ---------------------------------------------------------------- 2. least squares: a decay fitted to data

times = np.linspace(0.0, 4.0, 30)
rng = np.random.default_rng(0)
observed = 3.0 * np.exp(-0.7 * times) + 0.5 + 0.02 * rng.normal(size=times.size)


def residuals(params):
    amplitude, rate, offset = params[0], params[1], params[2]
    return amplitude * np.exp(-rate * times) + offset - observed


def residuals_jacobian_by_hand(params):
    amplitude, rate = params[0], params[1]
    e = np.exp(-rate * times)
    return np.stack([e, -amplitude * times * e, np.ones_like(times)], axis=1)


fit = scipy.optimize.least_squares(residuals, np.array([1.0, 1.0, 0.0]), jac=chad.jacobian(residuals))
fit_by_hand = scipy.optimize.least_squares(residuals, np.array([1.0, 1.0, 0.0]), jac=residuals_jacobian_by_hand)
print(f"least_squares: amplitude, rate, offset = {np.round(fit.x, 4)} in {fit.njev} Jacobians")
assert fit.success and np.allclose(fit.x, fit_by_hand.x, rtol=1e-8)
assert np.allclose(chad.jacobian(residuals)(fit.x), residuals_jacobian_by_hand(fit.x), rtol=1e-12)

# ---------------------------------------------------------------- 3. a stiff ODE: Robertson's chemical kinetics


def robertson(t, y):
    a, b, c = y[0], y[1], y[2]
    return np.array([-0.04 * a + 1e4 * b * c, 0.04 * a - 1e4 * b * c - 3e7 * b * b, 3e7 * b * b])


def robertson_jacobian_by_hand(t, y):
    a, b, c = y
    return np.array([[-0.04, 1e4 * c, 1e4 * b], [0.04, -1e4 * c - 6e7 * b, -1e4 * b], [0.0, 6e7 * b, 0.0]])


jacobian = chad.jacfwd(robertson, argnums=1)  # forward mode: one pass per state variable
y0 = np.array([1.0, 0.0, 0.0])
stiff = scipy.integrate.solve_ivp(robertson, (0.0, 40.0), y0, method="BDF", jac=jacobian, rtol=1e-8, atol=1e-10)
stiff_by_hand = scipy.integrate.solve_ivp(
    robertson, (0.0, 40.0), y0, method="BDF", jac=robertson_jacobian_by_hand, rtol=1e-8, atol=1e-10
)
print(f"solve_ivp BDF: y(40) = {stiff.y[:, -1]} after {stiff.njev} Jacobians")
assert stiff.success and np.allclose(stiff.y[:, -1], stiff_by_hand.y[:, -1], rtol=1e-9, atol=1e-12)
assert np.allclose(jacobian(1.0, np.array([0.9, 1e-5, 0.1])), robertson_jacobian_by_hand(1.0, [0.9, 1e-5, 0.1]))
