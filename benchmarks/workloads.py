"""The workloads of the speed issue, each with a hand-written gradient.

Every primal is plain Python over the module globals `np` and `math`, so that the
peers can run the same source with those names bound to their own modules
(`peers.py`). Each hand-written gradient is what a careful person writes: a
reverse pass by hand in the primal's own style (a loop for a loop, NumPy for NumPy),
returning what `chad.grad(fn, argnums)` returns.

A workload is a dict: name, fn, grad, args(size) with size "small" or "large",
argnums, and loop (the primal is a Python loop: JAX-jit unrolls it).
"""

from __future__ import annotations

import math

import numpy as np

# --- a scalar loop: `s += sin(x*i)*x` ---------------------------------------------


def scalar_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i) * x
    return s


def scalar_loop_grad(x, n):
    g = 0.0
    for i in range(n):
        g = g + math.cos(x * i) * i * x + math.sin(x * i)
    return g


def scalar_loop_args(size):
    return (0.3, 400 if size == "small" else 4000)


# --- an indexing loop over an array: `s += a[i]*a[i]*w` ----------------------------


def index_loop(a, w):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i] * a[i] * w
    return s


def index_loop_grad(a, w):
    ga = np.zeros(len(a))
    gw = 0.0
    for i in range(len(a)):
        ga[i] = 2.0 * a[i] * w
        gw = gw + a[i] * a[i]
    return ga, gw


def index_loop_args(size):
    n = 400 if size == "small" else 4000
    return (np.random.default_rng(1).uniform(-1.0, 1.0, n), 0.7)


# --- Horner's rule over a list of coefficients --------------------------------------


def horner(coeffs, x):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def horner_grad(coeffs, x):
    ys = [0.0]
    for c in coeffs:
        ys.append(ys[-1] * x + c)
    gc = [0.0] * len(coeffs)
    gx = 0.0
    gy = 1.0
    for k in range(len(coeffs) - 1, -1, -1):
        gc[k] = gy
        gx = gx + gy * ys[k]
        gy = gy * x
    return gc, gx


def horner_args(size):
    n = 400 if size == "small" else 4000
    coeffs = [float(c) for c in np.random.default_rng(2).uniform(-1.0, 1.0, n)]
    return (coeffs, 0.999)


# --- Rosenbrock's function as a loop and vectorised ----------------------------------


def rosenbrock_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosenbrock_loop_grad(x):
    g = np.zeros(len(x))
    for i in range(len(x) - 1):
        r = x[i + 1] - x[i] ** 2
        g[i] = g[i] - 400.0 * r * x[i] - 2.0 * (1.0 - x[i])
        g[i + 1] = g[i + 1] + 200.0 * r
    return g


def rosenbrock_loop_args(size):
    n = 400 if size == "small" else 4000
    return (np.random.default_rng(3).uniform(-1.0, 1.0, n),)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_grad(x):
    r = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * r * x[:-1] - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * r
    return g


def rosenbrock_args(size):
    n = 10_000 if size == "small" else 100_000
    return (np.random.default_rng(4).uniform(-1.0, 1.0, n),)


# --- a two-layer perceptron, mean squared error --------------------------------------


def mlp(W1, b1, W2, b2, X, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def mlp_grad(W1, b1, W2, b2, X, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    d_out = 2.0 * (out - y) / out.size
    d_pre = (d_out @ W2.T) * (1.0 - h * h)
    return X.T @ d_pre, np.sum(d_pre, axis=0), h.T @ d_out, np.sum(d_out, axis=0)


def mlp_args(size):
    rng = np.random.default_rng(5)
    batch = 256 if size == "small" else 2048
    X = rng.standard_normal((batch, 64))
    y = rng.standard_normal((batch, 10))
    W1, b1 = rng.standard_normal((64, 128)) * 0.1, np.zeros(128)
    W2, b2 = rng.standard_normal((128, 10)) * 0.1, np.zeros(10)
    return (W1, b1, W2, b2, X, y)


# --- an Elman recurrent network, the sum of its squared states -----------------------


def rnn(W, U, b, xs, h0):
    h = h0
    loss = 0.0
    for t in range(len(xs)):
        h = np.tanh(W @ h + U @ xs[t] + b)
        loss = loss + np.sum(h * h)
    return loss


def rnn_grad(W, U, b, xs, h0):
    hs = [h0]
    for t in range(len(xs)):
        hs.append(np.tanh(W @ hs[-1] + U @ xs[t] + b))
    H = np.array(hs)
    d_pre = np.zeros((len(xs), len(b)))
    dh = np.zeros(len(b))
    for t in range(len(xs) - 1, -1, -1):
        h = H[t + 1]
        dh = dh + 2.0 * h
        d_pre[t] = dh * (1.0 - h * h)
        dh = W.T @ d_pre[t]
    return d_pre.T @ H[:-1], d_pre.T @ xs, np.sum(d_pre, axis=0)


def rnn_args(size):
    rng = np.random.default_rng(6)
    steps = 40 if size == "small" else 200
    W = rng.standard_normal((64, 64)) * 0.1
    U = rng.standard_normal((64, 16)) * 0.1
    return (W, U, np.zeros(64), rng.standard_normal((steps, 16)), np.zeros(64))


WORKLOADS = [
    dict(
        name="scalar loop, n=4000", fn=scalar_loop, grad=scalar_loop_grad, args=scalar_loop_args, argnums=0, loop=True
    ),
    dict(
        name="index loop, n=4000", fn=index_loop, grad=index_loop_grad, args=index_loop_args, argnums=(0, 1), loop=True
    ),
    dict(name="Horner over a list, n=4000", fn=horner, grad=horner_grad, args=horner_args, argnums=(0, 1), loop=True),
    dict(
        name="Rosenbrock loop, n=4000",
        fn=rosenbrock_loop,
        grad=rosenbrock_loop_grad,
        args=rosenbrock_loop_args,
        argnums=0,
        loop=True,
    ),
    dict(name="Rosenbrock, n=1e5", fn=rosenbrock, grad=rosenbrock_grad, args=rosenbrock_args, argnums=0, loop=False),
    dict(name="MLP, batch 2048", fn=mlp, grad=mlp_grad, args=mlp_args, argnums=(0, 1, 2, 3), loop=False),
    dict(name="RNN, T=200", fn=rnn, grad=rnn_grad, args=rnn_args, argnums=(0, 1, 2), loop=True),
]
