"""Losses and layers as numpy-ml and the CS231n assignments write them (no convolutions)."""

from __future__ import annotations

import numpy as np

from tests.corpus.registry import Call, corpus


def _classification(rng, n=6, d=5, c=4, scale=0.5):
    W = scale * rng.standard_normal((d, c))
    X = rng.standard_normal((n, d))
    y = rng.integers(0, c, size=n)
    return W, X, y


@corpus(lambda rng: (*_classification(rng), 0.1))
def softmax_loss_naive(W, X, y, reg):
    """CS231n softmax.py: the loop version, one example at a time, with the max shift."""
    loss = 0.0
    num_train = X.shape[0]
    num_classes = W.shape[1]
    for i in range(num_train):
        scores = X[i].dot(W)
        scores -= np.max(scores)
        correct_class_score = scores[y[i]]
        denom = 0.0
        for j in range(num_classes):
            denom += np.exp(scores[j])
        loss += -correct_class_score + np.log(denom)
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


@corpus(lambda rng: (*_classification(rng), 0.05))
def softmax_loss_vectorized(W, X, y, reg):
    """CS231n softmax.py: the vectorised version with keepdims and fancy indexing of the labels."""
    num_train = X.shape[0]
    scores = X.dot(W)
    scores -= scores.max(axis=1, keepdims=True)
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    correct_logprobs = -np.log(probs[np.arange(num_train), y])
    loss = np.sum(correct_logprobs) / num_train
    loss += 0.5 * reg * np.sum(W * W)
    return loss


def _svm_data(rng):
    # margins well away from the hinge: scores of the correct class lifted or lowered by whole units
    W, X, y = _classification(rng, n=5, d=4, c=3, scale=0.3)
    return W, X, y, 0.01


@corpus(_svm_data)
def svm_loss_naive(W, X, y, reg):
    """CS231n linear_svm.py: the double loop with `if margin > 0`."""
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1  # note delta = 1
            if margin > 0:
                loss += margin
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


@corpus(_svm_data)
def svm_loss_vectorized(W, X, y, reg):
    """CS231n linear_svm.py: np.maximum of the margins, the correct class's zeroed by fancy indexing."""
    num_train = X.shape[0]
    scores = X @ W
    correct = scores[np.arange(num_train), y]
    margins = np.maximum(0, scores - correct[:, np.newaxis] + 1.0)
    margins[np.arange(num_train), y] = 0
    loss = margins.sum() / num_train
    return loss + reg * np.sum(W**2)


def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def relu_forward(x):
    out = np.maximum(0, x)
    cache = x
    return out, cache


def softmax_loss(x, y):
    shifted_logits = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    log_probs = shifted_logits - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


def _affine_relu_data(rng):
    x = rng.standard_normal((4, 2, 3))
    w = 0.4 * rng.standard_normal((6, 5))
    b = 0.1 * rng.standard_normal(5)
    w2 = 0.4 * rng.standard_normal((5, 3))
    y = rng.integers(0, 3, size=4)
    return x, w, b, w2, y


@corpus(_affine_relu_data, argnums=(0, 1, 2, 3))
def affine_relu_softmax(x, w, b, w2, y):
    """CS231n layers.py: forward functions returning (out, cache), a softmax_loss returning (loss, dx)."""
    h, fc_cache = affine_forward(x, w, b)
    a, relu_cache = relu_forward(h)
    scores, _ = affine_forward(a, w2, np.zeros(w2.shape[1]))
    loss, dscores = softmax_loss(scores, y)
    return loss


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
        cache = (x_hat, gamma, sample_var, eps)
    elif mode == "test":
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
        cache = None
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)  # noqa: UP031
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


def _bn_data(rng):
    x = 2.0 + rng.standard_normal((6, 3))
    gamma = 1.0 + 0.1 * rng.standard_normal(3)
    beta = 0.1 * rng.standard_normal(3)
    target = rng.standard_normal((6, 3))
    return x, gamma, beta, target, {"mode": "train"}


@corpus(_bn_data, argnums=(0, 1, 2))
def batchnorm_train_loss(x, gamma, beta, target, bn_param):
    """CS231n layers.py: batchnorm_forward in train mode, updating the running averages in bn_param."""
    out, _ = batchnorm_forward(x, gamma, beta, bn_param)
    return 0.5 * np.sum((out - target) ** 2)


@corpus(lambda rng: _bn_data(rng)[:4], argnums=(0, 1))
def layernorm_loss(x, gamma, beta, target):
    """CS231n layernorm_forward: statistics over the features, written with .T as the solution does."""
    eps = 1e-5
    xt = x.T
    mu = xt.mean(axis=0)
    var = xt.var(axis=0)
    x_hat = ((xt - mu) / np.sqrt(var + eps)).T
    out = gamma * x_hat + beta
    return np.mean((out - target) ** 2)


class TwoLayerNet:
    """CS231n neural_net.py: the parameters in self.params, loss(X, y) returning the scalar loss."""

    def __init__(self, input_size, hidden_size, output_size, std=1e-1, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {}
        self.params["W1"] = std * rng.standard_normal((input_size, hidden_size))
        self.params["b1"] = np.zeros(hidden_size) + 0.05
        self.params["W2"] = std * rng.standard_normal((hidden_size, output_size))
        self.params["b2"] = np.zeros(output_size)

    @corpus(
        lambda rng: (TwoLayerNet(4, 6, 3, std=0.5), rng.standard_normal((5, 4)), rng.integers(0, 3, 5), 0.05),
        argnums=(0, 3),
    )
    def loss(self, X, y=None, reg=0.0):
        """CS231n neural_net.py's loss, differentiated in the net (its params dict) and reg."""
        W1, b1 = self.params["W1"], self.params["b1"]
        W2, b2 = self.params["W2"], self.params["b2"]
        N, D = X.shape
        hidden = np.maximum(0, X.dot(W1) + b1)
        scores = hidden.dot(W2) + b2
        if y is None:
            return scores
        scores = scores - np.max(scores, axis=1, keepdims=True)
        softmax = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
        loss = -np.sum(np.log(softmax[range(N), list(y)])) / N
        loss += reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        return loss


def _mlp_params(rng):
    params = {
        "W1": 0.5 * rng.standard_normal((3, 5)),
        "b1": 0.1 * rng.standard_normal(5),
        "W2": 0.5 * rng.standard_normal((5, 2)),
        "b2": np.zeros(2),
    }
    return params, rng.standard_normal((4, 3)), rng.integers(0, 2, 4)


@corpus(_mlp_params)
def mlp_loss_of_params(params, X, y):
    """A functional two-layer net on a params dict, as one writes it for an optimiser over dicts."""
    h = np.tanh(X @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    nll = -log_probs[np.arange(len(y)), y].mean()
    l2 = sum(np.sum(p**2) for name, p in params.items() if name.startswith("W"))
    return nll + 1e-3 * l2


class CrossEntropy:
    """numpy-ml losses.py: a loss object with a static `loss(y, y_pred)`."""

    @corpus(lambda rng: Call(CrossEntropy(), _probs(rng)), argnums=1)
    def __call__(self, y, y_pred):
        """numpy-ml: the loss object called like a function, CrossEntropy()(y, y_pred)."""
        return self.loss(y, y_pred)

    @staticmethod
    def loss(y, y_pred):
        eps = np.finfo(float).eps
        cross_entropy = -np.sum(y * np.log(y_pred + eps))
        return cross_entropy


def _probs(rng, n=4, c=3):
    logits = rng.standard_normal((n, c))
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.eye(c)[rng.integers(0, c, n)]
    return y, p


class SquaredError:
    """numpy-ml losses.py: squared error through np.linalg.norm."""

    @staticmethod
    @corpus(lambda rng: (rng.standard_normal(5), rng.standard_normal(5)), argnums=1)
    def loss(y, y_pred):
        """numpy-ml's SquaredError.loss: half the squared 2-norm of the residual."""
        return 0.5 * np.linalg.norm(y_pred - y) ** 2


@corpus(lambda rng: (np.array([-2.5, -0.3, 0.2, 0.6, 3.1]), np.zeros(5), 1.0))
def huber_loss(y_pred, y, delta):
    """A Huber loss with np.where and np.abs, as numpy-ml's regression helpers write it."""
    r = y_pred - y
    quadratic = 0.5 * r**2
    linear = delta * (np.abs(r) - 0.5 * delta)
    return np.mean(np.where(np.abs(r) <= delta, quadratic, linear))


def _binary(rng):
    X = rng.standard_normal((6, 3))
    w = rng.standard_normal(3)
    y = np.where(rng.random(6) < 0.5, -1.0, 1.0)
    return w, X, y


@corpus(_binary)
def binary_hinge_loss(w, X, y):
    """A linear SVM's primal objective, max(0, 1 - y * Xw) plus the ridge term, mean over examples."""
    margins = y * (X @ w)
    hinge = np.maximum(0.0, 1.0 - margins)
    return hinge.mean() + 0.5 * 0.1 * w @ w


@corpus(lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal((4, 3)) * 0.5 + 0.5), argnums=(0, 1))
def kl_divergence_softmax(logits_p, logits_q):
    """A knowledge-distillation KL(p || q) between row softmaxes, with a temperature."""
    T = 2.0

    def softmax(z):
        z = z / T
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    p, q = softmax(logits_p), softmax(logits_q)
    return float(np.sum(p * (np.log(p) - np.log(q)))) * T * T


@corpus(lambda rng: (rng.standard_normal(3), rng.standard_normal((6, 3)), rng.standard_normal(6)))
def static_loss_through_class(w, X, y):
    """numpy-ml style: a loss's static method called through its class, SquaredError.loss(y, y_pred)."""
    y_pred = X @ w
    return SquaredError.loss(y, y_pred) / len(y) + 0.01 * np.sum(w**2)


@corpus(lambda rng: (0.5 * rng.standard_normal((3, 3)), rng.standard_normal((4, 3)), np.eye(3)[[0, 2, 1, 1]]))
def loss_object_made_inside(W, X, Y):
    """numpy-ml style: a loss object made inside the objective, `loss = CrossEntropy()`, then called."""
    loss = CrossEntropy()
    logits = X @ W
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return loss(Y, probs) / X.shape[0]
