"""Six GradBench evals in plain NumPy, each with a hand-written gradient.

lse, llsq, gmm, lstm, ode and det follow the definitions of the GradBench suite
(github.com/gradbench/gradbench: `evals/<name>/README.md`, the C++ reference in
`cpp/gradbench/evals/<name>.hpp`, and for gmm and lstm the ADBench objectives in
`python/gradbench/gradbench/tools/pytorch/`), written the way a scientist writes
them in NumPy: vectorised where GradBench's Python references are (lse, llsq,
gmm), a loop where the computation is one (lstm over time steps and layers, ode
over Runge-Kutta steps, det recursing over minors).

As in `workloads.py`, every primal uses only the module globals `np` and `math`,
so that `peers.py` can run the same source with them bound to autograd, JAX or
torch; each `<name>_grad` is a reverse pass written by hand and returns what
`chad.grad(<name>, argnums)` returns; `<name>_args(size)` builds seeded inputs,
"small" for the quick run and "large" at GradBench-like sizes.
"""

from __future__ import annotations

import math

import numpy as np

# --- lse: LogSumExp of a vector, the max subtracted first (GradBench evals/lse, lse.hpp) ---


def lse(x):
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


def lse_grad(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def lse_args(size):
    n = 1000 if size == "small" else 1_000_000
    return (np.random.default_rng(10).random(n),)


# --- llsq: a polynomial in t fitted to sign(t) (GradBench evals/llsq, llsq.hpp; cmpad llsq_obj) ---


def llsq(x, n):
    """0.5 * sum_i (sign(t_i) - sum_j x_j t_i**j)**2 at n points t_i evenly spaced in [-1, 1]."""
    t = np.arange(n, dtype=np.float64) * (2.0 / (n - 1)) - 1.0
    powers = t[:, None] ** np.arange(len(x))
    r = np.sign(t) - powers @ x
    return 0.5 * np.sum(r * r)


def llsq_grad(x, n):
    t = np.arange(n) * (2.0 / (n - 1)) - 1.0
    powers = t[:, None] ** np.arange(len(x))
    r = np.sign(t) - powers @ x
    return -(r @ powers)


def llsq_args(size):
    n, m = (256, 16) if size == "small" else (4096, 128)
    return (np.random.default_rng(11).random(m), n)


# --- gmm: log posterior of a Gaussian mixture (GradBench evals/gmm, tools/pytorch/gmm_objective.py) ---


def gmm(alpha, mu, q, ltri, x, gamma, m):
    """Log posterior of the points x (n, d) under k components: weights softmax(alpha),
    means mu (k, d) and precisions Q_k^T Q_k, where Q_k is lower triangular with
    diagonal exp(q_k) and ltri_k (d(d-1)/2 numbers) below it, filled column by column;
    Wishart prior with precision gamma and m extra degrees of freedom."""
    n, d = x.shape
    k = len(alpha)
    columns = []
    start = 0
    for c in range(d):
        below = ltri[:, start : start + d - 1 - c]
        columns.append(np.concatenate((np.zeros((k, c)), np.exp(q[:, c : c + 1]), below), axis=1))
        start += d - 1 - c
    Q = np.stack(columns, axis=2)  # (k, d, d)
    xc = x[None, :, :] - mu[:, None, :]  # (k, n, d): the points centred on each mean
    Qxc = xc @ np.swapaxes(Q, 1, 2)
    beta = alpha[:, None] + np.sum(q, axis=1)[:, None] - 0.5 * np.sum(Qxc * Qxc, axis=2)  # (k, n)
    bmax = np.max(beta, axis=0)
    slse = np.sum(np.log(np.sum(np.exp(beta - bmax), axis=0)) + bmax)
    amax = np.max(alpha)
    lse_alpha = amax + np.log(np.sum(np.exp(alpha - amax)))
    likelihood = slse - n * lse_alpha - 0.5 * n * d * math.log(2 * math.pi)
    dof = d + m + 1
    log_multigamma = 0.25 * d * (d - 1) * math.log(math.pi) + sum(math.lgamma(0.5 * (dof - j)) for j in range(d))
    log_norm = dof * d * math.log(gamma / math.sqrt(2)) - log_multigamma
    prior = k * log_norm - 0.5 * gamma * gamma * np.sum(Q * Q) + m * np.sum(q)
    return likelihood + prior


def gmm_grad(alpha, mu, q, ltri, x, gamma, m):
    n, d = x.shape
    k = len(alpha)
    cols, rows = np.triu_indices(d, 1)  # ltri fills the strict lower triangle column by column
    Qdiag = np.exp(q)
    Q = np.zeros((k, d, d))
    Q[:, np.arange(d), np.arange(d)] = Qdiag
    Q[:, rows, cols] = ltri
    xc = x[None, :, :] - mu[:, None, :]  # (k, n, d)
    Qxc = xc @ Q.transpose(0, 2, 1)
    beta = alpha[:, None] + np.sum(q, axis=1)[:, None] - 0.5 * np.sum(Qxc * Qxc, axis=2)  # (k, n)
    w = np.exp(beta - np.max(beta, axis=0))
    w /= np.sum(w, axis=0)  # d slse / d beta: the responsibilities
    wsum = np.sum(w, axis=1)
    e_alpha = np.exp(alpha - np.max(alpha))
    d_alpha = wsum - n * e_alpha / np.sum(e_alpha)
    dQxc = -w[:, :, None] * Qxc  # (k, n, d)
    dQ = dQxc.transpose(0, 2, 1) @ xc - gamma * gamma * Q  # (k, d, d)
    d_xc = dQxc @ Q  # (k, n, d)
    d_mu = -np.sum(d_xc, axis=1)
    d_q = dQ[:, np.arange(d), np.arange(d)] * Qdiag + (wsum + m)[:, None]
    d_ltri = dQ[:, rows, cols]
    return d_alpha, d_mu, d_q, d_ltri


def gmm_args(size):
    d, k, n = (4, 5, 100) if size == "small" else (20, 25, 1000)
    rng = np.random.default_rng(12)
    x = rng.normal(size=(n, d))
    alpha = rng.normal(size=k)
    mu = rng.uniform(size=(k, d))
    q = rng.normal(size=(k, d))
    ltri = rng.normal(size=(k, d * (d - 1) // 2))
    return (alpha, mu, q, ltri, x, 1.0, 0)


# --- lstm: ADBench's diagonal LSTM (GradBench evals/lstm, lstm.hpp, tools/pytorch/lstm_objective.py) ---


def lstm(main_params, extra_params, state, sequence):
    """main_params (2 layers, 4b): per layer a row of weights and a row of biases for the
    forget, input, output and change gates; extra_params (3, b): input weight, output
    weight, output bias; state (2 layers, b): per layer hidden and cell; sequence (c, b).
    Predicts each row of the sequence (characters as bits) from the one before it."""
    b = sequence.shape[1]
    n_layers = len(main_params) // 2
    hidden = [state[2 * i] for i in range(n_layers)]
    cell = [state[2 * i + 1] for i in range(n_layers)]
    total = 0.0
    for t in range(len(sequence) - 1):
        x = sequence[t] * extra_params[0]
        for i in range(n_layers):
            gates = np.concatenate((x, hidden[i], x, hidden[i])) * main_params[2 * i] + main_params[2 * i + 1]
            sig = 1.0 / (1.0 + np.exp(-gates[: 3 * b]))  # forget, input and output gates
            change = np.tanh(gates[3 * b :])
            cell[i] = cell[i] * sig[:b] + sig[b : 2 * b] * change
            hidden[i] = sig[2 * b :] * np.tanh(cell[i])
            x = hidden[i]
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2.0)  # ADBench's logsumexp adds 2
        total = total + np.sum(sequence[t + 1] * ynorm)
    return -total / ((len(sequence) - 1) * b)


def lstm_grad(main_params, extra_params, state, sequence):
    b = sequence.shape[1]
    n_layers = len(main_params) // 2
    steps = len(sequence) - 1
    w_in, w_out, b_out = extra_params
    hidden = [state[2 * i] for i in range(n_layers)]
    cell = [state[2 * i + 1] for i in range(n_layers)]
    tape = []  # per step and layer: (inputs to the gates, old cell, sig, change, tanh(new cell))
    tops = []
    for t in range(steps):
        x = sequence[t] * w_in
        for i in range(n_layers):
            inputs = np.concatenate((x, hidden[i], x, hidden[i]))
            gates = inputs * main_params[2 * i] + main_params[2 * i + 1]
            sig = 1.0 / (1.0 + np.exp(-gates[: 3 * b]))
            change = np.tanh(gates[3 * b :])
            c_old = cell[i]
            cell[i] = c_old * sig[:b] + sig[b : 2 * b] * change
            tc = np.tanh(cell[i])
            tape.append((inputs, c_old, sig, change, tc))
            hidden[i] = sig[2 * b :] * tc
            x = hidden[i]
        tops.append(x)
    d_main = np.zeros_like(main_params)
    d_w_in, d_w_out, d_b_out = np.zeros(b), np.zeros(b), np.zeros(b)
    d_hidden = [np.zeros(b) for _ in range(n_layers)]
    d_cell = [np.zeros(b) for _ in range(n_layers)]
    scale = -1.0 / (steps * b)
    d_gates = np.empty(4 * b)
    for t in range(steps - 1, -1, -1):
        top = tops[t]
        ypred = top * w_out + b_out
        e = np.exp(ypred)
        d_ynorm = scale * sequence[t + 1]
        d_ypred = d_ynorm - np.sum(d_ynorm) * e / (np.sum(e) + 2.0)
        d_w_out += d_ypred * top
        d_b_out += d_ypred
        dx = d_ypred * w_out
        for i in range(n_layers - 1, -1, -1):
            inputs, c_old, sig, change, tc = tape[t * n_layers + i]
            dh = d_hidden[i] + dx
            dc = d_cell[i] + dh * sig[2 * b :] * (1.0 - tc * tc)
            d_sig = np.concatenate((dc * c_old, dc * change, dh * tc))
            d_gates[: 3 * b] = d_sig * sig * (1.0 - sig)
            d_gates[3 * b :] = dc * sig[b : 2 * b] * (1.0 - change * change)
            d_main[2 * i] += d_gates * inputs
            d_main[2 * i + 1] += d_gates
            d_inputs = d_gates * main_params[2 * i]
            d_cell[i] = dc * sig[:b]
            d_hidden[i] = d_inputs[b : 2 * b] + d_inputs[3 * b :]
            dx = d_inputs[:b] + d_inputs[2 * b : 3 * b]
        d_w_in += dx * sequence[t]
    return d_main, np.array([d_w_in, d_w_out, d_b_out])


def lstm_args(size):
    layers, c = (2, 8) if size == "small" else (2, 1024)
    b = 14  # bits per character in GradBench's (ADBench's) text
    rng = np.random.default_rng(13)
    main_params = rng.random((2 * layers, 4 * b))
    extra_params = rng.random((3, b))
    state = rng.random((2 * layers, b))
    sequence = rng.integers(0, 2, size=(c, b)).astype(np.float64)  # random bits, not text
    return (main_params, extra_params, state, sequence)


# --- ode: RK4 for y0' = x0, yi' = xi * y(i-1), y(0) = 0 (GradBench evals/ode, ode.hpp; cmpad an_ode) ---


def ode(x, s):
    """The sum of y(2) after s RK4 steps. GradBench's ode returns all of y(2) and differentiates
    its last element, but each step moves information only four places down y, so where
    n > 4s (all of GradBench's sizes) that element and its gradient are exactly 0: the sum
    keeps every element's gradient."""
    h = 2.0 / s

    def f(y):
        return np.concatenate((x[:1], x[1:] * y[:-1]))

    y = np.zeros(len(x))
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(y)


def ode_grad(x, s):
    h = 2.0 / s
    n = len(x)
    states = np.empty((s, 4, n))  # the four states f is applied to in each step
    y = np.zeros(n)
    for step in range(s):
        states[step, 0] = y
        k1 = np.concatenate((x[:1], x[1:] * y[:-1]))
        z = states[step, 1] = y + h / 2 * k1
        k2 = np.concatenate((x[:1], x[1:] * z[:-1]))
        z = states[step, 2] = y + h / 2 * k2
        k3 = np.concatenate((x[:1], x[1:] * z[:-1]))
        z = states[step, 3] = y + h * k3
        k4 = np.concatenate((x[:1], x[1:] * z[:-1]))
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    dks = np.empty((s, 4, n))  # the cotangents of k1 .. k4 in each step
    dy = np.ones(n)
    for step in range(s - 1, -1, -1):
        w = h / 6 * dy  # dy: the cotangent of this step's result
        dk = w
        for stage, coef, weight in ((3, h, 2.0), (2, h / 2, 2.0), (1, h / 2, 1.0)):
            dks[step, stage] = dk
            dz = dk[1:] * x[1:]  # the cotangent of states[step, stage, :-1]
            dy[:-1] += dz
            dk = weight * w
            dk[:-1] += coef * dz
        dks[step, 0] = dk
        dy[:-1] += dk[1:] * x[1:]
    dx = np.empty(n)
    dx[0] = np.sum(dks[:, :, 0])
    dx[1:] = np.sum(dks[:, :, 1:] * states[:, :, :-1], axis=(0, 1))
    return dx


def ode_args(size):
    n, s = (32, 10) if size == "small" else (1000, 100)
    return (np.random.default_rng(14).random(n), s)


# --- det: the determinant by expansion in minors (GradBench evals/det, det.hpp; cmpad det_by_minor) ---


def det(A):
    """The determinant of the square matrix A (GradBench passes it flat, row by row),
    each minor expanded along its first row."""

    def minor(i, cols):  # the determinant of rows i, i+1, ... and the columns cols
        if len(cols) == 1:
            return A[i, cols[0]]
        total = 0.0
        sign = 1.0
        for j in range(len(cols)):
            total = total + sign * A[i, cols[j]] * minor(i + 1, cols[:j] + cols[j + 1 :])
            sign = -sign
        return total

    return minor(0, list(range(len(A))))


def det_grad(A):
    n = len(A)
    a = A.tolist()
    G = [[0.0] * n for _ in range(n)]

    def minor(i, cols, adjoint):
        """The minor's determinant; adds adjoint * d(minor)/dA into G. A minor is linear in
        each of its rows, so a sub-minor's adjoint is known before the sub-minor is computed."""
        if len(cols) == 1:
            G[i][cols[0]] += adjoint
            return a[i][cols[0]]
        total = 0.0
        sign = 1.0
        for j, c in enumerate(cols):
            sub = minor(i + 1, cols[:j] + cols[j + 1 :], adjoint * sign * a[i][c])
            G[i][c] += adjoint * sign * sub
            total += sign * a[i][c] * sub
            sign = -sign
        return total

    minor(0, list(range(n)), 1.0)
    return np.array(G)


def det_args(size):
    ell = 5 if size == "small" else 7
    return (np.random.default_rng(15).random((ell, ell)),)


WORKLOADS = [
    dict(name="GradBench lse, n=1e6", fn=lse, grad=lse_grad, args=lse_args, argnums=0, loop=False),
    dict(name="GradBench llsq, n=4096, m=128", fn=llsq, grad=llsq_grad, args=llsq_args, argnums=0, loop=False),
    dict(
        name="GradBench gmm, d=20, k=25, n=1000",
        fn=gmm,
        grad=gmm_grad,
        args=gmm_args,
        argnums=(0, 1, 2, 3),
        loop=False,
    ),
    dict(name="GradBench lstm, l=2, c=1024", fn=lstm, grad=lstm_grad, args=lstm_args, argnums=(0, 1), loop=True),
    dict(name="GradBench ode, n=1000, s=100", fn=ode, grad=ode_grad, args=ode_args, argnums=0, loop=True),
    dict(name="GradBench det, ell=7", fn=det, grad=det_grad, args=det_args, argnums=0, loop=True),
]
