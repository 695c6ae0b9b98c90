"""Log densities as emcee's tutorials and MCMC notebooks write them: priors returning -np.inf
outside their bounds, theta unpacked into named parameters, hierarchical models."""

from __future__ import annotations

import numpy as np
import scipy.special
import scipy.stats
from scipy.special import expit, gammaln, logsumexp
from scipy.stats import norm

from tests.corpus.registry import corpus


def log_likelihood(theta, x, y, yerr):
    m, b, log_f = theta
    model = m * x + b
    sigma2 = yerr**2 + model**2 * np.exp(2 * log_f)
    return -0.5 * np.sum((y - model) ** 2 / sigma2 + np.log(sigma2))


def log_prior(theta):
    m, b, log_f = theta
    if -5.0 < m < 0.5 and 0.0 < b < 10.0 and -10.0 < log_f < 1.0:
        return 0.0
    return -np.inf


def _line(rng):
    x = np.sort(10 * rng.random(12))
    yerr = 0.1 + 0.5 * rng.random(12)
    y = -0.9594 * x + 4.294 + yerr * rng.standard_normal(12)
    return np.array([-1.0, 4.4, np.log(0.5)]), x, y, yerr


@corpus(_line)
def log_probability(theta, x, y, yerr):
    """emcee's "Fitting a model to data" tutorial: prior + likelihood, -np.inf outside the prior."""
    lp = log_prior(theta)
    if not np.isfinite(lp):
        return -np.inf
    return lp + log_likelihood(theta, x, y, yerr)


@corpus(lambda rng: (np.array([0.8, 0.7]) + 0.1 * rng.random(2),))
def rosenbrock_log_prob(p):
    """emcee's Rosenbrock example density: -(100 (y - x^2)^2 + (1 - x)^2) / 20."""
    a1 = 100.0
    a2 = 20.0
    return -(a1 * (p[1] - p[0] * p[0]) ** 2 + (1 - p[0]) ** 2) / a2


def _gauss(rng, ndim=4):
    means = rng.random(ndim)
    cov = 0.5 - rng.random((ndim, ndim))
    cov = np.triu(cov)
    cov += cov.T - np.diag(cov.diagonal())
    cov = np.dot(cov, cov) + np.eye(ndim)
    return rng.random(ndim), means, np.linalg.inv(cov)


@corpus(_gauss)
def multivariate_gaussian_log_prob(x, mu, icov):
    """emcee's quickstart: a correlated Gaussian with its inverse covariance given."""
    diff = x - mu
    return -0.5 * np.dot(diff, np.dot(icov, diff))


def _schools():
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    return y, sigma


@corpus(lambda rng: (np.concatenate([[4.0, 1.2], rng.normal(0, 1, 8)]), *_schools()))
def eight_schools_noncentered(params, y, sigma):
    """The eight-schools hierarchical model, non-centred, log density written out by hand."""
    mu, log_tau = params[0], params[1]
    eta = params[2:]
    tau = np.exp(log_tau)
    theta = mu + tau * eta
    log_lik = -0.5 * np.sum(((y - theta) / sigma) ** 2)
    log_prior_eta = -0.5 * np.sum(eta**2)
    log_prior_mu = -0.5 * (mu / 5.0) ** 2
    log_prior_tau = -np.log1p((tau / 5.0) ** 2) + log_tau  # half-Cauchy(5), with the Jacobian of exp
    return log_lik + log_prior_eta + log_prior_mu + log_prior_tau


@corpus(lambda rng: (np.concatenate([[4.0, 1.5], rng.normal(4, 2, 8)]), *_schools()))
def eight_schools_scipy(params, y, sigma):
    """The centred eight-schools model with scipy.stats.norm.logpdf and scipy.stats.halfcauchy.logpdf."""
    mu, log_tau, theta = params[0], params[1], params[2:]
    tau = np.exp(log_tau)
    lp = norm.logpdf(mu, 0.0, 5.0) + scipy.stats.halfcauchy.logpdf(tau, scale=5.0) + log_tau
    lp += np.sum(norm.logpdf(theta, loc=mu, scale=tau))
    lp += np.sum(norm.logpdf(y, loc=theta, scale=sigma))
    return lp


@corpus(lambda rng: (np.concatenate([[4.0, 1.5], rng.normal(4, 2, 8)]), *_schools()))
def eight_schools_norm_only(params, y, sigma):
    """The centred eight-schools model with scipy.stats.norm.logpdf and a hand-written half-Cauchy."""
    mu, log_tau = params[:2]
    theta = params[2:]
    tau = np.exp(log_tau)
    lp = norm.logpdf(mu, 0.0, 5.0) + np.log(2 / (np.pi * 5.0 * (1 + (tau / 5.0) ** 2))) + log_tau
    lp += norm.logpdf(theta, loc=mu, scale=tau).sum()
    lp += norm.logpdf(y, loc=theta, scale=sigma).sum()
    return lp


def _logistic(rng, n=20, d=3):
    X = np.column_stack([np.ones(n), rng.standard_normal((n, d - 1))])
    w_true = np.array([0.5, -1.0, 2.0])
    y = (rng.random(n) < expit(X @ w_true)).astype(float)
    return rng.normal(0, 0.5, d), X, y


@corpus(_logistic)
def logistic_log_likelihood(w, X, y):
    """Logistic regression's log-likelihood with np.logaddexp (stable), plus a Gaussian prior."""
    z = X @ w
    log_lik = np.sum(y * z - np.logaddexp(0.0, z))
    log_prior = -0.5 * np.sum(w**2) / 10.0
    return log_lik + log_prior


@corpus(_logistic)
def logistic_expit_clipped(w, X, y):
    """Logistic log-likelihood the naive way: expit, then np.clip away from 0 and 1, then np.log."""
    p = expit(X.dot(w))
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))


def _gmm(rng):
    x = np.concatenate([rng.normal(-2, 0.5, 8), rng.normal(1.5, 0.8, 8)])
    return np.array([-1.8, 1.4]), np.log(np.array([0.5, 0.8])), np.array([0.0, 0.0]), x


@corpus(_gmm, argnums=(0, 1, 2))
def gaussian_mixture_log_lik(means, log_sigmas, logits, x):
    """A 1-D Gaussian mixture's log-likelihood with scipy.special.logsumexp over components."""
    log_w = logits - logsumexp(logits)
    sigmas = np.exp(log_sigmas)
    log_comp = norm.logpdf(x[:, None], loc=means[None, :], scale=sigmas[None, :]) + log_w
    return np.sum(logsumexp(log_comp, axis=1))


def _poisson(rng):
    X = np.column_stack([np.ones(15), rng.uniform(-1, 1, 15)])
    y = rng.poisson(np.exp(X @ np.array([1.0, 0.5])))
    return np.array([0.9, 0.4]), X, y


@corpus(_poisson)
def poisson_regression_log_lik(beta, X, y):
    """Poisson GLM log-likelihood with the log(y!) term through scipy.special.gammaln."""
    eta = X @ beta
    return np.sum(y * eta - np.exp(eta) - gammaln(y + 1))


def _blr(rng):
    X = rng.standard_normal((10, 2))
    y = X @ np.array([1.0, -0.5]) + 0.3 * rng.standard_normal(10)
    return np.array([0.9, -0.4, np.log(0.4)]), X, y


@corpus(_blr)
def bayesian_linreg_log_post(theta, X, y):
    """Bayesian linear regression: a weights/log-noise vector, an inverse-gamma prior on the variance."""
    *w, log_sigma = theta
    w = np.asarray(w)
    sigma2 = np.exp(2 * log_sigma)
    resid = y - X @ w
    n = len(y)
    log_lik = -0.5 * n * np.log(2 * np.pi * sigma2) - 0.5 * resid @ resid / sigma2
    a, b = 2.0, 1.0
    log_prior = -(a + 1) * np.log(sigma2) - b / sigma2 + np.log(sigma2)  # + log-Jacobian
    log_prior += np.sum(scipy.stats.norm.logpdf(w, 0, 3))
    return log_lik + log_prior


@corpus(lambda rng: (np.array([0.2, -0.1, 0.3]) + 0.05 * rng.random(3),))
def funnel_log_prob(theta):
    """Neal's funnel in emcee's style: a dict of named parameters built from theta, bounds checked first."""
    if np.any(np.abs(theta) > 10):
        return -np.inf
    params = {"v": theta[0], "x": theta[1:]}
    lp = -0.5 * params["v"] ** 2 / 9.0
    lp += -0.5 * np.sum(params["x"] ** 2) * np.exp(-params["v"]) - 0.5 * len(params["x"]) * params["v"]
    return lp


@corpus(lambda rng: (rng.normal(0, 0.3, 3), rng.standard_normal((3, 2)), np.array([1, 0, 1])))
def softmax_regression_scipy(w_flat, X, y):
    """Multinomial logit with scipy.special.log_softmax, parameters reshaped from a flat vector."""
    W = np.concatenate([w_flat, [0.0]]).reshape(2, 2)
    log_p = scipy.special.log_softmax(X @ W, axis=1)
    return log_p[np.arange(len(y)), y].sum() - 0.5 * w_flat @ w_flat


@corpus(lambda rng: (np.array([0.3, np.log(1.2)]), rng.normal(0.5, 1.0, 10)))
def frozen_distribution_log_prob(theta, data):
    """Frozen SciPy distributions, norm(loc, scale).logpdf(...), as notebooks write priors and likelihoods."""
    mu, log_sigma = theta
    prior = norm(0.0, 10.0).logpdf(mu) + norm(0.0, 1.0).logpdf(log_sigma)
    return prior + norm(mu, np.exp(log_sigma)).logpdf(data).sum()


def _gp(rng, n=7):
    X = np.sort(rng.uniform(-2, 2, n))
    y = np.sin(2 * X) + 0.1 * rng.standard_normal(n)
    return np.log(np.array([0.8, 1.0, 0.1])), X, y


def rbf_kernel(X1, X2, length_scale, variance):
    sqdist = (X1[:, None] - X2[None, :]) ** 2
    return variance * np.exp(-0.5 * sqdist / length_scale**2)


@corpus(_gp)
def gp_log_marginal_likelihood(log_params, X, y):
    """A Gaussian process's log marginal likelihood through the Cholesky factor (Rasmussen & Williams 2.2)."""
    length_scale, variance, noise = np.exp(log_params)
    K = rbf_kernel(X, X, length_scale, variance) + noise**2 * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return -0.5 * y @ alpha - np.sum(np.log(np.diag(L))) - 0.5 * len(X) * np.log(2 * np.pi)


@corpus(_gp)
def gp_log_prob_try_cholesky(log_params, X, y):
    """The GP log-likelihood as samplers call it: `try: np.linalg.cholesky except LinAlgError: return -np.inf`."""
    length_scale, variance, noise = np.exp(log_params)
    K = rbf_kernel(X, X, length_scale, variance) + (noise**2 + 1e-8) * np.eye(len(X))
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        return -np.inf
    z = np.linalg.solve(L, y)
    return -0.5 * z @ z - np.log(np.diag(L)).sum()
