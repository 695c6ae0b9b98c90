"""Everyday practitioner code: argument checks, asserts, try/except, logging strings, dicts of
parameters, comprehensions, functools.reduce, closures, the math module and NumPy idioms."""

from __future__ import annotations

import functools
import logging
import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

from tests.corpus.registry import Call, corpus

logger = logging.getLogger("tests.corpus.practitioner")
MESSAGES: list = []


@corpus(lambda rng: (rng.standard_normal((5, 3)), rng.standard_normal(3), "l2"))
def regularized_loss(X, w, penalty="l2"):
    """Argument validation: `raise ValueError` for an unknown option and for a shape mismatch (not taken)."""
    if X.shape[1] != w.shape[0]:
        raise ValueError("X has {} features but w has {}".format(X.shape[1], w.shape[0]))  # noqa: UP032
    if penalty == "l2":
        reg = 0.5 * np.dot(w, w)
    elif penalty == "l1":
        reg = np.sum(np.abs(w))
    else:
        raise ValueError(f"unknown penalty {penalty!r}")
    return np.mean(np.log1p(np.exp(X @ w))) + 0.1 * reg


@corpus(lambda rng: (rng.uniform(0.1, 1.0, 6),))
def normalized_entropy(p):
    """`assert p.ndim == 1, "..."` and an eps from np.finfo(float).eps guarding the log."""
    assert p.ndim == 1, "expected a 1-d array of weights"
    assert np.all(p >= 0), "weights must be non-negative"
    eps = np.finfo(float).eps
    q = p / (p.sum() + eps)
    return -np.sum(q * np.log(q + eps)) / np.log(len(q))


@corpus(lambda rng: (rng.standard_normal(8), (rng.random(8) < 0.5).astype(int)))
def class_balanced_bce(logits, labels):
    """A class-balanced weight computed in `try: ... except ZeroDivisionError:` from integer counts."""
    n_pos = int(labels.sum())
    n_neg = len(labels) - n_pos
    try:
        pos_weight = n_neg / n_pos
    except ZeroDivisionError:
        pos_weight = 1.0
    log_p = -np.logaddexp(0.0, -logits)
    log_not_p = -np.logaddexp(0.0, logits)
    return -np.mean(pos_weight * labels * log_p + (1 - labels) * log_not_p)


@corpus(lambda rng: (rng.standard_normal((6, 4)), rng.standard_normal((4, 2)) * 0.5), argnums=(0, 1))
def dropout_mlp(X, W):
    """Inverted dropout with a generator made inside, np.random.default_rng(0), for a reproducible mask."""
    rng = np.random.default_rng(0)
    keep = 0.8
    H = np.tanh(X @ W)
    mask = (rng.random(H.shape) < keep) / keep
    H = H * mask
    return np.sum(H**2)


@corpus(lambda rng: (rng.standard_normal(3), rng.standard_normal((10, 3)), rng.standard_normal(10)))
def logged_training_loss(w, X, y):
    """str.format for a progress message kept in a module-level list, and a logger.debug call."""
    pred = X @ w
    loss = np.mean((pred - y) ** 2)
    msg = "step {:d}: loss = {:.4f}, |w| = {:.3f}".format(0, loss, np.linalg.norm(w))  # noqa: UP032
    MESSAGES.append(msg)
    logger.debug("loss %s", msg)
    return loss


@corpus(lambda rng: (rng.standard_normal(3), rng.standard_normal((10, 3)), rng.standard_normal(10)))
def logger_with_value(w, X, y):
    """`logger.debug("loss %.4f", loss)`: the value itself handed to the logging call."""
    loss = np.mean((X @ w - y) ** 2)
    logger.debug("loss %.4f", loss)
    return loss


@corpus(lambda rng: (rng.standard_normal(3), rng.standard_normal((10, 3)), rng.standard_normal(10), False))
def verbose_fit_objective(w, X, y, verbose=False):
    """`if verbose: print(...)` (not taken) and an f-string in a message built anyway."""
    r = X @ w - y
    loss = 0.5 * r @ r / len(y)
    status = f"loss={loss:.3e}"
    if verbose:
        print(status)
    return loss


def _params(rng):
    params = {"w1": rng.standard_normal((3, 4)), "b1": np.zeros(4), "w2": rng.standard_normal(4), "b2": 0.1}
    return params, rng.standard_normal((5, 3)), rng.standard_normal(5)


@corpus(_params)
def params_dict_l2(params, X, y):
    """A dict of parameters: weight decay over `params.items()` for the keys starting with "w"."""
    h = np.maximum(X @ params["w1"] + params["b1"], 0.0)
    pred = h @ params["w2"] + params["b2"]
    data = np.mean((pred - y) ** 2)
    decay = sum(np.sum(v**2) for k, v in params.items() if k.startswith("w"))
    return data + 1e-2 * decay


@corpus(lambda rng: (np.array([0.5, -0.3, 0.2, 0.05]), rng.uniform(-1, 1, 7), rng.standard_normal(7)))
def polynomial_features_fit(coef, x, y):
    """Polynomial regression: features from a list comprehension, np.stack, a least-squares loss."""
    degree = len(coef)
    feats = [x**k for k in range(degree)]
    Phi = np.stack(feats, axis=1)
    return np.sum((Phi @ coef - y) ** 2) / len(y)


@corpus(lambda rng: ([rng.standard_normal((2, 2)) * 0.7 + np.eye(2) for _ in range(4)],))
def reduce_matrix_chain(mats):
    """functools.reduce(np.dot, mats): the product of a list of matrices, its Frobenius norm squared."""
    prod = functools.reduce(np.dot, mats)
    return np.sum(prod**2)


@corpus(lambda rng: ([float(v) for v in rng.uniform(0.5, 2.0, 5)],))
def reduce_lambda_product(xs):
    """functools.reduce with a lambda and an initial value, over a list of Python floats."""
    return math.log(functools.reduce(lambda acc, v: acc * (1.0 + v), xs, 1.0))


@corpus(lambda rng: Call(make_ridge_loss(rng.standard_normal((6, 3)), rng.standard_normal(6), 0.1), (np.zeros(3),)))
def make_ridge_loss(X, y, alpha):
    """A factory returning a closure over X, y, alpha, the loss one hands to an optimiser."""

    def loss(w):
        resid = X @ w - y
        return 0.5 * np.mean(resid**2) + 0.5 * alpha * w @ w

    return loss


@corpus(lambda rng: ([float(v) for v in rng.uniform(0.1, 0.9, 5)], 2.0))
def math_module_logistic(xs, temperature):
    """Pure-Python math over a list: math.exp, math.log, math.fsum, a generator expression."""
    exps = [math.exp(x / temperature) for x in xs]
    total = math.fsum(exps)
    return math.log(total) - sum(math.log1p(x) for x in xs) / len(xs)


@corpus(lambda rng: (np.array([-1.3, -0.4, 0.3, 0.9, 2.1]) + 0.01 * rng.random(5),))
def leaky_relu_where(x):
    """np.where(x > 0, x, alpha * x), a leaky ReLU, then a smooth reduction."""
    alpha = 0.01
    y = np.where(x > 0, x, alpha * x)
    return np.sum(np.sin(y) * y)


@corpus(
    lambda rng: (rng.standard_normal(4), rng.standard_normal((4, 4)), rng.standard_normal((3, 4))), argnums=(0, 1, 2)
)
def einsum_bilinear(x, A, B):
    """np.einsum for a quadratic form and a batched matrix-vector product, with @ beside it."""
    quad = np.einsum("i,ij,j->", x, A, x)
    batch = np.einsum("bi,ij->bj", B, A)
    return quad + np.sum(batch @ x) / 10.0


@corpus(lambda rng: (rng.standard_normal((5, 3)) + 2.0,))
def row_norms_softmin(X):
    """np.linalg.norm with axis=1 and a scipy.special.logsumexp soft-minimum of the row norms."""
    norms = np.linalg.norm(X, axis=1)
    return -logsumexp(-norms)


@corpus(lambda rng: (np.array([0.3, -0.2]), 0.8, rng.normal(0.2, 0.8, 12)), argnums=(0, 1))
def student_mixture_scipy(locs, log_scale, data):
    """A two-component mixture with scipy.stats.norm.logpdf and logsumexp over components."""
    scale = np.exp(log_scale)
    comp = np.stack([norm.logpdf(data, loc=m, scale=scale) for m in locs])
    return np.sum(logsumexp(comp, axis=0) - np.log(2.0))


@corpus(lambda rng: (rng.uniform(0.05, 0.95, 6), np.array([1, 0, 1, 1, 0, 0])))
def clipped_log_loss(p, y):
    """np.clip of predicted probabilities before the log (values inside the clip range)."""
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


@dataclass
class Config:
    lr: float = 0.1
    weight_decay: float = 1e-3
    huber_delta: float = 1.0


@corpus(lambda rng: (rng.standard_normal(4), rng.standard_normal((6, 4)), rng.standard_normal(6) * 3, Config()))
def config_dataclass_loss(w, X, y, cfg):
    """Hyperparameters from a @dataclass config object passed as data."""
    r = X @ w - y
    absr = np.abs(r)
    hub = np.where(absr < cfg.huber_delta, 0.5 * r**2, cfg.huber_delta * (absr - 0.5 * cfg.huber_delta))
    return hub.mean() + cfg.weight_decay * np.sum(w**2)


@corpus(lambda rng: (rng.standard_normal(5),))
def tolist_python_loop(x):
    """x.tolist() and a plain Python loop over the floats, as code moving data to pure Python does."""
    total = 0.0
    for i, v in enumerate(x.tolist()):
        total += (i + 1) * v * v
    return total


@corpus(lambda rng: (rng.standard_normal(6),))
def vectorize_softplus(x):
    """np.vectorize of a scalar math function, applied to the differentiated array."""
    softplus = np.vectorize(lambda v: math.log1p(math.exp(v)))
    return float(np.sum(softplus(x)))


@corpus(lambda rng: (rng.standard_normal((4, 3)) + 1.0,))
def apply_along_axis_norms(X):
    """np.apply_along_axis(np.linalg.norm, 1, X), row norms the roundabout way."""
    norms = np.apply_along_axis(np.linalg.norm, 1, X)
    return np.sum(norms**2) + norms.max()


@corpus(lambda rng: (rng.uniform(1.0, 2.0, 4),))
def early_stopping_newton(a):
    """A fixed-point loop with a tolerance test and `break`: Newton's iteration for sqrt(a), then a sum."""
    x = np.ones_like(a)
    for _ in range(50):
        x_new = 0.5 * (x + a / x)
        if np.max(np.abs(x_new - x)) < 1e-13:
            break
        x = x_new
    return np.sum(x_new * np.arange(1, len(a) + 1))


@corpus(lambda rng: (np.array([0.9, -0.2, 1.7, 0.4, -1.1, 2.5, 0.1]),))
def top_k_mean(x):
    """np.sort and a negative slice: the mean of the k largest values, plus a sorted-order weighting."""
    k = 3
    s = np.sort(x)
    return s[-k:].mean() + np.sum(s * np.linspace(0.0, 1.0, len(s)))


@corpus(lambda rng: (rng.standard_normal((3, 4)),))
def ellipsis_and_newaxis(x):
    """Indexing with `...` and None: a pairwise difference over the last axis, then a softplus."""
    d = x[..., :, None] - x[..., None, :]
    return np.sum(np.logaddexp(0.0, d)) / x.shape[0]


@corpus(lambda rng: (rng.standard_normal(5), 3))
def asarray_atleast_1d(x, n_terms):
    """Input coercion: np.asarray(x, dtype=float), np.atleast_1d, a dict-dispatched activation."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    activations = {"tanh": np.tanh, "sin": np.sin}
    act = activations["tanh"]
    terms = [act(x / (k + 1)) for k in range(n_terms)]
    return float(np.sum(sum(terms) ** 2))


@functools.lru_cache(maxsize=None)  # noqa: UP033
def binomial_weights(n):
    return tuple(math.comb(n, k) / 2**n for k in range(n + 1))


@corpus(lambda rng: (rng.standard_normal(5),))
def lru_cached_weights(x):
    """Binomial smoothing weights from a functools.lru_cache'd helper, applied to the differentiated x."""
    w = np.array(binomial_weights(len(x) - 1))
    return float(np.dot(w, x**2))


@corpus(lambda rng: (rng.standard_normal(4), rng.standard_normal((5, 4))))
def map_and_zip(w, rows):
    """`sum(map(...))` over a zip of rows and a range, with a lambda."""
    return sum(map(lambda r, i: (r @ w - i) ** 2, rows, range(len(rows)))) / len(rows)


relu = lambda z: np.maximum(z, 0.0)
sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))


@corpus(lambda rng: (rng.standard_normal((3, 4)), rng.standard_normal((5, 3)), np.array([0, 1, 1, 0, 1])))
def module_level_lambdas(W, X, y):
    """Activations defined as module-level lambdas (`relu = lambda z: ...`), a binary cross-entropy."""
    h = relu(X @ W)
    p = sigmoid(h.sum(axis=1) - 1.0)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


mse = lambda a, b: np.mean((a - b) ** 2)
l2 = lambda w: np.sum(w**2)


@corpus(lambda rng: (rng.standard_normal(3), rng.standard_normal((8, 3)), rng.standard_normal(8)))
def lambda_helpers_in_expression(w, X, y):
    """Loss helpers defined as module-level lambdas and called inside the returned expression."""
    return mse(X @ w, y) + 1e-2 * l2(w)


@corpus(lambda rng: (rng.standard_normal(3), rng.standard_normal((10, 3)), rng.standard_normal(10), 3))
def logger_info_preformatted(w, X, y, epoch):
    """logger.info of a message already formatted with str.format from the loss."""
    loss = np.mean((X @ w - y) ** 2) + 0.01 * np.sum(w**2)
    logger.info("epoch {:3d}  loss {:.5f}  max|w| {:.3f}".format(epoch, loss, np.abs(w).max()))  # noqa: UP032
    return loss


@corpus(lambda rng: (rng.standard_normal(5), np.array([0.0, 3.0, 7.0, 0.0, 12.0])))
def errstate_kl_zero_bins(logits, counts):
    """`with np.errstate(divide="ignore", invalid="ignore"):` around KL(p || q) with empty histogram bins."""
    p = counts / counts.sum()
    q = np.exp(logits - logsumexp(logits))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / q), 0.0)
    return terms.sum()


Params = namedtuple("Params", ["weights", "bias", "log_scale"])


@corpus(lambda rng: (Params(rng.standard_normal(3), 0.2, -0.5), rng.standard_normal((6, 3)), rng.standard_normal(6)))
def namedtuple_params(params, X, y):
    """Parameters in a namedtuple, read by field name; the gradient is a Params too."""
    mu = X @ params.weights + params.bias
    scale = np.exp(params.log_scale)
    return np.sum(0.5 * ((y - mu) / scale) ** 2 + params.log_scale)


class PositiveScale:
    """A model exposing a constrained parameter through @property, stored unconstrained."""

    def __init__(self, log_scale, shift):
        self.log_scale = log_scale
        self.shift = shift

    @property
    def scale(self):
        return np.exp(self.log_scale)

    @corpus(lambda rng: (PositiveScale(np.array([0.1, -0.3]), 0.5), rng.standard_normal((4, 2))))
    def nll(self, data):
        """A @property turning log_scale into scale, differentiated in the object (log_scale and shift)."""
        z = (data - self.shift) / self.scale
        return np.sum(0.5 * z**2 + np.log(self.scale))
