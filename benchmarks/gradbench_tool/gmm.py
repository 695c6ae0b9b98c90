"""GradBench's `gmm` eval: the log posterior of a Gaussian mixture with a Wishart prior on its
precision matrices (`objective`), and its gradient in alpha, mu, q and l (`jacobian`, from chadpy).

Component k has weight softmax(alpha)_k, mean mu_k and precision matrix Q_k^T Q_k, where Q_k is
lower triangular with diagonal exp(q_k) and l_k below it, filled column by column (as the eval's
README and its C++ reference `Qtimesx` read them).
"""

from __future__ import annotations

import math

import numpy as np
from protocol import Function

import chadpy as chad


def logsumexp(v, axis):
    """log(sum(exp(v), axis)), the maximum taken out first so that nothing overflows."""
    top = np.max(v, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(v - top), axis=axis)) + np.squeeze(top, axis=axis)


def log_multigamma(a, p):
    """log Γ_p(a), the logarithm of the multivariate gamma function."""
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(math.lgamma(a - 0.5 * j) for j in range(p))


def objective(alpha, mu, q, lower, x, gamma, m):
    """log p(x | alpha, mu, q, lower) + log p(q, lower): alpha (k,), mu and q (k, d), lower (k, d(d-1)/2)
    (the eval's `l`), the points x (n, d); Wishart prior with V = I / gamma² and n = d + m + 1 degrees
    of freedom."""
    n, d = x.shape
    k = len(alpha)
    # Q[c] is lower triangular: exp(q[c]) on the diagonal, lower[c] below it column by column.
    cols, rows = np.triu_indices(d, 1)
    diagonal = np.arange(d)
    Q = np.zeros((k, d, d))
    Q[:, diagonal, diagonal] = np.exp(q)
    Q[:, rows, cols] = lower
    centred = x[None, :, :] - mu[:, None, :]  # (k, n, d): every point minus every mean
    Qx = centred @ np.swapaxes(Q, 1, 2)  # (k, n, d): Q[c] @ (x[i] - mu[c])
    sum_q = np.sum(q, axis=1)  # log det Q[c]
    beta = alpha[:, None] + sum_q[:, None] - 0.5 * np.sum(Qx * Qx, axis=2)  # (k, n)
    log_likelihood = (
        np.sum(logsumexp(beta, axis=0)) - n * logsumexp(alpha, axis=0) - 0.5 * n * d * math.log(2 * math.pi)
    )
    dof = d + m + 1
    log_wishart_constant = dof * d * math.log(gamma / math.sqrt(2)) - log_multigamma(0.5 * dof, d)
    log_prior = k * log_wishart_constant - 0.5 * gamma * gamma * np.sum(Q * Q) + m * np.sum(sum_q)
    return log_likelihood + log_prior


def prepare(input):
    """The eval's input as objective's arguments."""
    arrays = (np.asarray(input[name], dtype=np.float64) for name in ("alpha", "mu", "q", "l", "x"))
    return (*arrays, float(input["gamma"]), int(input["m"]))


gradient = chad.grad(objective, argnums=(0, 1, 2, 3))


def encode_gradient(grads):
    """The gradient as the eval's `Independent`: lists of floats, one row per component."""
    return dict(zip(("alpha", "mu", "q", "l"), (g.tolist() for g in grads)))


FUNCTIONS = {
    "objective": Function(objective, prepare=prepare, encode=float),
    "jacobian": Function(gradient, prepare=prepare, encode=encode_gradient),
}
